// RecordBuilder (record_builder.h). The metadata is TraceLogging's encoding
// (runtime/src/tracelogging.h): UINT16 size, one tag byte (none), the event name, then per field
// its name and InType; the traits: UINT16 size and the provider name.
#include "etwh/testing/record_builder.h"

#include <chrono>
#include <cstring>

#ifndef _WIN32
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace etwh::testing {
namespace {

// TraceLogging's InTypes (TlgIn*).
constexpr std::uint8_t kUnicodeString = 1, kAnsiString = 2, kInt32 = 7, kUInt32 = 8, kInt64 = 9,
                       kUInt64 = 10, kBool32 = 13, kGuid = 15;

void append_text(std::vector<std::uint8_t>& out, std::string_view text) {
  for (char c : text) out.push_back(static_cast<std::uint8_t>(c));
  out.push_back(0);
}

void put_size(std::vector<std::uint8_t>& blob) {
  blob[0] = static_cast<std::uint8_t>(blob.size());
  blob[1] = static_cast<std::uint8_t>(blob.size() >> 8);
}

}  // namespace

RecordBuilder::RecordBuilder(const GUID& provider, const EVENT_DESCRIPTOR& descriptor) {
  EVENT_HEADER& h = record_.EventHeader;
  h.Size = sizeof(EVENT_HEADER);
  h.ProviderId = provider;
  h.EventDescriptor = descriptor;
#ifdef _WIN32
  h.ProcessId = GetCurrentProcessId();
  h.ThreadId = GetCurrentThreadId();
#else
  h.ProcessId = static_cast<ULONG>(::getpid());
  h.ThreadId = static_cast<ULONG>(::syscall(SYS_gettid));
#endif
  h.TimeStamp.QuadPart = std::chrono::steady_clock::now().time_since_epoch().count();
}

RecordBuilder& RecordBuilder::tracelogging(std::string event_name) {
  tracelogging_ = true;
  event_name_ = std::move(event_name);
  return *this;
}

RecordBuilder& RecordBuilder::provider_name(std::string name) {
  provider_name_ = std::move(name);
  return *this;
}

RecordBuilder& RecordBuilder::field(std::string_view name, std::uint8_t in_type, const void* data,
                                    std::size_t size) {
  append_text(fields_metadata_, name);
  fields_metadata_.push_back(in_type);
  const auto* p = static_cast<const std::uint8_t*>(data);
  payload_.insert(payload_.end(), p, p + size);
  return *this;
}

RecordBuilder& RecordBuilder::add_int32(std::string_view name, std::int32_t v) {
  return field(name, kInt32, &v, sizeof v);
}
RecordBuilder& RecordBuilder::add_uint32(std::string_view name, std::uint32_t v) {
  return field(name, kUInt32, &v, sizeof v);
}
RecordBuilder& RecordBuilder::add_int64(std::string_view name, std::int64_t v) {
  return field(name, kInt64, &v, sizeof v);
}
RecordBuilder& RecordBuilder::add_uint64(std::string_view name, std::uint64_t v) {
  return field(name, kUInt64, &v, sizeof v);
}
RecordBuilder& RecordBuilder::add_bool32(std::string_view name, bool value) {
  const std::int32_t v = value ? 1 : 0;
  return field(name, kBool32, &v, sizeof v);
}
RecordBuilder& RecordBuilder::add_guid(std::string_view name, const GUID& v) {
  return field(name, kGuid, &v, sizeof v);
}
RecordBuilder& RecordBuilder::add_ansi_string(std::string_view name, std::string_view value) {
  std::vector<std::uint8_t> bytes;
  append_text(bytes, value);
  return field(name, kAnsiString, bytes.data(), bytes.size());
}
RecordBuilder& RecordBuilder::add_utf16_string(std::string_view name, std::u16string_view value) {
  std::vector<std::uint8_t> bytes;
  for (char16_t unit : value) {
    bytes.push_back(static_cast<std::uint8_t>(unit & 0xff));
    bytes.push_back(static_cast<std::uint8_t>(unit >> 8));
  }
  bytes.push_back(0);
  bytes.push_back(0);
  return field(name, kUnicodeString, bytes.data(), bytes.size());
}
RecordBuilder& RecordBuilder::add_bytes(const void* data, std::size_t size) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  payload_.insert(payload_.end(), p, p + size);
  return *this;
}

RecordBuilder& RecordBuilder::process(ULONG process_id, ULONG thread_id) {
  record_.EventHeader.ProcessId = process_id;
  record_.EventHeader.ThreadId = thread_id;
  return *this;
}
RecordBuilder& RecordBuilder::timestamp(std::int64_t ticks) {
  record_.EventHeader.TimeStamp.QuadPart = ticks;
  return *this;
}
RecordBuilder& RecordBuilder::activity(const GUID& id) {
  record_.EventHeader.ActivityId = id;
  return *this;
}
RecordBuilder& RecordBuilder::related_activity(const GUID& id) {
  related_.resize(sizeof id);
  std::memcpy(related_.data(), &id, sizeof id);
  return *this;
}
RecordBuilder& RecordBuilder::user_context(void* context) {
  record_.UserContext = context;
  return *this;
}

EVENT_RECORD& RecordBuilder::record() {
  items_.clear();
  const auto add_item = [this](USHORT type, const std::vector<std::uint8_t>& data) {
    EVENT_HEADER_EXTENDED_DATA_ITEM item{};
    item.ExtType = type;
    item.DataSize = static_cast<USHORT>(data.size());
    item.DataPtr = reinterpret_cast<ULONGLONG>(data.data());
    items_.push_back(item);
  };
  if (!related_.empty()) add_item(EVENT_HEADER_EXT_TYPE_RELATED_ACTIVITYID, related_);
  if (tracelogging_) {
    metadata_.assign(3, 0);  // size, then no tags
    append_text(metadata_, event_name_);
    metadata_.insert(metadata_.end(), fields_metadata_.begin(), fields_metadata_.end());
    put_size(metadata_);
    add_item(EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL, metadata_);
  }
  if (!provider_name_.empty()) {
    traits_.assign(2, 0);
    append_text(traits_, provider_name_);
    put_size(traits_);
    add_item(EVENT_HEADER_EXT_TYPE_PROV_TRAITS, traits_);
  }
  record_.ExtendedDataCount = static_cast<USHORT>(items_.size());
  record_.ExtendedData = items_.empty() ? nullptr : items_.data();
  if (items_.empty()) {
    record_.EventHeader.Flags &= static_cast<USHORT>(~EVENT_HEADER_FLAG_EXTENDED_INFO);
  } else {
    record_.EventHeader.Flags |= EVENT_HEADER_FLAG_EXTENDED_INFO;
  }
  record_.UserDataLength = static_cast<USHORT>(payload_.size());
  record_.UserData = payload_.empty() ? nullptr : payload_.data();
  return record_;
}

void RecordBuilder::deliver(PEVENT_RECORD_CALLBACK callback) { callback(&record()); }

}  // namespace etwh::testing
