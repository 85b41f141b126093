#include "win32_text.h"

#include <cstdio>

namespace etwh {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads exactly `digits` hex digits from text at pos.
std::optional<std::uint64_t> read_hex(std::string_view text, std::size_t pos, int digits) {
  std::uint64_t value = 0;
  for (int i = 0; i < digits; ++i) {
    int d = hex_digit(text[pos + static_cast<std::size_t>(i)]);
    if (d < 0) return std::nullopt;
    value = (value << 4) | static_cast<std::uint64_t>(d);
  }
  return value;
}

}  // namespace

std::string format_guid(const GUID& g) {
  char buf[39];
  std::snprintf(buf, sizeof buf, "{%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x}",
                static_cast<unsigned>(g.Data1), g.Data2, g.Data3, g.Data4[0], g.Data4[1],
                g.Data4[2], g.Data4[3], g.Data4[4], g.Data4[5], g.Data4[6], g.Data4[7]);
  return buf;
}

std::optional<GUID> parse_guid(std::string_view text) {
  if (text.size() == 38) {
    if (text.front() != '{' || text.back() != '}') return std::nullopt;
    text = text.substr(1, 36);
  }
  if (text.size() != 36 || text[8] != '-' || text[13] != '-' || text[18] != '-' ||
      text[23] != '-') {
    return std::nullopt;
  }
  auto d1 = read_hex(text, 0, 8);
  auto d2 = read_hex(text, 9, 4);
  auto d3 = read_hex(text, 14, 4);
  if (!d1 || !d2 || !d3) return std::nullopt;
  GUID g{};
  g.Data1 = static_cast<std::uint32_t>(*d1);
  g.Data2 = static_cast<std::uint16_t>(*d2);
  g.Data3 = static_cast<std::uint16_t>(*d3);
  static constexpr std::size_t kByteAt[8] = {19, 21, 24, 26, 28, 30, 32, 34};
  for (int i = 0; i < 8; ++i) {
    auto b = read_hex(text, kByteAt[i], 2);
    if (!b) return std::nullopt;
    g.Data4[i] = static_cast<std::uint8_t>(*b);
  }
  return g;
}

std::string format_hex(std::uint64_t value) {
  char buf[19];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(value));
  return buf;
}

std::optional<std::uint64_t> parse_hex(std::string_view text) {
  if (text.size() < 3 || text.size() > 18 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X')) {
    return std::nullopt;
  }
  return read_hex(text, 2, static_cast<int>(text.size() - 2));
}

std::string bytes_to_hex(const void* data, std::size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  const auto* p = static_cast<const std::uint8_t*>(data);
  for (std::size_t i = 0; i < size; ++i) {
    out.push_back(kDigits[p[i] >> 4]);
    out.push_back(kDigits[p[i] & 0xF]);
  }
  return out;
}

std::optional<std::vector<std::uint8_t>> hex_to_bytes(std::string_view text) {
  if (text.size() % 2 != 0) return std::nullopt;
  std::vector<std::uint8_t> out;
  out.reserve(text.size() / 2);
  for (std::size_t i = 0; i < text.size(); i += 2) {
    auto b = read_hex(text, i, 2);
    if (!b) return std::nullopt;
    out.push_back(static_cast<std::uint8_t>(*b));
  }
  return out;
}

}  // namespace etwh
