// etwrt: the "plain LZ77" compression of MS-XCA (section 2.3), the form of the compressed
// buffers of a trace file (layout 2.0, EVENT_TRACE_COMPRESSED_MODE), for the broker's logger.
// Written from the specification; xpress.h decodes what it writes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace etwrt::etl {

// The most bytes xpress_lz77_compress may write for `n` input bytes: every byte a literal,
// plus a 4-byte flag word per 32 items and a last one.
constexpr std::size_t xpress_lz77_bound(std::size_t n) { return n + 4 * (n / 32) + 8; }

// The largest input compressed (positions are kept in 32 bits); a trace buffer is at most 1 MB.
inline constexpr std::size_t kXpressMaxInput = std::size_t{1} << 30;

// A compressor that keeps its match table from one call to the next (a logger compresses every
// buffer of a file with one), so that a call allocates and clears nothing. Greedy, one probe
// per position: as fast as a logger thread needs, not the smallest output. The output depends
// on the input only, never on what was compressed before.
class XpressEncoder {
 public:
  XpressEncoder();
  // Compresses `in` into `out`. Returns the bytes written, or 0 when `out` is too small (at
  // least xpress_lz77_bound(in.size()) always suffices) or `in` holds kXpressMaxInput bytes or
  // more. Matches are at least 3 bytes, at most 8192 back.
  std::size_t compress(std::span<const std::byte> in, std::span<std::byte> out);

 private:
  // The last position probed of each hash of 4 bytes, as base_ + its index in the input:
  // entries below base_ are from earlier calls, and ignored.
  std::unique_ptr<std::uint32_t[]> table_;
  std::uint32_t base_ = 1;
};

// One compression with an encoder of its own (tests, tools: a logger keeps an XpressEncoder).
std::size_t xpress_lz77_compress(std::span<const std::byte> in, std::span<std::byte> out);

}  // namespace etwrt::etl
