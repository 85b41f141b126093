// Fuzz target: the data plane's record decoders (decode_record, decode_event_record) and the
// reader's framing (frame_record), as the realtime reader runs them over a buffer it does not
// trust (a writer may have died mid-record, or be hostile): records are decoded one after the
// other until the end or the first one rejected. Every accepted record must lie inside the
// buffer with its spans inside itself, and must survive a round trip: encoded again from what
// was decoded, it decodes to the same view. Both decoders accept exactly the same records and
// agree on every field; the framing accepts at least those, with the same size and timestamp.
// The form the trace-file logger gets (decode_stored_record) agrees too, and each of its parts
// can be read by whole 8-byte words inside the record, as the logger reads them.
#include "fuzz_target.h"

#include <etwrt/dataplane.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

namespace dp = etwrt::dataplane;

bool inside(std::span<const std::byte> part, std::span<const std::byte> whole) {
  return part.empty() ||
         (part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size());
}

bool same_guid(const GUID& a, const GUID& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

bool same_bytes(std::span<const std::byte> a, std::span<const std::byte> b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
}

bool same_view(const dp::RecordView& a, const dp::RecordView& b) {
  return same_guid(a.provider_id, b.provider_id) &&
         std::memcmp(&a.descriptor, &b.descriptor, sizeof a.descriptor) == 0 &&
         a.timestamp_ns == b.timestamp_ns && a.process_id == b.process_id &&
         a.thread_id == b.thread_id && a.processor == b.processor &&
         same_guid(a.activity_id, b.activity_id) &&
         a.has_related_activity_id == b.has_related_activity_id &&
         (!a.has_related_activity_id || same_guid(a.related_activity_id, b.related_activity_id)) &&
         same_bytes(a.provider_traits, b.provider_traits) && same_bytes(a.user_data, b.user_data);
}

// The EVENT_RECORD form of a record against its RecordView form (same bytes).
bool same_event(const dp::RecordView& v, const dp::EventRecordOut& out) {
  const EVENT_RECORD& r = out.record;
  const EVENT_HEADER& h = r.EventHeader;
  struct Item {
    USHORT type;
    const void* data;
    std::size_t size;
  };
  std::vector<Item> items;
  if (v.has_related_activity_id) {
    items.push_back({EVENT_HEADER_EXT_TYPE_RELATED_ACTIVITYID, nullptr, sizeof(GUID)});
  }
  if (!v.provider_traits.empty()) {
    items.push_back(
        {EVENT_HEADER_EXT_TYPE_PROV_TRAITS, v.provider_traits.data(), v.provider_traits.size()});
  }
  if (!v.event_schema.empty()) {
    items.push_back(
        {EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL, v.event_schema.data(), v.event_schema.size()});
  }
  const USHORT flags = static_cast<USHORT>(
      (v.flags & ~EVENT_HEADER_FLAG_EXTENDED_INFO) | EVENT_HEADER_FLAG_64_BIT_HEADER |
      (items.empty() ? 0 : EVENT_HEADER_FLAG_EXTENDED_INFO) |
      (v.processor > 0xFF ? EVENT_HEADER_FLAG_PROCESSOR_INDEX : 0));
  bool same = h.Size == sizeof(EVENT_HEADER) && h.HeaderType == 0 && h.Flags == flags &&
              h.EventProperty == 0 && h.ThreadId == v.thread_id && h.ProcessId == v.process_id &&
              static_cast<std::uint64_t>(h.TimeStamp.QuadPart) == v.timestamp_ns &&
              same_guid(h.ProviderId, v.provider_id) &&
              std::memcmp(&h.EventDescriptor, &v.descriptor, sizeof v.descriptor) == 0 &&
              h.ProcessorTime == 0 && same_guid(h.ActivityId, v.activity_id) &&
              r.BufferContext.ProcessorIndex == v.processor && r.BufferContext.LoggerId == 0 &&
              r.UserData == v.user_data.data() && out.user_data_size == v.user_data.size() &&
              r.UserDataLength == static_cast<USHORT>(v.user_data.size()) &&
              r.UserContext == nullptr && out.has_timestamp_override == v.has_timestamp_override &&
              (!v.has_timestamp_override || out.timestamp_override == v.timestamp_override) &&
              r.ExtendedDataCount == items.size() &&
              r.ExtendedData == (items.empty() ? nullptr : out.items);
  for (std::size_t i = 0; same && i < items.size(); ++i) {
    const EVENT_HEADER_EXTENDED_DATA_ITEM& e = out.items[i];
    const auto* data = reinterpret_cast<const void*>(e.DataPtr);
    same = e.ExtType == items[i].type && e.DataSize == items[i].size &&
           (items[i].data == nullptr ? std::memcmp(data, &v.related_activity_id, sizeof(GUID)) == 0
                                     : data == items[i].data);
  }
  return same;
}

// Whether `part` may be read by whole words (StoredRecord's promise): it starts 8-aligned in
// the record, and the record holds its size rounded up to 8.
bool word_readable(std::span<const std::byte> part, std::span<const std::byte> record) {
  if (part.empty()) return true;
  const auto start = part.data() - record.data();
  return start >= 0 && start % 8 == 0 &&
         static_cast<std::size_t>(start) + ((part.size() + 7) & ~std::size_t{7}) <= record.size();
}

// The reader's StoredRecord form of an accepted record against its RecordView form.
void check_stored(std::span<const std::byte> rest, const dp::RecordView& v,
                  std::size_t record_size) {
  dp::StoredRecord s;
  std::size_t size = 0;
  if (!dp::decode_stored_record(rest, s, size) || size != record_size) {
    etwh::fuzz::finding("decode_stored_record does not accept what decode_record accepts");
    return;
  }
  const std::span<const std::byte> record = rest.first(record_size);
  GUID provider, activity;
  std::uint32_t ids[2];
  std::uint16_t processor;
  std::memcpy(&processor, s.header + dp::kStoredProcessor, sizeof processor);
  std::memcpy(&provider, s.header + dp::kStoredProviderId, sizeof provider);
  std::memcpy(&activity, s.header + dp::kStoredActivityId, sizeof activity);
  std::memcpy(ids, s.header + dp::kStoredProcessId, sizeof ids);
  const bool same =
      s.header == record.data() && s.timestamp_ns == v.timestamp_ns && s.flags == v.flags &&
      same_guid(provider, v.provider_id) && same_guid(activity, v.activity_id) &&
      std::memcmp(s.header + dp::kStoredDescriptor, &v.descriptor, sizeof v.descriptor) == 0 &&
      ids[0] == v.process_id && ids[1] == v.thread_id && processor == v.processor &&
      (s.related_activity_id != nullptr) == v.has_related_activity_id &&
      (!v.has_related_activity_id ||
       std::memcmp(s.related_activity_id, &v.related_activity_id, sizeof(GUID)) == 0) &&
      same_bytes(s.provider_traits, v.provider_traits) &&
      same_bytes(s.event_schema, v.event_schema) && same_bytes(s.user_data, v.user_data) &&
      s.has_timestamp_override == v.has_timestamp_override &&
      (!v.has_timestamp_override || s.timestamp_override == v.timestamp_override);
  if (!same) etwh::fuzz::finding("decode_stored_record and decode_record disagree on a record");
  if (!word_readable(s.user_data, record) || !word_readable(s.provider_traits, record) ||
      !word_readable(s.event_schema, record)) {
    etwh::fuzz::finding("a StoredRecord part cannot be read by whole words inside its record");
  }
}

// The other decoder and the framing on the same bytes, given decode_record's answer.
void check_agreement(std::span<const std::byte> rest, bool accepted, const dp::RecordView& view,
                     std::size_t record_size) {
  dp::EventRecordOut out;
  std::size_t event_size = 0;
  const bool event_accepted = dp::decode_event_record(rest, out, event_size);
  if (event_accepted != accepted) {
    etwh::fuzz::finding(std::string("decode_event_record ") +
                        (event_accepted ? "accepts" : "rejects") + " what decode_record " +
                        (accepted ? "accepts" : "rejects"));
  }
  std::uint32_t frame_size = 0;
  std::uint64_t frame_timestamp = 0;
  const bool framed = dp::frame_record(rest, frame_size, frame_timestamp);
  if (!accepted) return;
  if (!framed || frame_size != record_size || frame_timestamp != view.timestamp_ns) {
    etwh::fuzz::finding("the reader's framing disagrees with an accepted record");
  }
  if (event_accepted && (event_size != record_size || !same_event(view, out))) {
    etwh::fuzz::finding("decode_event_record and decode_record decode one record differently");
  }
}

void check_round_trip(const dp::RecordView& view) {
  EVENT_DATA_DESCRIPTOR user{};
  user.Ptr = reinterpret_cast<ULONGLONG>(view.user_data.data());
  user.Size = static_cast<ULONG>(view.user_data.size());
  dp::EventInput in;
  in.provider_id = &view.provider_id;
  in.descriptor = &view.descriptor;
  in.activity_id = &view.activity_id;
  in.related_activity_id = view.has_related_activity_id ? &view.related_activity_id : nullptr;
  in.provider_traits = view.provider_traits;
  in.user_data = std::span<const EVENT_DATA_DESCRIPTOR>(&user, 1);
  // 8-aligned storage, as a buffer's records are.
  std::vector<std::uint64_t> storage((dp::encoded_size(in) + 7) / 8);
  auto* out = reinterpret_cast<std::byte*>(storage.data());
  dp::encode_record(in, view.timestamp_ns, view.process_id, view.thread_id, out, view.processor);
  dp::RecordView again;
  std::size_t size = 0;
  if (!dp::decode_record(std::span<const std::byte>(out, storage.size() * 8), again, size)) {
    etwh::fuzz::finding("a decoded record, encoded again, does not decode");
  }
  if (size != dp::encoded_size(in) || !same_view(view, again)) {
    etwh::fuzz::finding("a decoded record, encoded again, decodes to something else");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The reader decodes from 8-aligned buffers: copy there (libFuzzer's data is not aligned).
  std::vector<std::uint64_t> storage((size + 7) / 8);
  if (size != 0) std::memcpy(storage.data(), data, size);
  const std::span<const std::byte> buffer(reinterpret_cast<const std::byte*>(storage.data()), size);
  std::size_t offset = 0;
  while (offset < buffer.size()) {
    const std::span<const std::byte> rest = buffer.subspan(offset);
    dp::RecordView view;
    std::size_t record_size = 0;
    const bool accepted = dp::decode_record(rest, view, record_size);
    check_agreement(rest, accepted, view, record_size);
    if (!accepted) break;  // the rest is corrupt
    if (record_size < 80 || record_size % 8 != 0 || record_size > rest.size()) {
      etwh::fuzz::finding("accepted a record of " + std::to_string(record_size) + " bytes with " +
                          std::to_string(rest.size()) + " left");
    }
    const std::span<const std::byte> record = rest.first(record_size);
    if (!inside(view.user_data, record) || !inside(view.provider_traits, record)) {
      etwh::fuzz::finding("a decoded record's data lies outside it");
    }
    check_round_trip(view);
    check_stored(rest, view, record_size);
    offset += record_size;
  }
  return 0;
}
