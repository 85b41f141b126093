#include "tracelogging.h"
#include "tl_test_metadata.h"

#include <gtest/gtest.h>

#include <cstring>

namespace {

using etwrt::testing::TlMetadata;

std::span<const std::byte> as_bytes(const std::vector<std::uint8_t>& v) {
  return std::as_bytes(std::span(v));
}

EVENT_DATA_DESCRIPTOR typed(const void* p, ULONG size, UCHAR type) {
  EVENT_DATA_DESCRIPTOR d;
  EventDataDescCreate(&d, p, size);
  d.Type = type;
  return d;
}

TEST(SplitByType, SortsPayloadSchemaTraitsAndTimestamp) {
  const std::uint8_t meta1[] = {1, 2};
  const std::uint8_t meta2[] = {3};
  const std::uint8_t traits[] = {4, 0, 'P', 0};
  const std::uint32_t a = 7, b = 8;
  const std::uint64_t ts = 0x1122334455667788ull;
  const EVENT_DATA_DESCRIPTOR in[] = {
      typed(traits, sizeof traits, EVENT_DATA_DESCRIPTOR_TYPE_PROVIDER_METADATA),
      typed(meta1, sizeof meta1, EVENT_DATA_DESCRIPTOR_TYPE_EVENT_METADATA),
      typed(&a, 4, EVENT_DATA_DESCRIPTOR_TYPE_NONE),
      typed(meta2, sizeof meta2, EVENT_DATA_DESCRIPTOR_TYPE_EVENT_METADATA),
      typed(&ts, 8, EVENT_DATA_DESCRIPTOR_TYPE_TIMESTAMP_OVERRIDE),
      typed(&b, 4, EVENT_DATA_DESCRIPTOR_TYPE_NONE)};
  etwrt::TypedEvent out;
  ASSERT_EQ(etwrt::split_by_type(in, false, out), ERROR_SUCCESS);
  ASSERT_EQ(out.payload_count, 2u);
  EXPECT_EQ(out.payload[0].Ptr, in[2].Ptr);
  EXPECT_EQ(out.payload[1].Ptr, in[5].Ptr);
  ASSERT_EQ(out.schema.size(), 3u);  // joined in order
  EXPECT_EQ(out.schema[0], std::byte{1});
  EXPECT_EQ(out.schema[2], std::byte{3});
  ASSERT_EQ(out.traits.size(), sizeof traits);
  EXPECT_EQ(std::memcmp(out.traits.data(), traits, sizeof traits), 0);
  EXPECT_TRUE(out.has_timestamp);
  EXPECT_EQ(out.timestamp, ts);

  etwrt::TypedEvent with_traits;  // Traits set with EventSetInformation: Type 2 is ignored.
  ASSERT_EQ(etwrt::split_by_type(in, true, with_traits), ERROR_SUCCESS);
  EXPECT_TRUE(with_traits.traits.empty());
  EXPECT_EQ(with_traits.schema.size(), 3u);
}

TEST(SplitByType, RefusesABadTimestampSizeAndUnknownTypes) {
  const std::uint32_t small = 1;
  etwrt::TypedEvent out;
  const EVENT_DATA_DESCRIPTOR ts[] = {
      typed(&small, 4, EVENT_DATA_DESCRIPTOR_TYPE_TIMESTAMP_OVERRIDE)};
  EXPECT_EQ(etwrt::split_by_type(ts, false, out), ERROR_INVALID_PARAMETER);
  etwrt::TypedEvent out2;
  const EVENT_DATA_DESCRIPTOR unknown[] = {typed(&small, 4, 4)};
  EXPECT_EQ(etwrt::split_by_type(unknown, false, out2), ERROR_INVALID_PARAMETER);
}

TEST(EventMetadata, ParsesNameTagsFieldsAndStructs) {
  const auto meta = TlMetadata("Etwh.Event", 0)
                        .field("count", etwrt::kTlUInt32)
                        .field("hex", etwrt::kTlUInt32, 4)
                        .field("pt", etwrt::kTlStruct, 2)
                        .field("x", etwrt::kTlInt16)
                        .field("y", etwrt::kTlInt16)
                        .field("arr", etwrt::kTlUInt8 | etwrt::kTlVariableCount)
                        .field("msg", etwrt::kTlAnsiString)
                        .bytes();
  const auto r = etwrt::parse_event_metadata(as_bytes(meta));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.schema.name, "Etwh.Event");
  ASSERT_EQ(r.schema.fields.size(), 7u);
  EXPECT_EQ(r.schema.fields[1].out_type, 4);
  EXPECT_EQ(r.schema.fields[3].parent, 2u);
  EXPECT_EQ(r.schema.fields[4].parent, 2u);
  EXPECT_EQ(r.schema.fields[5].parent, SIZE_MAX);
  EXPECT_EQ(r.schema.fields[5].count_kind, etwrt::kTlVariableCount);

