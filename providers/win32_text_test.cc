#include "win32_text.h"

#include <gtest/gtest.h>

namespace etwh {
namespace {

TEST(Win32Text, GuidRoundTripsAndNormalizesCase) {
  auto g = parse_guid("6A399AE0-4BC6-4DE9-870B-3657F8947E7E");
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->Data1, 0x6a399ae0u);
  EXPECT_EQ(g->Data4[7], 0x7e);
  EXPECT_EQ(format_guid(*g), "{6a399ae0-4bc6-4de9-870b-3657f8947e7e}");
  EXPECT_EQ(parse_guid(format_guid(*g)).value(), *g);
}

TEST(Win32Text, GuidRejectsMalformedText) {
  EXPECT_FALSE(parse_guid(""));
  EXPECT_FALSE(parse_guid("{6a399ae0-4bc6-4de9-870b-3657f8947e7e"));
  EXPECT_FALSE(parse_guid("6a399ae0-4bc6-4de9-870b-3657f8947e7g"));
  EXPECT_FALSE(parse_guid("6a399ae04bc6-4de9-870b-3657f8947e7e0"));
}

TEST(Win32Text, HexBoundaries) {
  EXPECT_EQ(format_hex(0), "0x0");
  EXPECT_EQ(parse_hex("0xFFFFFFFFFFFFFFFF").value(), ~0ull);
  EXPECT_FALSE(parse_hex("0x10000000000000000"));
  EXPECT_FALSE(parse_hex("0x"));
  EXPECT_FALSE(parse_hex("12"));
  EXPECT_FALSE(parse_hex("0x1g"));
}

TEST(Win32Text, BytesRoundTrip) {
  const unsigned char raw[] = {0x00, 0x7f, 0xff};
  EXPECT_EQ(bytes_to_hex(raw, 3), "007fff");
  EXPECT_EQ(hex_to_bytes("007fff").value(), (std::vector<std::uint8_t>{0, 0x7f, 0xff}));
  EXPECT_FALSE(hex_to_bytes("0"));
  EXPECT_FALSE(hex_to_bytes("zz"));
}

}  // namespace
}  // namespace etwh
