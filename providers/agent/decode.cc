#include "decode.h"

#include "win32_text.h"

#include <etwh/utf16.h>

#include <tdh.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace etwh::agent {
namespace {

using etwh::utf16::utf8_name_at;
using etwh::utf16::utf8_of_le_units;
using nlohmann::json;

constexpr ULONG kWhole = 0xFFFFFFFF;  // PROPERTY_DATA_DESCRIPTOR.ArrayIndex: not an element
constexpr ULONG kMaxElements = 16;    // of an array shown; the rest is summarized

// A value's bytes (a view: the testing library's decoder reads them in place).
struct Bytes {
  const std::uint8_t* p;
  std::size_t n;
  std::size_t size() const { return n; }
  bool empty() const { return n == 0; }
  const std::uint8_t* data() const { return p; }
  std::uint8_t operator[](std::size_t i) const { return p[i]; }
};

std::uint64_t le(Bytes b) {
  std::uint64_t v = 0;
  for (std::size_t i = b.size(); i-- > 0;) v = (v << 8) | b[i];
  return v;
}

// A value of a fixed-size type read from bytes of exactly its size (the caller checked).
template <class T>
T value_of(Bytes b) {
  T v;
  std::memcpy(&v, b.data(), sizeof v);
  return v;
}

// One value's bytes as text, by its InType; bytes TDH gave in another size than the type's
// are shown as hex.
std::string text_of(USHORT in_type, Bytes b) {
  const auto sized = [&](std::size_t n) { return b.size() == n; };
  auto sign = [&](std::size_t n) {
    const std::uint64_t v = le(b);
    const std::uint64_t bit = std::uint64_t{1} << (8 * n - 1);
    return std::to_string(static_cast<std::int64_t>((v ^ bit) - bit));
  };
  switch (in_type) {
    case TDH_INTYPE_UNICODESTRING:
    case TDH_INTYPE_MANIFEST_COUNTEDSTRING: return utf8_of_le_units(b.data(), b.size() / 2);
    case TDH_INTYPE_ANSISTRING:
    case TDH_INTYPE_MANIFEST_COUNTEDANSISTRING:
      // An empty string's bytes may have no address (strnlen wants one).
      if (b.empty()) return {};
      return std::string(reinterpret_cast<const char*>(b.data()),
                         strnlen(reinterpret_cast<const char*>(b.data()), b.size()));
    case TDH_INTYPE_INT8:
      if (sized(1)) return sign(1);
      break;
    case TDH_INTYPE_INT16:
      if (sized(2)) return sign(2);
      break;
    case TDH_INTYPE_INT32:
      if (sized(4)) return sign(4);
      break;
    case TDH_INTYPE_INT64:
      if (sized(8)) return std::to_string(static_cast<std::int64_t>(le(b)));
      break;
    case TDH_INTYPE_UINT8:
    case TDH_INTYPE_UINT16:
    case TDH_INTYPE_UINT32:
    case TDH_INTYPE_UINT64:
    case TDH_INTYPE_FILETIME:
      if (b.size() <= 8 && !b.empty()) return std::to_string(le(b));
      break;
    case TDH_INTYPE_HEXINT32:
    case TDH_INTYPE_HEXINT64:
    case TDH_INTYPE_POINTER:
      if (b.size() <= 8 && !b.empty()) return format_hex(le(b));
      break;
    case TDH_INTYPE_BOOLEAN:
      if (sized(4)) return le(b) != 0 ? "true" : "false";
      break;
    case TDH_INTYPE_FLOAT:
      if (sized(sizeof(float))) return std::to_string(value_of<float>(b));
      break;
    case TDH_INTYPE_DOUBLE:
      if (sized(sizeof(double))) return std::to_string(value_of<double>(b));
      break;
    case TDH_INTYPE_GUID:
      if (sized(sizeof(GUID))) return format_guid(value_of<GUID>(b));
      break;
    default: break;
  }
  return "0x" + bytes_to_hex(b.data(), b.size());
}

// The bytes of property `name` (element `index`); false when TDH refuses.
bool property(EVENT_RECORD& r, const std::vector<WCHAR>& name, ULONG index,
              std::vector<std::uint8_t>& out) {
  PROPERTY_DATA_DESCRIPTOR d{};
  d.PropertyName = reinterpret_cast<ULONGLONG>(name.data());
  d.ArrayIndex = index;
  ULONG size = 0;
  if (TdhGetPropertySize(&r, 0, nullptr, 1, &d, &size) != ERROR_SUCCESS) return false;
  out.assign(size, 0);
  return size == 0 || TdhGetProperty(&r, 0, nullptr, 1, &d, size, out.data()) == ERROR_SUCCESS;
}

std::string text_of(USHORT in_type, const std::vector<std::uint8_t>& b) {
  return text_of(in_type, Bytes{b.data(), b.size()});
}

std::string value_of(EVENT_RECORD& r, const EVENT_PROPERTY_INFO& p,
                     const std::vector<WCHAR>& name) {
  if ((p.Flags & PropertyStruct) != 0) return "(struct)";
  const USHORT in_type = p.nonStructType.InType;
  std::vector<std::uint8_t> bytes;
  const bool array = (p.Flags & (PropertyParamCount | PropertyParamFixedCount)) != 0 || p.count > 1;
  if (!array) return property(r, name, kWhole, bytes) ? text_of(in_type, bytes) : "(undecodable)";
  std::string out = "[";
  ULONG i = 0;
  for (; i < kMaxElements && property(r, name, i, bytes); ++i) {
    out += (i ? ", " : "") + text_of(in_type, bytes);
  }
  if (i == kMaxElements && property(r, name, i, bytes)) out += ", ...";
  return out + "]";
}

}  // namespace

