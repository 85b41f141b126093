#include "xpress_encode.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace etwrt::etl {
namespace {

constexpr std::size_t kMinMatch = 3;
constexpr std::size_t kMaxOffset = 8192;  // 13 bits of offset - 1 (MS-XCA 2.3)
constexpr unsigned kHashBits = 14;

std::uint32_t hash3(const std::byte* p) {
  std::uint32_t v = std::to_integer<std::uint32_t>(p[0]) |
                    std::to_integer<std::uint32_t>(p[1]) << 8 |
                    std::to_integer<std::uint32_t>(p[2]) << 16;
  return (v * 2654435761u) >> (32 - kHashBits);
}

// The output with MS-XCA's bookkeeping: a 32-bit flag word ahead of each 32 items (bit 31 the
// first: 0 literal, 1 match) and the shared half-byte of long match lengths.
class Writer {
 public:
  explicit Writer(std::span<std::byte> out) : out_(out) { pos_ = 4; }
  bool ok() const { return ok_; }
  std::size_t size() const { return pos_; }

  void literal(std::byte b) {
    if (!room(1)) return;
    out_[pos_++] = b;
    flag(0);
  }

  // MS-XCA 2.3.4, "Encoding": length - 3 in the low 3 bits of the 16-bit item (7: more in a
  // half-byte, then a byte, then 16 or 32 bits).
  void match(std::size_t length, std::size_t offset) {
    std::size_t len = length - kMinMatch;
    const auto off = static_cast<std::uint16_t>((offset - 1) << 3);
    if (len < 7) {
      put16(static_cast<std::uint16_t>(off | len));
      flag(1);
      return;
    }
    put16(static_cast<std::uint16_t>(off | 7));
    len -= 7;
    const auto nibble = static_cast<std::uint8_t>(std::min<std::size_t>(len, 15));
    if (nibble_at_ == 0) {
      nibble_at_ = pos_;
      put8(nibble);
    } else {
      if (ok_) out_[nibble_at_] |= static_cast<std::byte>(nibble << 4);
      nibble_at_ = 0;
    }
    if (len >= 15) {
      len -= 15;
      if (len < 255) {
        put8(static_cast<std::uint8_t>(len));
      } else {
        put8(255);
        len += 15 + 7;  // the whole length - 3
        if (len < (1u << 16)) {
          put16(static_cast<std::uint16_t>(len));
        } else {
          put16(0);
          put32(static_cast<std::uint32_t>(len));
        }
      }
    }
    flag(1);
  }

  // The last flag word: the unused bits are 1 (a match with no input: the end).
  void finish() {
    const std::uint32_t word =
        count_ == 0 ? 0xFFFFFFFFu : (flags_ << (32 - count_)) | ((1u << (32 - count_)) - 1);
    store32(flag_at_, word);
  }

 private:
  bool room(std::size_t n) {
    if (ok_ && out_.size() - pos_ >= n) return true;
    ok_ = false;
    return false;
  }
  void put8(std::uint8_t v) {
    if (room(1)) out_[pos_++] = static_cast<std::byte>(v);
  }
  void put16(std::uint16_t v) {
    if (!room(2)) return;
    std::memcpy(out_.data() + pos_, &v, 2);
    pos_ += 2;
  }
  void put32(std::uint32_t v) {
    if (!room(4)) return;
    std::memcpy(out_.data() + pos_, &v, 4);
    pos_ += 4;
  }
  void store32(std::size_t at, std::uint32_t v) {
    if (ok_ && at + 4 <= out_.size()) std::memcpy(out_.data() + at, &v, 4);
  }
  void flag(std::uint32_t bit) {
    flags_ = (flags_ << 1) | bit;
    if (++count_ < 32) return;
    store32(flag_at_, flags_);
    flags_ = 0;
    count_ = 0;
    flag_at_ = pos_;
    if (room(4)) pos_ += 4;
  }

  std::span<std::byte> out_;
  std::size_t pos_ = 0;
  std::size_t flag_at_ = 0;
  std::size_t nibble_at_ = 0;  // 0: no half-byte waiting (position 0 is always a flag word)
  std::uint32_t flags_ = 0;
  unsigned count_ = 0;
  bool ok_ = true;
};

}  // namespace

std::size_t xpress_lz77_compress(std::span<const std::byte> in, std::span<std::byte> out) {
  if (out.size() < 4) return 0;
  Writer w(out);
  // The last position of each 3-byte hash (+1; 0: none): one probe, greedy, as a fast
  // compressor of trace buffers needs, not the smallest output.
  std::vector<std::uint32_t> last(std::size_t{1} << kHashBits, 0);
  const std::size_t n = in.size();
  std::size_t i = 0;
  while (i < n && w.ok()) {
    std::size_t length = 0, offset = 0;
    if (n - i >= kMinMatch) {
      const std::uint32_t h = hash3(in.data() + i);
      const std::size_t candidate = last[h];
      last[h] = static_cast<std::uint32_t>(i + 1);
      if (candidate != 0 && i - (candidate - 1) <= kMaxOffset) {
        const std::size_t from = candidate - 1;
        while (i + length < n && in[from + length] == in[i + length]) ++length;
        offset = i - from;
      }
    }
    if (length < kMinMatch) {
      w.literal(in[i++]);
      continue;
    }
    w.match(length, offset);
    // The positions inside the match enter the table too (the next match may start there).
    const std::size_t end = i + length;
    for (++i; i < end; ++i) {
      if (n - i >= kMinMatch) last[hash3(in.data() + i)] = static_cast<std::uint32_t>(i + 1);
    }
  }
  if (!w.ok()) return 0;
  w.finish();
  return w.ok() ? w.size() : 0;
}

}  // namespace etwrt::etl
