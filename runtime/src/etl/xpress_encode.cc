#include "xpress_encode.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace etwrt::etl {
namespace {

constexpr std::size_t kMinMatch = 3;
constexpr std::size_t kMaxOffset = 8192;  // 13 bits of offset - 1 (MS-XCA 2.3)
constexpr unsigned kHashBits = 13;        // as many entries as the window has positions

std::uint32_t load32(const std::uint8_t* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);  // Little-endian hosts only, as all of etwrt.
  return v;
}
std::uint64_t load64(const std::uint8_t* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
void store16(std::uint8_t* p, std::uint16_t v) { std::memcpy(p, &v, 2); }
void store32(std::uint8_t* p, std::uint32_t v) { std::memcpy(p, &v, 4); }

std::uint32_t hash4(std::uint32_t v) { return (v * 2654435761U) >> (32 - kHashBits); }

// How many bytes at `a` and `b` (a before b) agree, at most `most`: 16 at a time (SSE2, in
// every x86-64), then 8.
std::size_t common_length(const std::uint8_t* a, const std::uint8_t* b, std::size_t most) {
  std::size_t n = 0;
#if defined(__SSE2__)
  while (most - n >= 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + n));
    const __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + n));
    const auto same = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(x, y)));
    if (same != 0xFFFF) return n + static_cast<std::size_t>(__builtin_ctz(~same));
    n += 16;
  }
#endif
  while (most - n >= 8) {
    const std::uint64_t diff = load64(a + n) ^ load64(b + n);
    if (diff != 0) return n + static_cast<std::size_t>(__builtin_ctzll(diff)) / 8;
    n += 8;
  }
  while (n < most && a[n] == b[n]) ++n;
  return n;
}

// The output with MS-XCA's bookkeeping: a 32-bit flag word ahead of each 32 items (bit 31 the
// first: 0 literal, 1 match) and the shared half byte of long match lengths. Each call checks
// the room its item may take at most, once.
class Writer {
 public:
  Writer(std::uint8_t* out, std::size_t size) : op_(out + 4), end_(out + size), flag_at_(out) {}
  bool ok() const { return ok_; }
  std::size_t size(const std::uint8_t* out) const { return static_cast<std::size_t>(op_ - out); }

  // `n` literals from `p` (whose input holds 8 bytes from `p` on when `p_has8`), copied in runs
  // that end where a flag group does. Most runs are a byte or two (a counter, a time stamp's low
  // bytes): those are one 8-byte copy.
  void literals(const std::uint8_t* p, std::size_t n, bool p_has8) {
    if (n == 0) return;
    if (n < 8 && p_has8 && count_ + n < 32 && end_ - op_ >= 8) {
      std::memcpy(op_, p, 8);  // bytes past n are overwritten by what follows
      op_ += n;
      flags_ <<= n;
      count_ += static_cast<unsigned>(n);
      return;
    }
    if (!room(n + 4 * ((count_ + n) / 32))) return;  // each group completed takes its word
    while (n > 0) {
      const std::size_t take = std::min<std::size_t>(n, 32 - count_);
      std::memcpy(op_, p, take);
      op_ += take;
      p += take;
      n -= take;
      flags_ <<= take;  // 64 bits: a shift by 32 is defined
      count_ += static_cast<unsigned>(take);
      if (count_ == 32) next_group();
    }
  }

  // MS-XCA 2.3.4, "Encoding": length - 3 in the low 3 bits of the 16-bit item (7: more in a
  // half byte, then a byte, then 16 or 32 bits).
  void match(std::size_t length, std::size_t offset) {
    std::size_t len = length - kMinMatch;
    if (!room(match_bytes(len) + (count_ == 31 ? 4 : 0))) return;
    const auto off = static_cast<std::uint16_t>((offset - 1) << 3);
    if (len < 7) {
      store16(op_, static_cast<std::uint16_t>(off | len));
      op_ += 2;
    } else {
      store16(op_, static_cast<std::uint16_t>(off | 7));
      op_ += 2;
      long_length(len - 7);
    }
    flags_ = (flags_ << 1) | 1;
    if (++count_ == 32) next_group();
  }

  // The last flag word: the unused bits are 1 (a match with no input: the end).
  void finish() {
    const auto bits = static_cast<std::uint32_t>(flags_);
    store32(flag_at_,
            count_ == 0 ? 0xFFFFFFFFU : (bits << (32 - count_)) | ((1U << (32 - count_)) - 1));
  }