std::string value_text(USHORT in_type, const std::uint8_t* bytes, std::size_t size) {
  return text_of(in_type, Bytes{bytes, size});
}

std::vector<std::uint8_t> event_information(const EVENT_RECORD& record, ULONG& status) {
  EVENT_RECORD r = record;  // TDH takes a non-const record
  ULONG size = 0;
  status = TdhGetEventInformation(&r, 0, nullptr, nullptr, &size);
  std::vector<std::uint8_t> info(size);
  if (status == ERROR_INSUFFICIENT_BUFFER) {
    status = TdhGetEventInformation(&r, 0, nullptr,
                                    reinterpret_cast<TRACE_EVENT_INFO*>(info.data()), &size);
  }
  return info;
}

json decode_event(const EVENT_RECORD& record, std::size_t skip) {
  EVENT_RECORD r = record;
  if (skip > 0 && r.UserData != nullptr && r.UserDataLength >= skip) {
    r.UserData = static_cast<std::uint8_t*>(r.UserData) + skip;
    r.UserDataLength = static_cast<USHORT>(r.UserDataLength - skip);
  }
  ULONG status = ERROR_SUCCESS;
  const std::vector<std::uint8_t> info = event_information(r, status);
  if (status != ERROR_SUCCESS) return {{"status", status}};
  const auto& t = *reinterpret_cast<const TRACE_EVENT_INFO*>(info.data());
  json fields = json::array();
  for (ULONG i = 0; i < t.TopLevelPropertyCount && i < t.PropertyCount; ++i) {
    const EVENT_PROPERTY_INFO& p = t.EventPropertyInfoArray[i];
    std::vector<WCHAR> name;  // as TDH wants it back: its own UTF-16 units
    for (std::size_t at = p.NameOffset; at + 1 < info.size(); at += 2) {
      const auto unit = static_cast<WCHAR>(info[at] | (info[at + 1] << 8));
      name.push_back(unit);
      if (unit == 0) break;
    }
    std::string value = value_of(r, p, name);
    if (value.size() > kMaxValueText) value = value.substr(0, kMaxValueText) + "...";
    fields.push_back({{"name", utf8_name_at(info, p.NameOffset)}, {"value", std::move(value)}});
  }
  // EventNameOffset shares its place with ActivityIDNameOffset (a union); older SDK headers
  // name only the latter.
  return {{"name", utf8_name_at(info, t.ActivityIDNameOffset)}, {"fields", std::move(fields)}};
}

}  // namespace etwh::agent
