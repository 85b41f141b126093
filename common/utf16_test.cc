#include "etwh/utf16.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

using etwh::utf16::append_utf16;
using etwh::utf16::next_code_point;
using etwh::utf16::to_utf8;

// One code point of each UTF-8 length: a, é, €, 😀 (a surrogate pair in UTF-16).
const char16_t kMixed[] = u"a\u00e9\u20ac\U0001F600";
const char kMixedUtf8[] = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80";

TEST(Utf16, EachLengthOfUtf8) {
  std::string out = "left over";
  ASSERT_TRUE(to_utf8(kMixed, out));
  EXPECT_EQ(out, kMixedUtf8);
}

TEST(Utf16, SurrogatePairIsOneCodePoint) {
  const std::u16string_view units = u"\U0001F600x";
  std::size_t i = 0;
  EXPECT_EQ(next_code_point(units, i), U'\U0001F600');
  EXPECT_EQ(i, 2u);
  EXPECT_EQ(next_code_point(units, i), U'x');
  EXPECT_EQ(i, 3u);
}

TEST(Utf16, UnpairedSurrogateComesBackAsItselfAndFailsToUtf8) {
  const char16_t high_then_letter[] = {0xD83D, u'b', 0};
  std::size_t i = 0;
  EXPECT_EQ(next_code_point(high_then_letter, i), char32_t{0xD83D});
  EXPECT_EQ(i, 1u);
  std::string out;
  EXPECT_FALSE(to_utf8(high_then_letter, out));
  const char16_t lone_low[] = {u'a', 0xDE00, 0};
  EXPECT_FALSE(to_utf8(lone_low, out));
}

TEST(Utf16, AppendUtf16SplitsAboveTheBmp) {
  std::u16string out;
  for (char32_t c : {U'a', U'\u20ac', U'\U0001F600', U'\U0010FFFF'}) append_utf16(out, c);
  EXPECT_EQ(out, u"a\u20ac\U0001F600\U0010FFFF");
}

TEST(Utf16, NameAtReadsLittleEndianUnitsUpToTheNul) {
  using etwh::utf16::utf8_name_at;
  using etwh::utf16::utf8_of_le_units;
  // An information block: 4 bytes of header, then u"A\u20ac" + a surrogate pair, then NUL and
  // what follows the name.
  const std::vector<std::uint8_t> info = {9,    9,    9,    9,    'A', 0, 0xAC, 0x20,
                                          0x3D, 0xD8, 0x00, 0xDE, 0,   0, 'x',  0};
  EXPECT_EQ(utf8_name_at(info, 4), "A\xE2\x82\xAC\xF0\x9F\x98\x80");
  EXPECT_EQ(utf8_name_at(info, 14), "x");
  EXPECT_EQ(utf8_name_at(info, 0), "");                  // no name
  EXPECT_EQ(utf8_name_at(info, 16), "");                 // past the block
  EXPECT_EQ(utf8_of_le_units(info.data() + 4, 1), "A");  // a counted string stops at its count
  EXPECT_EQ(utf8_of_le_units(nullptr, 0), "");           // an empty value may have no address
}

}  // namespace
