// TdhFormatProperty: one property value as text. The sizes of the in-types are those of the
// _TDH_IN_TYPE and EVENT_PROPERTY_INFO pages; where the pages leave the text open the choice is
// written down in docs/etwrt/conformance.md ("TDH formatting").
#include "tdh_manifest.h"

#include <windows.h>
#include <tdh.h>

#include <etwh/tdh_fixed_size.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <span>
#include <string>

namespace {

using Bytes = std::span<const std::uint8_t>;

std::uint64_t le(Bytes b, std::size_t at, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = n; i-- > 0;) v = (v << 8) | b[at + i];
  return v;
}

std::u16string ascii(const std::string& s) { return std::u16string(s.begin(), s.end()); }

std::u16string hex(std::uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llX", static_cast<unsigned long long>(v));
  return ascii(text);
}

std::u16string decimal(std::uint64_t v, bool is_signed, std::size_t bytes) {
  if (!is_signed) return ascii(std::to_string(v));
  const int shift = static_cast<int>(64 - 8 * bytes);  // sign-extends the value's top bit
  return ascii(std::to_string(static_cast<std::int64_t>(v << shift) >> shift));
}

// The shortest text that reads back as the same value.
template <typename T>
std::u16string real(T v) {
  char text[64];
  const auto r = std::to_chars(text, text + sizeof text, v);
  return ascii(std::string(text, r.ptr));
}

std::u16string guid(Bytes b) {
  char text[40];
  std::snprintf(text, sizeof text, "{%08llX-%04llX-%04llX-%02X%02X-%02X%02X%02X%02X%02X%02X}",
                static_cast<unsigned long long>(le(b, 0, 4)),
                static_cast<unsigned long long>(le(b, 4, 2)),
                static_cast<unsigned long long>(le(b, 6, 2)), b[8], b[9], b[10], b[11], b[12],
                b[13], b[14], b[15]);
  return ascii(text);
}

// Days from 1601-01-01 to a civil date and back (proleptic Gregorian, as FILETIME counts).
void civil_from_days(std::int64_t days_since_1601, int& y, int& m, int& d) {
  std::int64_t z = days_since_1601 - 134774 + 719468;  // shift to 0000-03-01
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const std::int64_t doe = z - era * 146097;
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const std::int64_t mp = (5 * doy + 2) / 153;
  d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  y = static_cast<int>(yoe + era * 400 + (m <= 2 ? 1 : 0));
}

std::u16string filetime(std::uint64_t ticks) {
  const std::uint64_t seconds = ticks / 10000000;
  int y = 0, mo = 0, d = 0;
  civil_from_days(static_cast<std::int64_t>(seconds / 86400), y, mo, d);
  const unsigned s = static_cast<unsigned>(seconds % 86400);
  char text[48];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02u:%02u:%02u.%07lluZ", y, mo, d, s / 3600,
                s / 60 % 60, s % 60, static_cast<unsigned long long>(ticks % 10000000));
  return ascii(text);
}

std::u16string systemtime(Bytes b) {  // wYear, wMonth, wDayOfWeek, wDay, wHour, ... wMilliseconds
  char text[48];
  std::snprintf(text, sizeof text, "%04u-%02u-%02uT%02u:%02u:%02u.%03uZ",
                static_cast<unsigned>(le(b, 0, 2)), static_cast<unsigned>(le(b, 2, 2)),
                static_cast<unsigned>(le(b, 6, 2)), static_cast<unsigned>(le(b, 8, 2)),
                static_cast<unsigned>(le(b, 10, 2)), static_cast<unsigned>(le(b, 12, 2)),
                static_cast<unsigned>(le(b, 14, 2)));
  return ascii(text);
}

// S-R-I-S1-...: the identifier authority is 6 bytes big-endian (in hex from 2^32 on).
std::u16string sid(Bytes b) {
  std::uint64_t authority = 0;
  for (int i = 2; i < 8; ++i) authority = (authority << 8) | b[i];
  std::string text = "S-" + std::to_string(b[0]) + "-";
  if (authority >= (std::uint64_t{1} << 32)) {
    char h[20];
    std::snprintf(h, sizeof h, "0x%012llX", static_cast<unsigned long long>(authority));
    text += h;
  } else {
    text += std::to_string(authority);
  }
  for (std::size_t i = 0; i < b[1]; ++i) text += "-" + std::to_string(le(b, 8 + 4 * i, 4));
  return ascii(text);
}

