/*
 * etwrt data plane: the one validating parser of a record's bytes (internal), shared by the
 * decoders of record.cc (decode_record, decode_event_record) and inlined into the reader's
 * merge loop, so that the hot path decodes each record once, with no call per record.
 */
#ifndef ETWRT_RECORD_PARSE_H
#define ETWRT_RECORD_PARSE_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "dataplane_layout.h"
#include "evntcons.h"

namespace etwrt::dataplane {

template <typename T>
T header_field(const std::byte* header, size_t offset) {
  T value;
  std::memcpy(&value, header + offset, sizeof value);
  return value;
}

enum ItemRank : int { kNoItem, kRelated, kTraits, kSchema, kOverride };

inline int item_rank(uint16_t ext_type) {
  switch (ext_type) {
    case EVENT_HEADER_EXT_TYPE_RELATED_ACTIVITYID: return kRelated;
    case EVENT_HEADER_EXT_TYPE_PROV_TRAITS: return kTraits;
    case EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL: return kSchema;
    case kExtTimestampOverride: return kOverride;
    default: return kNoItem;  // this layout version writes no other item
  }
}

// The one validated reading of a record's bytes, in two steps: frame_at (dataplane_layout.h:
// the record's size within the bytes, and its timestamp), then this, on exactly the framed
// record. Every length is checked against the record's size, and the extended items must come
// as the encoder writes them, each at most once and in its order (anything else is corrupt).
// `Out` receives the header, each item and the user data, in that order. The reader frames
// each record for its merge anyway, then runs this inlined; the decoders run both steps.
template <typename Out>
[[gnu::always_inline]] inline bool parse_framed(std::span<const std::byte> record, Out& out) {
  // Field by field from the bytes (no alignment assumed), not a copy of the whole header
  // first: this runs once per delivered event.
  const std::byte* const h = record.data();
  const auto user_data_size = header_field<uint32_t>(h, offsetof(RecordHeader, user_data_size));
  const auto ext_count = header_field<uint8_t>(h, offsetof(RecordHeader, ext_count));
  // The items fill what the header and the user data (padded to 8) leave of the record.
  const uint64_t user_padded = align8(uint64_t{user_data_size});
  if (user_padded > record.size() - sizeof(RecordHeader)) return false;
  if (header_field<uint16_t>(h, offsetof(RecordHeader, reserved)) != 0) return false;
  const size_t ext_bytes = record.size() - sizeof(RecordHeader) - user_padded;
  out.header(h);
  const std::byte* p = h + sizeof(RecordHeader);
  const std::byte* ext_end = p + ext_bytes;
  int last_rank = kNoItem;
  for (uint32_t i = 0; i < ext_count; ++i) {
    ExtItemHeader item;
    if (ext_end - p < static_cast<ptrdiff_t>(sizeof item)) return false;
    std::memcpy(&item, p, sizeof item);
    p += sizeof item;
    if (ext_end - p < static_cast<ptrdiff_t>(align8(item.data_size))) return false;
    const int rank = item_rank(item.ext_type);
    if (rank <= last_rank) return false;  // unknown, repeated or out of order
    last_rank = rank;
    const std::span<const std::byte> data(p, item.data_size);
    if (rank == kRelated) {
      if (item.data_size != sizeof(GUID)) return false;
      out.related_activity_id(p);
    } else if (rank == kTraits) {
      out.provider_traits(data);
    } else if (rank == kSchema) {
      out.event_schema(data);
    } else {
      if (item.data_size != sizeof(uint64_t)) return false;
      out.timestamp_override(header_field<uint64_t>(p, 0));
    }
    p += align8(item.data_size);
  }
  if (p != ext_end) return false;
  out.user_data(std::span<const std::byte>(p, user_data_size));
  return true;
}

// Both steps, for the decoders: `bytes` may hold more than the record.
template <typename Out>
bool parse_record(std::span<const std::byte> bytes, Out& out, size_t& record_size) {
  uint32_t size = 0;
  uint64_t timestamp_ns = 0;
  if (!frame_at(bytes.data(), bytes.size(), size, timestamp_ns)) return false;
  if (!parse_framed(bytes.first(size), out)) return false;
  record_size = size;
  return true;
}

// decode_record's receiver: a RecordView.
struct ViewOut {
  RecordView& v;
  void header(const std::byte* h) {
    // Not `v = RecordView{}`: only the optional parts need clearing.
    v.has_related_activity_id = false;
    v.related_activity_id = GUID{};
    v.provider_traits = {};
    v.event_schema = {};
    v.has_timestamp_override = false;
    v.timestamp_override = 0;
    v.provider_id = header_field<GUID>(h, offsetof(RecordHeader, provider_id));
    v.descriptor = header_field<EVENT_DESCRIPTOR>(h, offsetof(RecordHeader, descriptor));
    v.timestamp_ns = header_field<uint64_t>(h, offsetof(RecordHeader, timestamp_ns));
    v.process_id = header_field<uint32_t>(h, offsetof(RecordHeader, process_id));
    v.thread_id = header_field<uint32_t>(h, offsetof(RecordHeader, thread_id));
    v.flags = header_field<uint16_t>(h, offsetof(RecordHeader, flags));
    v.activity_id = header_field<GUID>(h, offsetof(RecordHeader, activity_id));
    v.processor = header_field<uint16_t>(h, offsetof(RecordHeader, processor));
  }
  void related_activity_id(const std::byte* p) {
    std::memcpy(&v.related_activity_id, p, sizeof(GUID));
    v.has_related_activity_id = true;
  }
  void provider_traits(std::span<const std::byte> data) { v.provider_traits = data; }
  void event_schema(std::span<const std::byte> data) { v.event_schema = data; }
  void timestamp_override(uint64_t value) {
    v.timestamp_override = value;
    v.has_timestamp_override = true;
  }
  void user_data(std::span<const std::byte> data) { v.user_data = data; }
};

// Reader::poll(RecordSink&)'s receiver: the header where it is, the parts as spans.
struct StoredOut {
  StoredRecord& r;
  void header(const std::byte* h) {
    r.header = h;
    r.timestamp_ns = header_field<uint64_t>(h, offsetof(RecordHeader, timestamp_ns));
    r.flags = header_field<uint16_t>(h, offsetof(RecordHeader, flags));
    r.related_activity_id = nullptr;
    r.provider_traits = {};
    r.event_schema = {};
    r.has_timestamp_override = false;
  }
  void related_activity_id(const std::byte* p) { r.related_activity_id = p; }
  void provider_traits(std::span<const std::byte> data) { r.provider_traits = data; }
  void event_schema(std::span<const std::byte> data) { r.event_schema = data; }
  void timestamp_override(uint64_t value) {
    r.timestamp_override = value;
    r.has_timestamp_override = true;
  }
  void user_data(std::span<const std::byte> data) { r.user_data = data; }
};
static_assert(offsetof(RecordHeader, process_id) == kStoredProcessId);
static_assert(offsetof(RecordHeader, thread_id) == kStoredThreadId);
static_assert(offsetof(RecordHeader, provider_id) == kStoredProviderId);
static_assert(offsetof(RecordHeader, descriptor) == kStoredDescriptor);
static_assert(offsetof(RecordHeader, activity_id) == kStoredActivityId);
static_assert(offsetof(RecordHeader, processor) == kStoredProcessor);
static_assert(sizeof(RecordHeader) == kStoredHeaderBytes);

// decode_event_record's receiver: an EVENT_RECORD, every field written (no clearing first).
struct EventRecordWriter {
  EventRecordOut& o;
  void header(const std::byte* h) {
    EVENT_HEADER& e = o.record.EventHeader;
    e.Size = sizeof(EVENT_HEADER);
    e.HeaderType = 0;
    // EXTENDED_INFO only with items in ExtendedData (EVENT_HEADER page: "The ExtendedData
    // member of EVENT_RECORD contains data"): add_item sets it; a timestamp override is no item.
    e.Flags = static_cast<USHORT>((header_field<uint16_t>(h, offsetof(RecordHeader, flags)) &
                                   ~EVENT_HEADER_FLAG_EXTENDED_INFO) |
                                  EVENT_HEADER_FLAG_64_BIT_HEADER);
    e.EventProperty = 0;
    // The pool stores the process ID first, EVENT_HEADER the thread ID: one load, one rotation.
    static_assert(offsetof(RecordHeader, thread_id) == offsetof(RecordHeader, process_id) + 4);
    static_assert(offsetof(EVENT_HEADER, ProcessId) == offsetof(EVENT_HEADER, ThreadId) + 4);
    const auto ids = header_field<uint64_t>(h, offsetof(RecordHeader, process_id));
    const uint64_t swapped = (ids >> 32) | (ids << 32);
    std::memcpy(&e.ThreadId, &swapped, sizeof swapped);
    e.TimeStamp.QuadPart = header_field<int64_t>(h, offsetof(RecordHeader, timestamp_ns));
    // ProviderId and EventDescriptor lie side by side in both: one copy.
    static_assert(offsetof(EVENT_HEADER, EventDescriptor) ==
                  offsetof(EVENT_HEADER, ProviderId) + sizeof(GUID));
    static_assert(offsetof(RecordHeader, descriptor) ==
                  offsetof(RecordHeader, provider_id) + sizeof(GUID));
    std::memcpy(&e.ProviderId, h + offsetof(RecordHeader, provider_id),
                sizeof(GUID) + sizeof(EVENT_DESCRIPTOR));
    e.ProcessorTime = 0;
    e.ActivityId = header_field<GUID>(h, offsetof(RecordHeader, activity_id));
    // The writer's processor (ETW_BUFFER_CONTEXT page: "The number of the CPU on which the
    // provider process was running"): ProcessorIndex, so ProcessorNumber too below 256; past
    // that the flag says to read the index (docs/etwrt/conformance.md).
    const auto processor = header_field<uint16_t>(h, offsetof(RecordHeader, processor));
    o.record.BufferContext = ETW_BUFFER_CONTEXT{};
    o.record.BufferContext.ProcessorIndex = processor;
    if (processor > 0xFF) e.Flags |= EVENT_HEADER_FLAG_PROCESSOR_INDEX;
    o.record.ExtendedDataCount = 0;
    o.record.ExtendedData = nullptr;
    o.record.UserContext = nullptr;
    o.has_timestamp_override = false;  // timestamp_override is read only when set
  }
  void add_item(USHORT type, const std::byte* data, size_t size) {
    EVENT_HEADER_EXTENDED_DATA_ITEM& slot = o.items[o.record.ExtendedDataCount++];
    slot = EVENT_HEADER_EXTENDED_DATA_ITEM{};
    slot.ExtType = type;
    slot.DataSize = static_cast<USHORT>(size);
    slot.DataPtr = reinterpret_cast<ULONGLONG>(data);
    o.record.ExtendedData = o.items;
    o.record.EventHeader.Flags |= EVENT_HEADER_FLAG_EXTENDED_INFO;
  }
  void related_activity_id(const std::byte* p) {
    add_item(EVENT_HEADER_EXT_TYPE_RELATED_ACTIVITYID, p, sizeof(GUID));
  }
  // An empty item is none, as for RecordView (whose empty span means "not set").
  void provider_traits(std::span<const std::byte> data) {
    if (!data.empty()) add_item(EVENT_HEADER_EXT_TYPE_PROV_TRAITS, data.data(), data.size());
  }
  void event_schema(std::span<const std::byte> data) {
    if (!data.empty()) add_item(EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL, data.data(), data.size());
  }
  void timestamp_override(uint64_t value) {
    o.timestamp_override = value;
    o.has_timestamp_override = true;
  }
  void user_data(std::span<const std::byte> data) {
    o.user_data_size = static_cast<uint32_t>(data.size());
    o.record.UserDataLength = static_cast<USHORT>(data.size());
    o.record.UserData = const_cast<std::byte*>(data.data());
  }
};
static_assert(sizeof(EventRecordOut::items) / sizeof(EventRecordOut::items[0]) == kSchema,
              "one slot per visible item kind, each at most once per record");

}  // namespace etwrt::dataplane

#endif  // ETWRT_RECORD_PARSE_H
