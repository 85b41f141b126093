// The capture's decoder gives what TDH's per-property path gives (decode_record), for events it
// reads in place and for those it hands to TDH, with one schema per kind of event.
#include "../src/event_decoder.h"
#include "decode.h"
#include "etwh/testing/record_builder.h"

#include <gtest/gtest.h>
#include <tdh.h>

#include <string>

namespace etwh::testing {
namespace {

const GUID kProvider = {
    0x1d0c6a52, 0x7e1b, 0x4c8f, {0x9a, 0x3d, 0x21, 0x5b, 0x6c, 0x7d, 0x8e, 0x9f}};
const EVENT_DESCRIPTOR kDescriptor = {1, 0, 11, 4, 0, 0, 0x1};

std::string fields_text(const Event& e) {
  std::string out = "status " + std::to_string(e.decode_status) + " name \"" + e.name + "\"";
  for (const Field& f : e.fields) out += " " + f.name + "=" + f.value;
  return out;
}

// What the decoder gives beside what TDH's per-property calls give.
void expect_as_tdh(EventDecoder& decoder, const EVENT_RECORD& record) {
  Event fast, reference;
  decoder.decode(record, fast);
  decode_through_tdh(record, reference);
  EXPECT_EQ(fields_text(fast), fields_text(reference));
}

TEST(TestingEventDecoder, ReadsEveryFixedSizeAndStringTypeAsTdhDoes) {
  RecordBuilder b(kProvider, kDescriptor);
  b.tracelogging("AllTypes")
      .add_int32("I32", -5)
      .add_uint32("U32", 4000000000u)
      .add_int64("I64", INT64_MIN)
      .add_uint64("U64", UINT64_MAX)
      .add_bool32("Flag", true)
      .add_guid("Id", kProvider)
      .add_ansi_string("Empty", "")
      .add_ansi_string("Host", "example.org")
      .add_utf16_string("Wide", u"caf\u00e9 \U0001F600")
      .add_ansi_string("Long", std::string(300, 'x'));
  EventDecoder decoder;
  expect_as_tdh(decoder, b.record());
  Event e;
  decoder.decode(b.record(), e);
  ASSERT_EQ(e.fields.size(), 10u);
  EXPECT_EQ(e.name, "AllTypes");
  EXPECT_EQ(e.field("I32"), "-5");
  EXPECT_EQ(e.field("U64"), "18446744073709551615");
  EXPECT_EQ(e.field("Wide"), "caf\u00e9 \U0001F600");
  EXPECT_EQ(e.field("Long"), std::string(256, 'x') + "...");
}

// A string of no bytes may come with no address (a trace recorded on Windows has them; TDH
// gives a null pointer for a property of size 0): it reads as empty, without touching memory.
TEST(TestingEventDecoder, AStringOfNoBytesAndNoAddressIsEmpty) {
  for (USHORT in_type : {TDH_INTYPE_ANSISTRING, TDH_INTYPE_MANIFEST_COUNTEDANSISTRING,
                         TDH_INTYPE_UNICODESTRING, TDH_INTYPE_MANIFEST_COUNTEDSTRING}) {
    EXPECT_EQ(agent::value_text(in_type, nullptr, 0), "") << "InType " << in_type;
  }
}

TEST(TestingEventDecoder, APayloadShorterThanItsSchemaGoesToTdh) {
  RecordBuilder b(kProvider, kDescriptor);
  b.tracelogging("Short").add_uint32("Port", 80).add_ansi_string("Host", "example.org");
  EVENT_RECORD& r = b.record();
  EventDecoder decoder;
  for (USHORT cut : {1, 4, 6}) {  // a string without its NUL, no string, half an integer
    r.UserDataLength = static_cast<USHORT>(r.UserDataLength - cut);
    expect_as_tdh(decoder, r);
  }
  r.UserData = nullptr;  // no payload at all
  r.UserDataLength = 0;
  expect_as_tdh(decoder, r);
  RecordBuilder text_only(kProvider, kDescriptor);
  text_only.tracelogging("TextOnly").add_ansi_string("Host", "example.org");
  text_only.record().UserData = nullptr;
  text_only.record().UserDataLength = 0;
  expect_as_tdh(decoder, text_only.record());
}

TEST(TestingEventDecoder, AnEventWithoutSchemaHasTdhStatus) {
  RecordBuilder b(kProvider, kDescriptor);
  b.add_uint32("Port", 80);  // no metadata, no manifest
  EventDecoder decoder;
  Event e;
  decoder.decode(b.record(), e);
  EXPECT_NE(e.decode_status, 0u);
  expect_as_tdh(decoder, b.record());
}

// The same provider and descriptor with two TraceLogging schemas: each event is read with its
// own metadata, not the first one cached.
TEST(TestingEventDecoder, EachTraceLoggingSchemaIsCachedApart) {
  RecordBuilder first(kProvider, kDescriptor), second(kProvider, kDescriptor);
  first.tracelogging("First").add_uint32("Port", 80);
  second.tracelogging("Second").add_int32("Delta", -1).add_ansi_string("Why", "retry");
  EventDecoder decoder;
  for (int round = 0; round < 2; ++round) {
    expect_as_tdh(decoder, first.record());
    expect_as_tdh(decoder, second.record());
  }
  Event e;
  decoder.decode(second.record(), e);
  EXPECT_EQ(e.name, "Second");
  EXPECT_EQ(e.field("Why"), "retry");
}

}  // namespace
}  // namespace etwh::testing
