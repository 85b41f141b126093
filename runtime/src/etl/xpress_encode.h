// etwrt: the "plain LZ77" compression of MS-XCA (section 2.3), the form of the compressed
// buffers of a trace file (layout 2.0, EVENT_TRACE_COMPRESSED_MODE), for the broker's logger.
// Written from the specification; xpress.h decodes what it writes.
#pragma once

#include <cstddef>
#include <span>

namespace etwrt::etl {

// The most bytes xpress_lz77_compress may write for `n` input bytes: every byte a literal,
// plus a 4-byte flag word per 32 items and a last one.
constexpr std::size_t xpress_lz77_bound(std::size_t n) { return n + 4 * (n / 32) + 8; }

// Compresses `in` into `out` (at least xpress_lz77_bound(in.size()) bytes). Returns the bytes
// written, or 0 when `out` is too small. Matches are at least 3 bytes, at most 8192 back.
std::size_t xpress_lz77_compress(std::span<const std::byte> in, std::span<std::byte> out);

}  // namespace etwrt::etl
