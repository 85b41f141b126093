// Encoding and decoding of one event record in a session buffer.
#include <atomic>
#include <cstddef>
#include <cstring>
#include <new>

#include "evntcons.h"
#include "dataplane_layout.h"
#include "record_parse.h"

namespace etwrt::dataplane {

std::byte* put_ext(std::byte* out, uint16_t type, const void* data, size_t size) {
  ExtItemHeader item{type, static_cast<uint16_t>(size), 0};
  std::memcpy(out, &item, sizeof item);
  out += sizeof item;
  std::memcpy(out, data, size);
  // Padding is zeroed so that a buffer's bytes do not depend on what it held before.
  std::memset(out + size, 0, align8(size) - size);
  return out + align8(size);
}

size_t encoded_size(const EventInput& in) { return measure_record(in).total; }

void encode_record(const EventInput& in, uint64_t timestamp_ns, uint32_t process_id,
                   uint32_t thread_id, std::byte* out, uint16_t processor) {
  encode_measured(in, measure_record(in), timestamp_ns, process_id, thread_id, processor, 1, out);
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

bool decode_stored_record(std::span<const std::byte> bytes, StoredRecord& out,
                          size_t& record_size) {
  StoredOut stored{out};
  return parse_record(bytes, stored, record_size);
}

bool frame_record(std::span<const std::byte> bytes, uint32_t& size, uint64_t& timestamp_ns) {
  return frame_at(bytes.data(), bytes.size(), size, timestamp_ns);
}

}  // namespace etwrt::dataplane