 private:
  // The bytes of a match whose length is `len` + 3.
  std::size_t match_bytes(std::size_t len) const {
    if (len < 7) return 2;
    const std::size_t half = nibble_at_ == nullptr ? 1 : 0;
    if (len - 7 < 15) return 2 + half;
    if (len - 7 - 15 < 255) return 3 + half;
    return len < (1U << 16) ? 5 + half : 9 + half;
  }
  bool room(std::size_t n) {
    if (ok_ && static_cast<std::size_t>(end_ - op_) >= n) return true;
    ok_ = false;
    return false;
  }
  void next_group() {
    store32(flag_at_, static_cast<std::uint32_t>(flags_));
    flags_ = 0;
    count_ = 0;
    flag_at_ = op_;
    op_ += 4;  // room() counted it
  }
  // The length past the 3 bits' 7: the half byte (a new byte's low half, or the high half of
  // the one the match before took), then a byte, then 16 or 32 bits.
  void long_length(std::size_t len) {
    const auto half = static_cast<std::uint8_t>(std::min<std::size_t>(len, 15));
    if (nibble_at_ == nullptr) {
      nibble_at_ = op_;
      *op_++ = half;
    } else {
      *nibble_at_ |= static_cast<std::uint8_t>(half << 4);
      nibble_at_ = nullptr;
    }
    if (len < 15) return;
    len -= 15;
    if (len < 255) {
      *op_++ = static_cast<std::uint8_t>(len);
      return;
    }
    *op_++ = 255;
    len += 15 + 7;  // the whole length - 3
    if (len < (1U << 16)) {
      store16(op_, static_cast<std::uint16_t>(len));
      op_ += 2;
    } else {
      store16(op_, 0);
      store32(op_ + 2, static_cast<std::uint32_t>(len));
      op_ += 6;
    }
  }

  std::uint8_t* op_;
  std::uint8_t* const end_;
  std::uint8_t* flag_at_;
  std::uint8_t* nibble_at_ = nullptr;  // a half byte waiting for its high half
  std::uint64_t flags_ = 0;
  unsigned count_ = 0;
  bool ok_ = true;
};

}  // namespace

XpressEncoder::XpressEncoder() : table_(new std::uint32_t[std::size_t{1} << kHashBits]()) {}

std::size_t XpressEncoder::compress(std::span<const std::byte> in_bytes,
                                    std::span<std::byte> out_bytes) {
  const std::size_t n = in_bytes.size();
  if (out_bytes.size() < 4 || n >= kXpressMaxInput) return 0;
  if (n >= 0xFFFFFFFFU - base_) {  // positions would wrap: the table starts over
    std::fill_n(table_.get(), std::size_t{1} << kHashBits, 0U);
    base_ = 1;
  }
  const auto* in = reinterpret_cast<const std::uint8_t*>(in_bytes.data());
  auto* out = reinterpret_cast<std::uint8_t*>(out_bytes.data());
  Writer w(out, out_bytes.size());
  std::uint32_t* const table = table_.get();
  const std::uint32_t base = base_;
  std::size_t i = 0, literal_from = 0;
  std::size_t last_offset = 0;  // tried first: trace records repeat at their own size
  while (i + 4 <= n && w.ok()) {
    const std::uint32_t here = load32(in + i);
    std::size_t offset = 0;
    bool repeated = false;                                              // the last offset's match
    if (last_offset - 1 < i && load32(in + i - last_offset) == here) {  // (0 - 1: none yet)
      offset = last_offset;
      repeated = true;
    } else if (i == literal_from && last_offset != 0 && i + 5 <= n &&
               load32(in + i + 1 - last_offset) == load32(in + i + 1)) {
      // One byte differs after a match (a counter's, a time stamp's), then the last offset
      // matches again, as in consecutive trace records: that byte is a literal, unprobed.
      ++i;
      continue;
    } else {
      std::uint32_t& slot = table[hash4(here)];
      const std::size_t seen = slot - base;  // huge for an entry of an earlier call
      slot = base + static_cast<std::uint32_t>(i);
      if (seen < i && i - seen <= kMaxOffset && load32(in + seen) == here) offset = i - seen;
    }
    if (offset == 0) {
      // Past 64 misses in a row, probe every second byte, then every third... (data that does
      // not compress goes through fast; trace records rarely miss for long).
      i += 1 + ((i - literal_from) >> 6);
      continue;
    }
    const std::size_t length = 4 + common_length(in + i - offset + 4, in + i + 4, n - i - 4);
    w.literals(in + literal_from, i - literal_from, n - literal_from >= 8);
    w.match(length, offset);
    last_offset = offset;
    i += length;
    literal_from = i;
    // One position near a probed match's end enters the table (a next match may start there);
    // after a match at the last offset the records go on repeating, and the probes it saves
    // cost more than the matches they would find.
    if (!repeated && i + 2 <= n) {
      table[hash4(load32(in + i - 2))] = base + static_cast<std::uint32_t>(i - 2);
    }
  }
  w.literals(in + literal_from, n - literal_from, n - literal_from >= 8);
  if (!w.ok()) return 0;
  w.finish();
  base_ += static_cast<std::uint32_t>(n) + 1;
  return w.size(out);
}

std::size_t xpress_lz77_compress(std::span<const std::byte> in, std::span<std::byte> out) {
  XpressEncoder encoder;
  return encoder.compress(in, out);
}

}  // namespace etwrt::etl
