// Fuzz target: the data plane's record decoder (decode_record), as the realtime reader runs it
// over a buffer it does not trust (a writer may have died mid-record, or be hostile): records
// are decoded one after the other until the end or the first one rejected. Every accepted
// record must lie inside the buffer with its spans inside itself, and must survive a round
// trip: encoded again from what was decoded, it decodes to the same view.
#include "fuzz_target.h"

#include <etwrt/dataplane.h>

#include <cstring>

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
         a.thread_id == b.thread_id && same_guid(a.activity_id, b.activity_id) &&
         a.has_related_activity_id == b.has_related_activity_id &&
         (!a.has_related_activity_id || same_guid(a.related_activity_id, b.related_activity_id)) &&
         same_bytes(a.provider_traits, b.provider_traits) && same_bytes(a.user_data, b.user_data);
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
  dp::encode_record(in, view.timestamp_ns, view.process_id, view.thread_id, out);
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
    if (!dp::decode_record(rest, view, record_size)) break;  // the rest is corrupt
    if (record_size < 80 || record_size % 8 != 0 || record_size > rest.size()) {
      etwh::fuzz::finding("accepted a record of " + std::to_string(record_size) + " bytes with " +
                          std::to_string(rest.size()) + " left");
    }
    const std::span<const std::byte> record = rest.first(record_size);
    if (!inside(view.user_data, record) || !inside(view.provider_traits, record)) {
      etwh::fuzz::finding("a decoded record's data lies outside it");
    }
    check_round_trip(view);
    offset += record_size;
  }
  return 0;
}
