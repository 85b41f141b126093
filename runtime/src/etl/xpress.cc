// etwrt: MS-XCA plain LZ77 decompression (xpress.h).
#include "xpress.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace etwrt::etl {
namespace {

// A bounds-checked cursor over the compressed input.
struct Input {
  const std::uint8_t* data;
  std::size_t size;
  std::size_t pos = 0;

  bool has(std::size_t n) const { return size - pos >= n; }
  std::uint32_t u8() { return data[pos++]; }
  std::uint32_t u16() {
    const std::uint32_t v = data[pos] | (std::uint32_t{data[pos + 1]} << 8);
    pos += 2;
    return v;
  }
  std::uint32_t u32() {
    std::uint32_t v;
    std::memcpy(&v, data + pos, 4);  // Little-endian hosts only, as all of etwrt.
    pos += 4;
    return v;
  }
};

// The match length past its 3 bits (MS-XCA 2.4.4): a shared half byte, then a byte, then 2 or
// 4 bytes. Returns false on a truncated or invalid encoding.
bool long_length(Input& in, std::size_t& half_byte_at, std::size_t& length) {
  if (half_byte_at == 0) {
    if (!in.has(1)) return false;
    half_byte_at = in.pos;
    length = in.u8() & 15;
  } else {
    length = in.data[half_byte_at] >> 4;
    half_byte_at = 0;
  }
  if (length == 15) {
    if (!in.has(1)) return false;
    length = in.u8();
    if (length == 255) {
      if (!in.has(2)) return false;
      length = in.u16();
      if (length == 0) {
        if (!in.has(4)) return false;
        length = in.u32();
      }
      if (length < 15 + 7) return false;
      length -= 15 + 7;
    }
    length += 15;
  }
  length += 7;
  return true;
}

// Copies a match: byte by byte where it overlaps its own output (MS-XCA), else at once.
void copy_match(std::uint8_t* out, std::size_t at, std::size_t offset, std::size_t length) {
  std::uint8_t* dst = out + at;
  const std::uint8_t* src = dst - offset;
  if (offset >= length) {
    std::memcpy(dst, src, length);
    return;
  }
  if (offset == 1) {  // A run of one byte (the zeros of ETW records, mostly).
    std::memset(dst, *src, length);
    return;
  }
  // The output repeats with period `offset`: copy one period, then double what is there (each
  // copy's length is a multiple of the period, so the pattern continues), as MS-XCA's
  // byte-by-byte loop would write it.
  std::memcpy(dst, src, offset);
  for (std::size_t done = offset; done < length; done *= 2) {
    std::memcpy(dst + done, dst, std::min(done, length - done));
  }
}

// A match of at most 64 bytes with room for 16 more past it: 8-byte copies that may write
// past `length` (what follows overwrites it). Each copy reads bytes already written: from
// `offset` back when that is at least 8, else from the smallest multiple of `offset` that is,
// after its first bytes are written one by one (the output repeats with period `offset`).
void wild_copy(std::uint8_t* dst, std::size_t offset, std::size_t length) {
  if (offset >= 8) {
    const std::uint8_t* src = dst - offset;
    for (std::size_t i = 0; i < length; i += 8) std::memcpy(dst + i, src + i, 8);
    return;
  }
  const std::size_t back = (8 + offset - 1) / offset * offset;
  const std::uint8_t* period = dst - offset;
  for (std::size_t i = 0; i < back; ++i) dst[i] = period[i];
  for (std::size_t i = back; i < length; i += 8) std::memcpy(dst + i, dst + (i - back), 8);
}

}  // namespace

std::ptrdiff_t xpress_lz77_decompress(std::span<const std::byte> in_bytes,
                                      std::span<std::byte> out_bytes) {
  Input in{reinterpret_cast<const std::uint8_t*>(in_bytes.data()), in_bytes.size()};
  auto* out = reinterpret_cast<std::uint8_t*>(out_bytes.data());
  const std::size_t out_size = out_bytes.size();
  std::size_t written = 0;
  std::uint32_t flags = 0;
  int flag_count = 0;
  std::size_t half_byte_at = 0;  // 0: no half byte pending (position 0 is always a flag word).
  for (;;) {
    if (flag_count == 0) {
      if (!in.has(4)) return in.pos == in.size ? static_cast<std::ptrdiff_t>(written) : -1;
      flags = in.u32();
      flag_count = 32;
    }
    // A run of literals (flag bits 0, most significant first) is copied at once.
    const std::uint32_t pending = flags << (32 - flag_count);
    if ((pending & 0x80000000U) == 0) {
      const int run = pending == 0 ? flag_count : __builtin_clz(pending);
      std::size_t n = static_cast<std::size_t>(run);
      bool input_ends = false;
      if (in.size - in.pos < n) {
        n = in.size - in.pos;
        input_ends = true;
      }
      if (n > out_size - written) return -1;
      if (in.size - in.pos >= 32 && out_size - written >= 32) {
        std::memcpy(out + written, in.data + in.pos, 32);  // A run is at most 32: no call.
      } else {
        std::memcpy(out + written, in.data + in.pos, n);
      }
      in.pos += n;
      written += n;
      if (input_ends) return static_cast<std::ptrdiff_t>(written);  // Input ends after an item.
      flag_count -= run;
      continue;
    }
    --flag_count;
    if (in.pos == in.size) return static_cast<std::ptrdiff_t>(written);  // MS-XCA's end.
    if (!in.has(2)) return -1;
    const std::uint32_t match = in.u16();
    std::size_t length = match % 8;
    const std::size_t offset = match / 8 + 1;
    if (length == 7 && !long_length(in, half_byte_at, length)) return -1;
    length += 3;
    if (offset > written || length > out_size - written) return -1;
    if (offset >= 16 && length <= 32 && out_size - written >= 32) {
      // Short and far enough back: one or two 16-byte copies, each of bytes already written
      // (the bytes past `length` are overwritten by what follows). Most matches take one: a
      // second, reading what the first just stored, waits for it.
      std::memcpy(out + written, out + written - offset, 16);
      if (length > 16) std::memcpy(out + written + 16, out + written + 16 - offset, 16);
    } else if (length <= 64 && out_size - written >= 64 + 16) {
      wild_copy(out + written, offset, length);
    } else {
      copy_match(out, written, offset, length);
    }
    written += length;
  }
}

}  // namespace etwrt::etl