// RFC 5952 text: lower-case hex, the first longest run of two or more zero groups as "::", an
// IPv4-mapped address with its dotted tail.
std::u16string ipv6(Bytes b) {
  std::array<unsigned, 8> g{};
  for (int i = 0; i < 8; ++i) g[i] = (b[2 * i] << 8) | b[2 * i + 1];
  int best = -1, best_len = 1;
  for (int i = 0; i < 8;) {
    int j = i;
    while (j < 8 && g[j] == 0) ++j;
    if (j - i > best_len) best = i, best_len = j - i;
    i = j == i ? i + 1 : j;
  }
  const bool mapped = best == 0 && best_len == 5 && g[5] == 0xFFFF;
  std::string text;
  char part[24];
  for (int i = 0; i < (mapped ? 6 : 8); ++i) {
    if (i == best) {
      text += "::";
      i += best_len - 1;
      continue;
    }
    if (!text.empty() && text.back() != ':') text += ":";
    std::snprintf(part, sizeof part, "%x", g[i]);
    text += part;
  }
  if (mapped) {
    std::snprintf(part, sizeof part, ":%u.%u.%u.%u", b[12], b[13], b[14], b[15]);
    text += part;
  }
  return ascii(text);
}

std::u16string binary(Bytes b) {
  if (b.empty()) return {};
  std::string text = "0x";
  char h[3];
  for (std::uint8_t c : b) {
    std::snprintf(h, sizeof h, "%02X", c);
    text += h;
  }
  return ascii(text);
}

// UTF-16LE units up to the first NUL; ANSI text is read as UTF-8 (etwrt's code page).
std::u16string text16(Bytes b) {
  std::u16string s;
  for (std::size_t i = 0; i + 1 < b.size(); i += 2) {
    const auto c = static_cast<char16_t>(b[i] | (b[i + 1] << 8));
    if (c == 0) break;
    s.push_back(c);
  }
  return s;
}
std::u16string text8(Bytes b) {
  const auto* p = reinterpret_cast<const char*>(b.data());
  return etwrt::tdh::utf16(std::string(p, std::find(p, p + b.size(), '\0')));
}

}  // namespace

