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

// The half byte two long matches share (MS-XCA 2.4.4): the first takes a new byte's low nibble,
// the second its high nibble. Kept as 0 (none pending) or 0x10 | the high nibble.
using HalfByte = std::uint32_t;

// The match length past its 3 bits (MS-XCA 2.4.4): the shared half byte, then a byte, then 2 or
// 4 bytes. Returns false on a truncated or invalid encoding.
bool long_length(Input& in, HalfByte& half, std::size_t& length) {
  if (half == 0) {
    if (!in.has(1)) return false;
    const std::uint32_t byte = in.u8();
    length = byte & 15;
    half = 0x10 | (byte >> 4);
  } else {
    length = half & 15;
    half = 0;
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
void copy_match(std::uint8_t* dst, std::size_t offset, std::size_t length) {
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

// i % p for p from 1 to 7 and i from 0 to 7: where the first 8 bytes of a match of period p
// take each byte from.
constexpr std::uint8_t kPhase[8][8] = {{},
                                       {0, 0, 0, 0, 0, 0, 0, 0},
                                       {0, 1, 0, 1, 0, 1, 0, 1},
                                       {0, 1, 2, 0, 1, 2, 0, 1},
                                       {0, 1, 2, 3, 0, 1, 2, 3},
                                       {0, 1, 2, 3, 4, 0, 1, 2},
                                       {0, 1, 2, 3, 4, 5, 0, 1},
                                       {0, 1, 2, 3, 4, 5, 6, 0}};
// The smallest multiple of p that is at least 8.
constexpr std::uint8_t kPeriodAtLeast8[8] = {0, 8, 8, 9, 8, 10, 12, 14};

// A match of at most 64 bytes with room for 16 more past it: 8-byte copies that may write
// past `length` (what follows overwrites it). Each copy reads bytes already written: from
// `offset` back when that is at least 8; else the first 8 bytes are placed one by one (the
// output repeats with period `offset`) and each next 8 come from the smallest multiple of
// `offset` back that is at least 8 (the bytes from `offset` before the match on are periodic).
[[gnu::always_inline]] inline void wild_copy(std::uint8_t* dst, std::size_t offset,
                                             std::size_t length) {
  const std::uint8_t* src = dst - offset;
  if (offset >= 8) {
    for (std::size_t i = 0; i < length; i += 8) std::memcpy(dst + i, src + i, 8);
    return;
  }
  const std::uint8_t* phase = kPhase[offset];
  for (std::size_t i = 0; i < 8; ++i) dst[i] = src[phase[i]];
  const std::size_t back = kPeriodAtLeast8[offset];
  for (std::size_t i = 8; i < length; i += 8) std::memcpy(dst + i, dst + i - back, 8);
}

// The input a whole flag group may read: its flag word, 32 items of at most 10 bytes (a match
// with every length byte), and the 32 bytes a literal run's block copy reads.
constexpr std::size_t kGroupInput = 4 + 32 * 10 + 32;
// The output room an item needs to be decoded with block copies: a literal run's 32-byte block,
// then a match's blocks of up to 64 bytes and the 32 they may write past it.
constexpr std::size_t kItemRoom = 32 + 64 + 32;

// Where the fast decoder stopped: the input and output positions, the pending half byte, and
// the flag word with its items left (0: at a group's end).
struct State {
  const std::uint8_t* ip;
  std::uint8_t* op;
  HalfByte half = 0;
  std::uint32_t flags = 0;
  int left = 0;
};

// A length past the half byte's 15 (MS-XCA 2.4.4), the input known to hold its bytes: 22 plus a
// byte, or the 2- or 4-byte length itself. False on an invalid encoding.
bool longer_length(const std::uint8_t*& ip, std::size_t& length) {
  const std::uint32_t byte = *ip++;
  if (byte != 255) {
    length = 15 + 7 + byte;
    return true;
  }
  length = ip[0] | (std::size_t{ip[1]} << 8);
  ip += 2;
  if (length == 0) {
    std::uint32_t v;
    std::memcpy(&v, ip, 4);
    ip += 4;
    length = v;
  }
  return length >= 15 + 7;
}

// Copies a match of `length` at `offset` (both checked against the output) to `op`, whose
// output has `room` (at least 64 + 32 past a match of up to 64 bytes): blocks that may write
// past `length` (what follows overwrites it), each reading bytes already written. Blocks of 16
// bytes, since most matches are short (three in four of a kernel trace's are 3 to 16 bytes):
// two 32-byte blocks per match cost more than they saved on the long ones.
[[gnu::always_inline]] inline void put_match(std::uint8_t* op, std::size_t room, std::size_t offset,
                                             std::size_t length) {
  if (offset >= 16 && room >= length + 32) {  // Most matches: 16-byte blocks, two at least.
    std::memcpy(op, op - offset, 16);
    std::memcpy(op + 16, op + 16 - offset, 16);
    for (std::size_t i = 32; i < length; i += 16) std::memcpy(op + i, op + i - offset, 16);
  } else if (length <= 64 && room >= 64 + 16) {
    wild_copy(op, offset, length);
  } else {
    copy_match(op, offset, length);
  }
}

// Decodes while the input holds a whole group with its bound to spare and the output has an
// item's room, with no input check per item and few branches: each match is preceded by a
// literal run, maybe empty, copied as one block (a sentinel bit below the group's 32 flags ends
// it), and the half byte is read whether or not the match is long. False on an invalid stream;
// `s` says where it stopped.
bool decode_fast(State& s, const std::uint8_t* ip_end, std::uint8_t* op_begin,
                 std::uint8_t* op_end) {
  const std::uint8_t* ip = s.ip;
  std::uint8_t* op = s.op;
  HalfByte half = s.half;
  while (static_cast<std::size_t>(ip_end - ip) >= kGroupInput &&
         static_cast<std::size_t>(op_end - op) >= kItemRoom && s.left == 0) {
    std::uint32_t word;
    std::memcpy(&word, ip, 4);
    ip += 4;
    std::uint64_t flags = (std::uint64_t{word} << 32) | 0x80000000U;
    int left = 32;
    for (;;) {
      const int run = __builtin_clzll(flags);  // Literals before the next match (or sentinel).
      std::memcpy(op, ip, 16);                 // Runs are mostly of 0 to 3 literals.
      if (run > 16) std::memcpy(op + 16, ip + 16, 16);
      op += run;
      ip += run;
      left -= run;
      flags <<= run;
      if (left == 0) break;
      flags <<= 1;
      --left;
      const std::uint32_t match = ip[0] | (std::uint32_t{ip[1]} << 8);
      const std::uint32_t next = ip[2];  // The half byte's, if this match takes a new one.
      ip += 2;
      // Masks, not branches: whether a match is long, and whether it has a half byte pending,
      // follow the data, so a branch on them is mispredicted about every other match.
      const std::uint32_t long_mask = 0U - static_cast<std::uint32_t>(match % 8 == 7);
      const std::uint32_t pending_mask = 0U - (half >> 4);
      const std::uint32_t nibble =
          ((half & pending_mask) | (next & ~pending_mask)) & 15 & long_mask;
      ip += 1 & long_mask & ~pending_mask;
      half = (half & ~long_mask) | ((0x10 | (next >> 4)) & ~pending_mask & long_mask);
      std::size_t length = match % 8 + nibble;
      if (nibble == 15 && !longer_length(ip, length)) return false;
      length += 3;
      const std::size_t offset = match / 8 + 1;
      const auto room = static_cast<std::size_t>(op_end - op);
      if (offset > static_cast<std::size_t>(op - op_begin) || length > room) return false;
      put_match(op, room, offset, length);
      op += length;
      if (static_cast<std::size_t>(op_end - op) < kItemRoom) {  // The group's rest, checked.
        s.flags = word;
        s.left = left;
        break;
      }
    }
  }
  s.ip = ip;
  s.op = op;
  s.half = half;
  return true;
}

}  // namespace

std::ptrdiff_t xpress_lz77_decompress(std::span<const std::byte> in_bytes,
                                      std::span<std::byte> out_bytes) {
  const auto* in_data = reinterpret_cast<const std::uint8_t*>(in_bytes.data());
  auto* out = reinterpret_cast<std::uint8_t*>(out_bytes.data());
  const std::size_t out_size = out_bytes.size();
  State s{in_data, out};
  if (!decode_fast(s, in_data + in_bytes.size(), out, out + out_size)) return -1;
  // The stream's last bytes, each read checked: where it may end.
  Input in{in_data, in_bytes.size(), static_cast<std::size_t>(s.ip - in_data)};
  std::size_t written = static_cast<std::size_t>(s.op - out);
  std::uint32_t flags = s.flags;
  int flag_count = s.left;
  HalfByte half = s.half;
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
    if (length == 7 && !long_length(in, half, length)) return -1;
    length += 3;
    if (offset > written || length > out_size - written) return -1;
    put_match(out + written, out_size - written, offset, length);
    written += length;
  }
}

}  // namespace etwrt::etl
