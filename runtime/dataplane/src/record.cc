// Encoding and decoding of one event record in a session buffer.
#include <atomic>
#include <cstddef>
#include <cstring>
#include <new>

#include "evntcons.h"
#include "dataplane_layout.h"
#include "record_parse.h"

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

}  // namespace

RecordSizes measure_record(const EventInput& in) {
  RecordSizes sizes;
  sizes.ext = ext_bytes(in);
  sizes.user = user_data_bytes(in);
  sizes.total = align8(sizeof(RecordHeader) + sizes.ext + sizes.user);
  return sizes;
}

size_t encoded_size(const EventInput& in) { return measure_record(in).total; }

void encode_record(const EventInput& in, uint64_t timestamp_ns, uint32_t process_id,
                   uint32_t thread_id, std::byte* out) {
  encode_measured(in, measure_record(in), timestamp_ns, process_id, thread_id, out);
}

void encode_measured(const EventInput& in, const RecordSizes& sizes, uint64_t timestamp_ns,
                     uint32_t process_id, uint32_t thread_id, std::byte* out) {
  const size_t ext = sizes.ext;
  const size_t user = sizes.user;
  const size_t size = sizes.total;
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
  ViewOut view{out};
  if (!parse_record(bytes, view, record_size)) return false;
  out.encoded = bytes.first(record_size);
  return true;
}

bool decode_event_record(std::span<const std::byte> bytes, EventRecordOut& out,
                         size_t& record_size) {
  EventRecordWriter writer{out};
  return parse_record(bytes, writer, record_size);
}

bool frame_record(std::span<const std::byte> bytes, uint32_t& size, uint64_t& timestamp_ns) {
  return frame_at(bytes.data(), bytes.size(), size, timestamp_ns);
}

}  // namespace etwrt::dataplane