namespace {

// Bytes of the value at the start of `data` (what UserDataConsumed reports), SIZE_MAX when the
// data ends inside it, 0 for an in-type etwrt does not format.
std::size_t value_size(USHORT in, USHORT out, ULONG pointer_size, USHORT length, Bytes data) {
  const std::size_t left = data.size();
  auto through_nul = [&](std::size_t unit) -> std::size_t {
    if (length > 0) return std::size_t{length} * unit;  // a length in characters
    for (std::size_t i = 0; i + unit <= left; i += unit) {
      if (le(data, i, unit) == 0) return i + unit;
    }
    return SIZE_MAX;
  };
  auto prefixed = [&](std::size_t prefix, bool big_endian) -> std::size_t {
    if (left < prefix) return SIZE_MAX;
    std::uint64_t n = le(data, 0, prefix);
    if (big_endian) n = ((n & 0xFF) << 8) | (n >> 8);
    return prefix + static_cast<std::size_t>(n);
  };
  switch (in) {
    case TDH_INTYPE_ANSICHAR: return 1;
    case TDH_INTYPE_UNICODECHAR: return 2;
    case TDH_INTYPE_SYSTEMTIME: return 16;
    case TDH_INTYPE_POINTER:
    case TDH_INTYPE_SIZET: return pointer_size == 4 || pointer_size == 8 ? pointer_size : 0;
    case TDH_INTYPE_UNICODESTRING: return through_nul(2);
    case TDH_INTYPE_ANSISTRING: return through_nul(1);
    case TDH_INTYPE_MANIFEST_COUNTEDSTRING:
    case TDH_INTYPE_MANIFEST_COUNTEDANSISTRING:
    case TDH_INTYPE_MANIFEST_COUNTEDBINARY:
    case TDH_INTYPE_COUNTEDSTRING:
    case TDH_INTYPE_COUNTEDANSISTRING: return prefixed(2, false);
    case TDH_INTYPE_REVERSEDCOUNTEDSTRING:
    case TDH_INTYPE_REVERSEDCOUNTEDANSISTRING: return prefixed(2, true);
    case TDH_INTYPE_HEXDUMP: return prefixed(4, false);
    case TDH_INTYPE_NONNULLTERMINATEDSTRING:
    case TDH_INTYPE_NONNULLTERMINATEDANSISTRING: return length > 0 ? length : left;
    case TDH_INTYPE_BINARY:  // TdhFormatProperty page: an IPv6 address of length 0 is 16 bytes
      return length == 0 && out == TDH_OUTTYPE_IPV6 ? 16 : length;
    case TDH_INTYPE_SID: return left < 2 ? SIZE_MAX : 8 + 4 * std::size_t{data[1]};
    case TDH_INTYPE_WBEMSID: {  // a TOKEN_USER (two pointers) then the SID
      if (pointer_size != 4 && pointer_size != 8) return 0;
      const std::size_t token = 2 * std::size_t{pointer_size};
      return left < token + 2 ? SIZE_MAX : token + 8 + 4 * std::size_t{data[token + 1]};
    }
    default: return etwh::tdh_fixed_size(in);  // 0 for an in-type etwrt does not format
  }
}

// A mapped integer: a value map's text, or a bit map's texts joined by " | "; the number in
// decimal when nothing matches. Texts as the map holds them (a manifest's end with a space).
std::u16string mapped(const EVENT_MAP_INFO& map, std::uint32_t v) {
  const auto* base = reinterpret_cast<const std::uint8_t*>(&map);
  auto text = [&](const EVENT_MAP_ENTRY& e) {
    std::u16string s;
    for (const auto* p = base + e.OutputOffset; (p[0] | p[1]) != 0; p += 2) {
      s.push_back(static_cast<char16_t>(p[0] | (p[1] << 8)));
    }
    return s;
  };
  const bool bitmap =
      (map.Flag & (EVENTMAP_INFO_FLAG_MANIFEST_BITMAP | EVENTMAP_INFO_FLAG_WBEM_BITMAP)) != 0;
  std::u16string out;
  for (ULONG i = 0; i < map.EntryCount; ++i) {
    const EVENT_MAP_ENTRY& e = map.MapEntryArray[i];
    if (!bitmap && e.Value == v) return text(e);
    if (bitmap && e.Value != 0 && (v & e.Value) == e.Value) {
      if (!out.empty()) out += u" | ";
      out += text(e);
    }
  }
  return out.empty() ? decimal(v, false, 4) : out;
}

bool is_hex_out(USHORT out) {
  return out == TDH_OUTTYPE_HEXINT8 || out == TDH_OUTTYPE_HEXINT16 || out == TDH_OUTTYPE_HEXINT32 ||
         out == TDH_OUTTYPE_HEXINT64 || out == TDH_OUTTYPE_WIN32ERROR ||
         out == TDH_OUTTYPE_NTSTATUS || out == TDH_OUTTYPE_HRESULT || out == TDH_OUTTYPE_ERRORCODE;
}

std::u16string integer(USHORT in, USHORT out, const EVENT_MAP_INFO* map, Bytes v) {
  const std::uint64_t n = le(v, 0, v.size());
  const bool is_signed = in == TDH_INTYPE_INT8 || in == TDH_INTYPE_INT16 ||
                         in == TDH_INTYPE_INT32 || in == TDH_INTYPE_INT64;
  if (map != nullptr && !is_signed && v.size() <= 4) return mapped(*map, static_cast<ULONG>(n));
  if (in == TDH_INTYPE_HEXINT32 || in == TDH_INTYPE_HEXINT64 || is_hex_out(out)) return hex(n);
  if (out == TDH_OUTTYPE_BOOLEAN) return n != 0 ? u"true" : u"false";
  if (out == TDH_OUTTYPE_IPV4 && v.size() == 4) {
    return ascii(std::to_string(v[0]) + "." + std::to_string(v[1]) + "." + std::to_string(v[2]) +
                 "." + std::to_string(v[3]));
  }
  if (out == TDH_OUTTYPE_PORT && v.size() == 2) return decimal((v[0] << 8) | v[1], false, 2);
  return decimal(n, is_signed, v.size());
}

// The text of value `v` (its bytes, value_size of them).
std::u16string text_of(USHORT in, USHORT out, const EVENT_MAP_INFO* map, ULONG pointer_size,
                       Bytes v) {
  switch (in) {
    case TDH_INTYPE_FLOAT: {
      float f;
      std::memcpy(&f, v.data(), 4);
      return real(f);
    }
    case TDH_INTYPE_DOUBLE: {
      double d;
      std::memcpy(&d, v.data(), 8);
      return real(d);
    }
    case TDH_INTYPE_BOOLEAN: return le(v, 0, 4) != 0 ? u"true" : u"false";
    case TDH_INTYPE_GUID: return guid(v);
    case TDH_INTYPE_POINTER:
    case TDH_INTYPE_SIZET: return hex(le(v, 0, v.size()));
    case TDH_INTYPE_FILETIME: return filetime(le(v, 0, 8));
    case TDH_INTYPE_SYSTEMTIME: return systemtime(v);
    case TDH_INTYPE_SID: return sid(v);
    case TDH_INTYPE_WBEMSID: return sid(v.subspan(2 * pointer_size));
    case TDH_INTYPE_UNICODESTRING:
    case TDH_INTYPE_NONNULLTERMINATEDSTRING:
    case TDH_INTYPE_UNICODECHAR: return text16(v);
    case TDH_INTYPE_ANSISTRING:
    case TDH_INTYPE_NONNULLTERMINATEDANSISTRING:
    case TDH_INTYPE_ANSICHAR: return text8(v);
    case TDH_INTYPE_MANIFEST_COUNTEDSTRING:
    case TDH_INTYPE_COUNTEDSTRING:
    case TDH_INTYPE_REVERSEDCOUNTEDSTRING: return text16(v.subspan(2));
    case TDH_INTYPE_MANIFEST_COUNTEDANSISTRING:
    case TDH_INTYPE_COUNTEDANSISTRING:
    case TDH_INTYPE_REVERSEDCOUNTEDANSISTRING: return text8(v.subspan(2));
    case TDH_INTYPE_MANIFEST_COUNTEDBINARY: return binary(v.subspan(2));
    case TDH_INTYPE_HEXDUMP: return binary(v.subspan(4));
    case TDH_INTYPE_BINARY: return out == TDH_OUTTYPE_IPV6 && v.size() == 16 ? ipv6(v) : binary(v);
    default: return integer(in, out, map, v);
  }
}

ULONG format_property(const EVENT_MAP_INFO* map, ULONG pointer_size, USHORT in, USHORT out,
                      USHORT length, Bytes data, ULONG* buffer_size, WCHAR* buffer,
                      USHORT* consumed) {
  const std::size_t size = value_size(in, out, pointer_size, length, data);
  if (size == 0 && in != TDH_INTYPE_BINARY && in != TDH_INTYPE_NONNULLTERMINATEDSTRING &&
      in != TDH_INTYPE_NONNULLTERMINATEDANSISTRING) {
    return ERROR_INVALID_PARAMETER;  // an in-type (or pointer size) etwrt does not format
  }
  if (size == SIZE_MAX || size > data.size()) return ERROR_EVT_INVALID_EVENT_DATA;
  const std::u16string text = text_of(in, out, map, pointer_size, data.first(size));
  const std::size_t needed = (text.size() + 1) * sizeof(WCHAR);
  *consumed = static_cast<USHORT>(size);
  if (buffer == nullptr || *buffer_size < needed) {
    *buffer_size = static_cast<ULONG>(needed);
    return ERROR_INSUFFICIENT_BUFFER;
  }
  for (std::size_t i = 0; i < text.size(); ++i) buffer[i] = static_cast<WCHAR>(text[i]);
  buffer[text.size()] = 0;
  *buffer_size = static_cast<ULONG>(needed);
  return ERROR_SUCCESS;
}

}  // namespace

extern "C" {

TDHAPI TdhFormatProperty(PTRACE_EVENT_INFO EventInfo, PEVENT_MAP_INFO MapInfo, ULONG PointerSize,
                         USHORT PropertyInType, USHORT PropertyOutType, USHORT PropertyLength,
                         USHORT UserDataLength, PBYTE UserData, PULONG BufferSize, PWCHAR Buffer,
                         PUSHORT UserDataConsumed) {
  if (EventInfo == nullptr || BufferSize == nullptr || UserDataConsumed == nullptr ||
      (UserData == nullptr && UserDataLength != 0)) {
    return ERROR_INVALID_PARAMETER;
  }
  try {
    return format_property(MapInfo, PointerSize, PropertyInType, PropertyOutType, PropertyLength,
                           Bytes(UserData, UserData == nullptr ? 0 : UserDataLength), BufferSize,
                           Buffer, UserDataConsumed);
  } catch (const std::bad_alloc&) {
    return ERROR_NOT_ENOUGH_MEMORY;
  }
}

}  // extern "C"
