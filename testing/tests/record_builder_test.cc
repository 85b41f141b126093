// Synthetic records (record_builder.h) reach a consumer's callback as delivered ones do: TDH
// decodes the TraceLogging ones by name.
#include "etwh/testing/capture.h"
#include "etwh/testing/matchers.h"
#include "etwh/testing/record_builder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace etwh::testing {
namespace {

std::vector<Event>* g_received = nullptr;

// A consumer's callback under test: it keeps what it decodes.
void WINAPI consumer_callback(PEVENT_RECORD record) {
  g_received->push_back(decode_record(*record));
}

TEST(TestingRecordBuilder, ATraceLoggingRecordDecodesByName) {
  const GUID provider = provider_id_from_name("Etwh.Testing.Synthetic");
  const GUID related = provider_id_from_name("related");
  RecordBuilder b(provider, {0, 0, 11, 4, 0, 0, 0x3});
  b.tracelogging("Started")
      .provider_name("Etwh.Testing.Synthetic")
      .add_uint32("Port", 8080)
      .add_int32("Delta", -2)
      .add_uint64("Bytes", 1ull << 40)
      .add_bool32("Secure", true)
      .add_ansi_string("Host", "example.org")
      .add_utf16_string("Path", u"/h\u00e9")
      .process(1234, 5678)
      .timestamp(42)
      .related_activity(related);
  std::vector<Event> received;
  g_received = &received;
  b.deliver(&consumer_callback);
  ASSERT_EQ(received.size(), 1u);
  const Event& e = received[0];
  EXPECT_EQ(e.decode_status, 0u);
  EXPECT_THAT(e, IsEvent(EventSpec()
                             .named("Started")
                             .level(4)
                             .keywords(0x3)
                             .field_eq("Port", "8080")
                             .field_eq("Delta", "-2")
                             .field_eq("Bytes", "1099511627776")
                             .field_eq("Secure", "true")
                             .field_eq("Host", "example.org")
                             .field_eq("Path", "/h\u00e9")));
  EXPECT_EQ(e.process_id, 1234u);
  EXPECT_EQ(e.thread_id, 5678u);
  EXPECT_EQ(e.timestamp, 42);
  ASSERT_TRUE(e.related_activity_id.has_value());
  EXPECT_EQ(guid_text(*e.related_activity_id), guid_text(related));
}

TEST(TestingRecordBuilder, WithoutMetadataTdhSaysItCannotDecode) {
  RecordBuilder b(provider_id_from_name("Etwh.Testing.Synthetic"), {7, 0, 0, 4, 0, 0, 0});
  const std::uint32_t value = 5;
  b.add_bytes(&value, sizeof value);
  const Event e = decode_record(b.record());
  EXPECT_NE(e.decode_status, 0u);
  EXPECT_EQ(e.id, 7);
  EXPECT_EQ(e.user_data.size(), 4u);
}

}  // namespace
}  // namespace etwh::testing
