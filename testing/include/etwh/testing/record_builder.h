// etwh::testing's synthetic records, for testing consumer code without a session: build an
// EVENT_RECORD as a realtime consumer receives it (a TraceLogging event whose metadata travels
// in its EVENT_SCHEMA_TL item, or a manifest event whose payload you lay out as its template
// says) and hand it to your EventRecordCallback. TDH decodes it as it would a delivered one.
//
//   etwh::testing::RecordBuilder b(kMyProvider, {0, 0, 11, 4, 0, 0, 0x1});
//   b.tracelogging("Started").add_uint32("Port", 8080).add_ansi_string("Host", "example.org");
//   b.deliver(&MyConsumer::OnEvent, &my_consumer);  // your PEVENT_RECORD_CALLBACK
#pragma once

#include <windows.h>
#include <evntcons.h>
#include <evntrace.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace etwh::testing {

class RecordBuilder {
 public:
  // An event of `provider` with this descriptor, from this process and thread, stamped now.
  RecordBuilder(const GUID& provider, const EVENT_DESCRIPTOR& descriptor);

  // Makes it a TraceLogging event named `event_name`: each add_* below then also describes
  // its field in the event's metadata (the EVENT_SCHEMA_TL item).
  //
  //   b.tracelogging("Started");
  RecordBuilder& tracelogging(std::string event_name);
  // Also a PROV_TRAITS item naming the provider, as TraceLogging providers' events carry.
  RecordBuilder& provider_name(std::string name);

  // Fields, in payload order (for a manifest event: the template's order and types).
  //
  //   b.add_uint32("Port", 8080).add_ansi_string("Host", "example.org");
  RecordBuilder& add_int32(std::string_view name, std::int32_t value);
  RecordBuilder& add_uint32(std::string_view name, std::uint32_t value);
  RecordBuilder& add_int64(std::string_view name, std::int64_t value);
  RecordBuilder& add_uint64(std::string_view name, std::uint64_t value);
  RecordBuilder& add_bool32(std::string_view name, bool value);
  RecordBuilder& add_guid(std::string_view name, const GUID& value);
  // An 8-bit string with its NUL (TraceLogging's ANSISTRING, a manifest's win:AnsiString).
  RecordBuilder& add_ansi_string(std::string_view name, std::string_view value);
  // A UTF-16 string with its NUL (UNICODESTRING, win:UnicodeString), given in UTF-16.
  RecordBuilder& add_utf16_string(std::string_view name, std::u16string_view value);
  // Raw payload bytes, no metadata (a manifest field of another type).
  RecordBuilder& add_bytes(const void* data, std::size_t size);

  //   b.process(1234, 5678).timestamp(42).activity(kActivity);
  RecordBuilder& process(ULONG process_id, ULONG thread_id);
  RecordBuilder& timestamp(std::int64_t ticks);
  RecordBuilder& activity(const GUID& id);
  RecordBuilder& related_activity(const GUID& id);
  RecordBuilder& user_context(void* context);

  // The record; its pointers stay valid while the builder lives and is not changed.
  //
  //   EVENT_RECORD& r = b.record();
  EVENT_RECORD& record();
  // Calls `callback` with the record, as ProcessTrace calls an EventRecordCallback.
  //
  //   b.deliver(&on_event);
  void deliver(PEVENT_RECORD_CALLBACK callback);

 private:
  RecordBuilder& field(std::string_view name, std::uint8_t in_type, const void* data,
                       std::size_t size);

  EVENT_RECORD record_{};
  std::string event_name_;
  bool tracelogging_ = false;
  std::string provider_name_;
  std::vector<std::uint8_t> fields_metadata_;  // per field: name, NUL, InType
  std::vector<std::uint8_t> payload_;
  std::vector<std::uint8_t> metadata_, traits_, related_;
  std::vector<EVENT_HEADER_EXTENDED_DATA_ITEM> items_;
};

}  // namespace etwh::testing