  std::vector<std::uint8_t> payload = {1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 4, 0, 2, 0, 9, 9, 'h', 'i', 0};
  std::vector<etwrt::TlValue> values;
  std::string error;
  ASSERT_TRUE(etwrt::locate_values(r.schema, as_bytes(payload), values, error)) << error;
  EXPECT_EQ(values[0].offset, 0u);
  EXPECT_EQ(values[3].offset, 8u);
  EXPECT_EQ(values[5].count, 2u);
  EXPECT_EQ(values[5].size, 4u);
  EXPECT_EQ(values[6].offset, 16u);
  EXPECT_EQ(values[6].size, 3u);
  payload.pop_back();  // the string loses its NUL
  EXPECT_FALSE(etwrt::locate_values(r.schema, as_bytes(payload), values, error));
  EXPECT_NE(error.find("\"msg\""), std::string::npos) << error;
}

TEST(EventMetadata, TagsAreSevenBitsMostSignificantFirst) {
  auto meta = TlMetadata("E", 0x81).bytes();  // 0x81 chains to the next byte
  meta.insert(meta.begin() + 3, 0x05);
  meta[0] = static_cast<std::uint8_t>(meta.size());
  const auto r = etwrt::parse_event_metadata(as_bytes(meta));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.schema.tags, (1u << 21) | (5u << 14));
}

TEST(EventMetadata, RejectsEachMalformation) {
  struct Case {
    std::vector<std::uint8_t> bytes;
    const char* expect;
  };
  auto sized = [](std::vector<std::uint8_t> v) {
    v[0] = static_cast<std::uint8_t>(v.size());
    return v;
  };
  const Case cases[] = {
      {{6, 0, 0, 'E', 0}, "differs from the metadata length"},
      {sized({0, 0, 0, 'E'}), "event name is not NUL-terminated"},
      {sized({0, 0, 0, 0}), "event name is empty"},
      {TlMetadata("E").field("f", 0).bytes(), "unknown InType 0"},
      {TlMetadata("E").field("f", 26).bytes(), "unknown InType 26"},
      {TlMetadata("E").field("f", 16).bytes(), "_TlgInPOINTER_unsupported"},
      {TlMetadata("E").raw({'f', 0}).bytes(), "metadata ends before InType"},
      {TlMetadata("E").raw({'f'}).bytes(), "field name is not NUL-terminated"},
      {TlMetadata("E").field("s", etwrt::kTlStruct, 2).field("a", 4).bytes(), "lacks 1 member"},
      {TlMetadata("E").field("s", etwrt::kTlStruct).bytes(), "no member count"},
      {TlMetadata("E").field("a", 4 | etwrt::kTlConstantCount).raw({1}).bytes(),
       "ends before constant count"},
  };
  for (const Case& c : cases) {
    const auto r = etwrt::parse_event_metadata(as_bytes(c.bytes));
    EXPECT_FALSE(r.ok) << c.expect;
    EXPECT_NE(r.error.find(c.expect), std::string::npos) << r.error << " / " << c.expect;
  }
}

}  // namespace
