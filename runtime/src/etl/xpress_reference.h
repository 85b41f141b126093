// MS-XCA 2.4.4's LZ77 decoding loop as written, byte by byte: the reference that the reader's
// block-copying decompressor (xpress.h) must agree with, for its tests and its fuzz target.
// Test code only: slow by design.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace etwrt::etl::testing {

// Decodes `in` into `out`: the bytes written, or -1 where the decompressor must fail (a stream
// cut short, a match reaching before the output's start, more output than `out` holds).
inline std::ptrdiff_t reference_lz77(std::span<const std::byte> in, std::span<std::byte> out) {
  const std::size_t size = in.size();
  std::size_t ip = 0, op = 0, half = 0;
  std::uint32_t flags = 0;
  int count = 0;
  const auto byte = [&](std::size_t at) { return std::to_integer<std::uint32_t>(in[at]); };
  const auto u16 = [&](std::size_t at) { return byte(at) | (byte(at + 1) << 8); };
  for (;;) {
    if (count == 0) {
      if (size - ip < 4) return ip == size ? static_cast<std::ptrdiff_t>(op) : -1;
      flags = u16(ip) | (u16(ip + 2) << 16);
      ip += 4;
      count = 32;
    }
    --count;
    if (ip == size) return static_cast<std::ptrdiff_t>(op);
    if ((flags & (1U << count)) == 0) {
      if (op == out.size()) return -1;
      out[op++] = in[ip++];
      continue;
    }
    if (size - ip < 2) return -1;
    const std::uint32_t match = u16(ip);
    ip += 2;
    std::size_t length = match % 8;
    if (length == 7) {
      if (half == 0) {  // The first of two long lengths: its low half byte, the high one kept.
        if (ip == size) return -1;
        half = ip;
        length = byte(ip++) % 16;
      } else {
        length = byte(half) / 16;
        half = 0;
      }
      if (length == 15) {
        if (ip == size) return -1;
        length = byte(ip++);
        if (length == 255) {
          if (size - ip < 2) return -1;
          length = u16(ip);
          ip += 2;
          if (length == 0) {
            if (size - ip < 4) return -1;
            length = u16(ip) | (u16(ip + 2) << 16);
            ip += 4;
          }
          if (length < 22) return -1;
          length -= 22;
        }
        length += 15;
      }
      length += 7;
    }
    length += 3;
    const std::size_t offset = match / 8 + 1;
    if (offset > op || length > out.size() - op) return -1;
    for (std::size_t i = 0; i < length; ++i, ++op) out[op] = out[op - offset];
  }
}

}  // namespace etwrt::etl::testing
