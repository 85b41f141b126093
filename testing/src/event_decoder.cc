#include "event_decoder.h"

#include "decode.h"

#include <etwh/tdh_fixed_size.h>
#include <etwh/utf16.h>

#include <tdh.h>

#include <cstring>

namespace etwh::testing {
namespace {

// The size of a fixed-size InType's value (a POINTER's by the record's header); 0 for any other.
std::size_t fixed_size(USHORT in_type, USHORT header_flags) {
  if (in_type != TDH_INTYPE_POINTER) return tdh_fixed_size(in_type);
  if ((header_flags & EVENT_HEADER_FLAG_32_BIT_HEADER) != 0) return 4;
  if ((header_flags & EVENT_HEADER_FLAG_64_BIT_HEADER) != 0) return 8;
  return 0;
}

bool is_terminated_string(USHORT in_type) {
  return in_type == TDH_INTYPE_UNICODESTRING || in_type == TDH_INTYPE_ANSISTRING;
}

// PropertyHasTags (EVENT_PROPERTY_INFO's Flags): tags change nothing of the value. Written out,
// since mingw-w64 10's tdh.h ends PROPERTY_FLAGS before it.
constexpr unsigned kPropertyHasTags = 0x40;

// A property read in place: one value (no array, no struct), its size its type's or up to its
// NUL (no length of its own, none from another property).
bool readable_in_place(const EVENT_PROPERTY_INFO& p) {
  if ((static_cast<unsigned>(p.Flags) & ~kPropertyHasTags) != 0 || p.count > 1) return false;
  const USHORT in_type = p.nonStructType.InType;
  if (is_terminated_string(in_type)) return p.length == 0;
  // POINTER's size is the record's (its header flags): checked per record.
  return in_type == TDH_INTYPE_POINTER || fixed_size(in_type, 0) != 0;
}

// The lookup key of a record's schema: the provider, then the TraceLogging metadata when the
// record carries it (a TraceLogging event's schema is its metadata), else the descriptor.
void key_of(const EVENT_RECORD& r, std::string& key) {
  key.assign(reinterpret_cast<const char*>(&r.EventHeader.ProviderId), sizeof(GUID));
  for (USHORT i = 0; i < r.ExtendedDataCount; ++i) {
    const EVENT_HEADER_EXTENDED_DATA_ITEM& item = r.ExtendedData[i];
    if (item.ExtType == EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL) {
      key.push_back('t');
      key.append(reinterpret_cast<const char*>(item.DataPtr), item.DataSize);
      return;
    }
  }
  key.push_back('m');
  key.append(reinterpret_cast<const char*>(&r.EventHeader.EventDescriptor),
             sizeof(EVENT_DESCRIPTOR));
}

}  // namespace

const EventDecoder::Schema& EventDecoder::schema_of(const EVENT_RECORD& record) {
  key_of(record, key_);
  if (auto found = schemas_.find(key_); found != schemas_.end()) return found->second;
  Schema& schema = schemas_[key_];
  ULONG status = ERROR_SUCCESS;
  const std::vector<std::uint8_t> info = agent::event_information(record, status);
  schema.status = status;
  if (status != ERROR_SUCCESS) return schema;
  const auto& t = *reinterpret_cast<const TRACE_EVENT_INFO*>(info.data());
  // EventNameOffset shares its place with ActivityIDNameOffset (a union); older SDK headers
  // name only the latter.
  schema.name = utf16::utf8_name_at(info, t.ActivityIDNameOffset);
  schema.in_place = true;
  for (ULONG i = 0; i < t.TopLevelPropertyCount && i < t.PropertyCount; ++i) {
    const EVENT_PROPERTY_INFO& p = t.EventPropertyInfoArray[i];
    schema.in_place = schema.in_place && readable_in_place(p);
    schema.properties.push_back({utf16::utf8_name_at(info, p.NameOffset), p.nonStructType.InType});
  }
  return schema;
}

bool EventDecoder::read_in_place(const Schema& schema, const EVENT_RECORD& record, Event& e) {
  const auto* at = static_cast<const std::uint8_t*>(record.UserData);
  std::size_t left = at == nullptr ? 0 : record.UserDataLength;
  e.fields.reserve(schema.properties.size());
  for (const Property& p : schema.properties) {
    std::size_t size = fixed_size(p.in_type, record.EventHeader.Flags);
    std::size_t used = size;  // the value and its NUL
    if (p.in_type == TDH_INTYPE_UNICODESTRING) {
      while (size + 1 < left && (at[size] | at[size + 1]) != 0) size += 2;
      if (size + 1 >= left) return false;  // no NUL: TDH decides
      used = size + 2;
    } else if (p.in_type == TDH_INTYPE_ANSISTRING) {
      if (left == 0) return false;  // (memchr may not be given a null pointer)
      const void* nul = std::memchr(at, 0, left);
      if (nul == nullptr) return false;
      size = static_cast<std::size_t>(static_cast<const std::uint8_t*>(nul) - at);
      used = size + 1;
    } else if (size == 0 || size > left) {
      return false;
    }
    std::string value = agent::value_text(p.in_type, at, size);
    if (value.size() > agent::kMaxValueText) {
      value.resize(agent::kMaxValueText);
      value += "...";
    }
    e.fields.push_back({p.name, std::move(value)});
    at += used;
    left -= used;
  }
  return true;
}

void EventDecoder::decode(const EVENT_RECORD& record, Event& e) {
  const Schema& schema = schema_of(record);
  if (schema.status != ERROR_SUCCESS) {
    e.decode_status = schema.status;
    return;
  }
  if (schema.in_place && read_in_place(schema, record, e)) {
    e.name = schema.name;
    return;
  }
  e.fields.clear();
  decode_through_tdh(record, e);
}

void decode_through_tdh(const EVENT_RECORD& record, Event& e) {
  const nlohmann::json decoded = agent::decode_event(record, 0);
  if (decoded.contains("status")) {
    e.decode_status = decoded["status"].get<ULONG>();
    return;
  }
  e.name = decoded.value("name", "");
  for (const nlohmann::json& f : decoded.value("fields", nlohmann::json::array())) {
    e.fields.push_back({f.value("name", ""), f.value("value", "")});
  }
}

}  // namespace etwh::testing
