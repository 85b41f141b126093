// The ETW provider name hash (capture.h, provider_id_from_name): SHA-1 (FIPS 180-4) over the
// namespace bytes and the upper-cased name in UTF-16BE. Only ASCII letters are upper-cased:
// provider names are ASCII in practice, and the hash of any other name stays well defined.
#include "etwh/testing/capture.h"

#include <etwh/utf16.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

namespace etwh::testing {
namespace {

std::uint32_t rotl(std::uint32_t v, int n) { return (v << n) | (v >> (32 - n)); }

std::array<std::uint8_t, 20> sha1(std::vector<std::uint8_t> m) {
  std::uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
  const std::uint64_t bits = std::uint64_t{m.size()} * 8;
  m.push_back(0x80);
  while (m.size() % 64 != 56) m.push_back(0);
  for (int i = 7; i >= 0; --i) m.push_back(static_cast<std::uint8_t>(bits >> (8 * i)));
  for (std::size_t block = 0; block < m.size(); block += 64) {
    std::uint32_t w[80];
    for (int t = 0; t < 16; ++t) {
      const std::uint8_t* p = &m[block + 4 * t];
      w[t] =
          std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3];
    }
    for (int t = 16; t < 80; ++t) w[t] = rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
    std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int t = 0; t < 80; ++t) {
      std::uint32_t f, k;
      if (t < 20) {
        f = (b & c) | (~b & d), k = 0x5A827999;
      } else if (t < 40) {
        f = b ^ c ^ d, k = 0x6ED9EBA1;
      } else if (t < 60) {
        f = (b & c) | (b & d) | (c & d), k = 0x8F1BBCDC;
      } else {
        f = b ^ c ^ d, k = 0xCA62C1D6;
      }
      const std::uint32_t next = rotl(a, 5) + f + e + k + w[t];
      e = d, d = c, c = rotl(b, 30), b = a, a = next;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
  }
  std::array<std::uint8_t, 20> out{};
  for (int i = 0; i < 20; ++i) out[i] = static_cast<std::uint8_t>(h[i / 4] >> (24 - 8 * (i % 4)));
  return out;
}

// UTF-8 to UTF-16; a malformed sequence becomes U+FFFD.
std::u16string utf16_of(std::string_view text) {
  std::u16string out;
  for (std::size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const int extra = lead < 0x80 ? 0 : lead >= 0xF0 ? 3 : lead >= 0xE0 ? 2 : lead >= 0xC0 ? 1 : -1;
    char32_t c = extra == 0 ? lead : extra == 1 ? lead & 0x1F : extra == 2 ? lead & 0x0F : lead & 7;
    bool ok = extra >= 0 && i + static_cast<std::size_t>(extra) < text.size();
    for (int k = 1; ok && k <= extra; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      ok = (next & 0xC0) == 0x80;
      c = (c << 6) | (next & 0x3F);
    }
    i += ok ? 1 + extra : 1;
    utf16::append_utf16(out, ok && c <= 0x10FFFF && !utf16::is_surrogate(c) ? c : U'\uFFFD');
  }
  return out;
}

}  // namespace

GUID provider_id_from_name(std::string_view name) {
  // 482C2DB2-C390-47C8-87F8-1A15BFC130FB, in network byte order.
  std::vector<std::uint8_t> input = {0x48, 0x2C, 0x2D, 0xB2, 0xC3, 0x90, 0x47, 0xC8,
                                     0x87, 0xF8, 0x1A, 0x15, 0xBF, 0xC1, 0x30, 0xFB};
  const std::u16string units = utf16_of(name);
  for (char16_t unit : units) {
    if (unit >= u'a' && unit <= u'z') unit = static_cast<char16_t>(unit - u'a' + u'A');
    input.push_back(static_cast<std::uint8_t>(unit >> 8));
    input.push_back(static_cast<std::uint8_t>(unit & 0xff));
  }
  std::array<std::uint8_t, 20> hash = sha1(std::move(input));
  hash[7] = static_cast<std::uint8_t>((hash[7] & 0x0F) | 0x50);
  // The first 16 bytes as a GUID's in-memory form: Data1..Data3 little-endian.
  GUID id;
  id.Data1 = std::uint32_t{hash[0]} | std::uint32_t{hash[1]} << 8 | std::uint32_t{hash[2]} << 16 |
             std::uint32_t{hash[3]} << 24;
  id.Data2 = static_cast<unsigned short>(hash[4] | hash[5] << 8);
  id.Data3 = static_cast<unsigned short>(hash[6] | hash[7] << 8);
  std::memcpy(id.Data4, &hash[8], 8);
  return id;
}

}  // namespace etwh::testing
