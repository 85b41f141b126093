// etwrt: the "plain LZ77" decompression of MS-XCA (section 2.4), the form of the compressed
// buffers of a trace file (layout 2.0, EVENT_TRACE_COMPRESSED_MODE). Written from the
// specification; any input is safe: every read and write is checked against its buffer.
#pragma once

#include <cstddef>
#include <span>

namespace etwrt::etl {

// Decompresses `in` into `out`. Returns the number of bytes written, or -1 when `in` is not a
// valid stream or would write past `out` (MS-XCA: "an implementation MUST return an error
// indicating that the compressed buffer is invalid"). The stream ends where MS-XCA says it
// does (a match flag with no input left) or when the input ends after a whole item.
std::ptrdiff_t xpress_lz77_decompress(std::span<const std::byte> in, std::span<std::byte> out);

}  // namespace etwrt::etl
