// Encoding and decoding of one event record in a session buffer.
#include <atomic>
#include <cstddef>
#include <cstring>
#include <new>

#include "evntcons.h"
#include "dataplane_layout.h"

namespace etwrt::dataplane {

namespace {

size_t user_data_bytes(const EventInput& in) {
  size_t total = 0;
  for (const EVENT_DATA_DESCRIPTOR& d : in.user_data) total += d.Size;
  return total;
}

size_t ext_bytes(const EventInput& in) {
  size_t total = 0;
  if (in.related_activity_id != nullptr) total += sizeof(ExtItemHeader) + align8(sizeof(GUID));
  if (!in.provider_traits.empty())
    total += sizeof(ExtItemHeader) + align8(in.provider_traits.size());
  if (!in.event_schema.empty()) total += sizeof(ExtItemHeader) + align8(in.event_schema.size());
  if (in.timestamp_override != nullptr) total += sizeof(ExtItemHeader) + sizeof(uint64_t);
  return total;
}

std::byte* put_ext(std::byte* out, uint16_t type, const void* data, size_t size) {
  ExtItemHeader item{type, static_cast<uint16_t>(size), 0};
  std::memcpy(out, &item, sizeof item);
  out += sizeof item;
  std::memcpy(out, data, size);
  // Padding is zeroed so that a buffer's bytes do not depend on what it held before.
  std::memset(out + size, 0, align8(size) - size);
  return out + align8(size);
}

template <typename T>
T header_field(const std::byte* header, size_t offset) {
  T value;
  std::memcpy(&value, header + offset, sizeof value);
  return value;
}

}  // namespace

size_t encoded_size(const EventInput& in) {
  return align8(sizeof(RecordHeader) + ext_bytes(in) + user_data_bytes(in));
}

void encode_record(const EventInput& in, uint64_t timestamp_ns, uint32_t process_id,
                   uint32_t thread_id, std::byte* out) {
  const size_t ext = ext_bytes(in);
  const size_t user = user_data_bytes(in);
  const size_t size = align8(sizeof(RecordHeader) + ext + user);
  // Fields are stored straight into the buffer (8-aligned, trivially copyable header): this
  // is the hottest code of EventWrite.
  RecordHeader* h = new (out) RecordHeader;
  h->size = static_cast<uint32_t>(size);
  const uint16_t ext_count =
      uint16_t{in.related_activity_id != nullptr} + uint16_t{!in.provider_traits.empty()} +
      uint16_t{!in.event_schema.empty()} + uint16_t{in.timestamp_override != nullptr};
  h->flags = EVENT_HEADER_FLAG_64_BIT_HEADER | in.extra_flags |
             (ext_count != 0 ? EVENT_HEADER_FLAG_EXTENDED_INFO : 0);
  h->ext_count = ext_count;
  // Atomic (a plain store on x86): the reader may peek at the first timestamp of a buffer it
  // has not taken, while a writer reclaims and rewrites it.
  std::atomic_ref<uint64_t>(h->timestamp_ns).store(timestamp_ns, std::memory_order_relaxed);
  h->process_id = process_id;
  h->thread_id = thread_id;
  h->provider_id = *in.provider_id;
  h->descriptor = *in.descriptor;
  if (in.activity_id != nullptr) {
    h->activity_id = *in.activity_id;
  } else {
    h->activity_id = GUID{};
  }
  h->user_data_size = static_cast<uint32_t>(user);
  h->ext_bytes = static_cast<uint32_t>(ext);
  std::byte* p = out + sizeof(RecordHeader);
  if (ext != 0) {
    if (in.related_activity_id != nullptr)
      p = put_ext(p, EVENT_HEADER_EXT_TYPE_RELATED_ACTIVITYID, in.related_activity_id,
                  sizeof(GUID));
    if (!in.provider_traits.empty())
      p = put_ext(p, EVENT_HEADER_EXT_TYPE_PROV_TRAITS, in.provider_traits.data(),
                  in.provider_traits.size());
    if (!in.event_schema.empty())
      p = put_ext(p, EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL, in.event_schema.data(),
                  in.event_schema.size());
    if (in.timestamp_override != nullptr)
      p = put_ext(p, kExtTimestampOverride, in.timestamp_override, sizeof(uint64_t));
  }
  for (const EVENT_DATA_DESCRIPTOR& d : in.user_data) {
    if (d.Size != 0) std::memcpy(p, reinterpret_cast<const void*>(d.Ptr), d.Size);
    p += d.Size;
  }
  // Padding is zeroed so that a buffer's bytes do not depend on what it held before.
  for (std::byte* end = out + size; p != end; ++p) *p = std::byte{0};
}

bool decode_record(std::span<const std::byte> bytes, RecordView& out, size_t& record_size) {
  if (bytes.size() < sizeof(RecordHeader)) return false;
  // Field by field from the bytes (no alignment assumed), not a copy of the whole header
  // first: this runs once per delivered event, and that copy cost about a seventh of it.
  const std::byte* const h = bytes.data();
  const auto size = header_field<uint32_t>(h, offsetof(RecordHeader, size));
  const auto ext_bytes = header_field<uint32_t>(h, offsetof(RecordHeader, ext_bytes));
  const auto user_data_size = header_field<uint32_t>(h, offsetof(RecordHeader, user_data_size));
  const auto ext_count = header_field<uint16_t>(h, offsetof(RecordHeader, ext_count));
  if (size < sizeof(RecordHeader) || size % 8 != 0 || size > bytes.size()) return false;
  if (uint64_t{ext_bytes} + user_data_size > size - sizeof(RecordHeader)) return false;
  // Not `out = RecordView{}`: only the optional parts need clearing.
  out.has_related_activity_id = false;
  out.related_activity_id = GUID{};
  out.provider_traits = {};
  out.event_schema = {};
  out.has_timestamp_override = false;
  out.timestamp_override = 0;
  out.provider_id = header_field<GUID>(h, offsetof(RecordHeader, provider_id));
  out.descriptor = header_field<EVENT_DESCRIPTOR>(h, offsetof(RecordHeader, descriptor));
  out.timestamp_ns = header_field<uint64_t>(h, offsetof(RecordHeader, timestamp_ns));
  out.process_id = header_field<uint32_t>(h, offsetof(RecordHeader, process_id));
  out.thread_id = header_field<uint32_t>(h, offsetof(RecordHeader, thread_id));
  out.flags = header_field<uint16_t>(h, offsetof(RecordHeader, flags));
  out.activity_id = header_field<GUID>(h, offsetof(RecordHeader, activity_id));
  const std::byte* p = h + sizeof(RecordHeader);
  const std::byte* ext_end = p + ext_bytes;
  for (uint16_t i = 0; i < ext_count; ++i) {
    ExtItemHeader item;
    if (ext_end - p < static_cast<ptrdiff_t>(sizeof item)) return false;
    std::memcpy(&item, p, sizeof item);
    p += sizeof item;
    if (ext_end - p < static_cast<ptrdiff_t>(align8(item.data_size))) return false;
    if (item.ext_type == EVENT_HEADER_EXT_TYPE_RELATED_ACTIVITYID) {
      if (item.data_size != sizeof(GUID)) return false;
      std::memcpy(&out.related_activity_id, p, sizeof(GUID));
      out.has_related_activity_id = true;
    } else if (item.ext_type == EVENT_HEADER_EXT_TYPE_PROV_TRAITS) {
      out.provider_traits = std::span<const std::byte>(p, item.data_size);
    } else if (item.ext_type == EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL) {
      out.event_schema = std::span<const std::byte>(p, item.data_size);
    } else if (item.ext_type == kExtTimestampOverride) {
      if (item.data_size != sizeof(uint64_t)) return false;
      std::memcpy(&out.timestamp_override, p, sizeof(uint64_t));
      out.has_timestamp_override = true;
    } else {
      return false;  // this layout version writes no other item
    }
    p += align8(item.data_size);
  }
  if (p != ext_end) return false;
  out.user_data = std::span<const std::byte>(p, user_data_size);
  out.encoded = bytes.first(size);
  record_size = size;
  return true;
}

}  // namespace etwrt::dataplane
