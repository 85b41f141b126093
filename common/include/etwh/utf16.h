// UTF-16 (Windows' wide text) and UTF-8, converted one code point at a time: the one encoder
// of etwrt's W entry points and TDH, and of the agent's decoding of events on every platform.
// Header-only, standard C++ only, so that the mingw-w64 build of the agent includes it too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace etwh::utf16 {

inline bool is_surrogate(char32_t c) { return c >= 0xD800 && c <= 0xDFFF; }

// The code point that starts at units[i], i moved past it: a high surrogate followed by a low
// one is one code point; an unpaired surrogate comes back as itself (is_surrogate).
inline char32_t next_code_point(std::u16string_view units, std::size_t& i) {
  char32_t c = units[i++];
  if (c >= 0xD800 && c <= 0xDBFF && i < units.size() && units[i] >= 0xDC00 && units[i] <= 0xDFFF) {
    c = 0x10000 + ((c - 0xD800) << 10) + (units[i++] - 0xDC00);
  }
  return c;
}

inline void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

// A code point below 0x110000 as one unit, or two (a surrogate pair) above 0xFFFF.
inline void append_utf16(std::u16string& out, char32_t c) {
  if (c >= 0x10000) {
    out.push_back(static_cast<char16_t>(0xD800 + ((c - 0x10000) >> 10)));
    out.push_back(static_cast<char16_t>(0xDC00 + ((c - 0x10000) & 0x3FF)));
  } else {
    out.push_back(static_cast<char16_t>(c));
  }
}

// UTF-16 to UTF-8 into `out` (cleared first); false at an unpaired surrogate, since Windows
// names are UTF-16, not UCS-2.
inline bool to_utf8(std::u16string_view units, std::string& out) {
  out.clear();
  for (std::size_t i = 0; i < units.size();) {
    const char32_t c = next_code_point(units, i);
    if (is_surrogate(c)) return false;
    append_utf8(out, c);
  }
  return true;
}

// Little-endian UTF-16 bytes, `units` units at most and up to the first NUL, as UTF-8; an
// unpaired surrogate is encoded as its own code point (a decoder shows what the bytes hold).
inline std::string utf8_of_le_units(const std::uint8_t* bytes, std::size_t units) {
  std::u16string text;
  for (std::size_t i = 0; i < units; ++i) {
    const auto unit = static_cast<char16_t>(bytes[2 * i] | (bytes[2 * i + 1] << 8));
    if (unit == 0) break;
    text.push_back(unit);
  }
  std::string out;
  for (std::size_t i = 0; i < text.size();) append_utf8(out, next_code_point(text, i));
  return out;
}

// The NUL-terminated name at byte `offset` of a TDH information block (TRACE_EVENT_INFO and
// the like), as UTF-8: "" for offset 0 (the block has no such name) or one past its end.
inline std::string utf8_name_at(const std::vector<std::uint8_t>& info, std::size_t offset) {
  if (offset == 0 || offset >= info.size()) return {};
  return utf8_of_le_units(info.data() + offset, (info.size() - offset) / 2);
}

}  // namespace etwh::utf16
