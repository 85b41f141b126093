// Fuzz target: the trace-file reader (runtime/src/etl/) over any bytes as a .etl file: the
// header, every buffer (MS-XCA decompression included) and every record's conversion into an
// EVENT_RECORD. Bad input must get one of the documented statuses (ERROR_BAD_FORMAT,
// ERROR_FILE_CORRUPT, ERROR_NOT_SUPPORTED, ERROR_NOT_ENOUGH_MEMORY) and every accepted record
// must lie inside the parsed bytes, its user data and extended items inside itself. The same
// bytes also go through the decompressor alone, which must give what MS-XCA's byte-by-byte
// pseudocode gives (the same bytes, the same failures), and through the compressor, whose
// output within xpress_lz77_bound must decompress to them.
#include "fuzz_target.h"

#include "etl/record_decode.h"
#include "etl/trace_file.h"
#include "etl/xpress.h"
#include "etl/xpress_encode.h"
#include "etl/xpress_reference.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace etl = etwrt::etl;

// The reader's bound on decompressed bytes, lowered so that the fuzzer's memory limit holds.
constexpr std::size_t kMaxArena = 64 << 20;

bool inside(const void* p, std::size_t n, const std::byte* lo, const std::byte* hi) {
  const auto* b = static_cast<const std::byte*>(p);
  return n == 0 || (b >= lo && b <= hi && static_cast<std::size_t>(hi - b) >= n);
}

void check_status(const etl::ParseStatus& s) {
  if (s.status != ERROR_BAD_FORMAT && s.status != ERROR_FILE_CORRUPT &&
      s.status != ERROR_NOT_SUPPORTED && s.status != ERROR_NOT_ENOUGH_MEMORY) {
    etwh::fuzz::finding("undocumented status " + std::to_string(s.status) + ": " + s.message);
  }
}

void check_records(const etl::TraceFile& t) {
  auto decoded = std::make_unique<etl::Decoded>();
  for (const etl::RecordRef& r : t.records) {
    if (r.buffer >= t.buffers.size() || r.offset > t.arena.size() ||
        r.size > t.arena.size() - r.offset) {
      etwh::fuzz::finding("a record outside the parsed bytes");
    }
    const std::byte* lo = t.arena.data() + r.offset;
    const std::byte* hi = lo + r.size;
    if (!etl::decode_record(t, r, *decoded)) continue;  // ERROR_FILE_CORRUPT at delivery.
    const EVENT_RECORD& e = decoded->record;
    if (!inside(e.UserData, e.UserDataLength, lo, hi)) etwh::fuzz::finding("user data outside");
    for (USHORT i = 0; i < e.ExtendedDataCount; ++i) {
      const EVENT_HEADER_EXTENDED_DATA_ITEM& item = e.ExtendedData[i];
      const auto* p = reinterpret_cast<const std::byte*>(item.DataPtr);
      const bool own = p == reinterpret_cast<const std::byte*>(&decoded->instance);
      if (!own && !inside(p, item.DataSize, lo, hi)) etwh::fuzz::finding("an item outside");
    }
  }
}

// The compressor on any bytes: its output fits xpress_lz77_bound and gives them back.
void check_round_trip(std::span<const std::byte> in) {
  std::vector<std::byte> packed(etl::xpress_lz77_bound(in.size())), back(in.size());
  const std::size_t n = etl::xpress_lz77_compress(in, packed);
  if (n == 0) {
    etwh::fuzz::finding("the compressor refused an output of xpress_lz77_bound bytes");
    return;
  }
  const std::ptrdiff_t got = etl::xpress_lz77_decompress(std::span(packed.data(), n), back);
  if (got != static_cast<std::ptrdiff_t>(in.size()) ||
      (!in.empty() && std::memcmp(back.data(), in.data(), in.size()) != 0)) {
    etwh::fuzz::finding("compressed bytes do not decompress to the input");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> file(reinterpret_cast<const std::byte*>(data), size);
  etl::TraceFile t;
  if (const etl::ParseStatus h = etl::parse_header(file, t); !h.ok()) {
    if (h.status != ERROR_BAD_FORMAT)
      etwh::fuzz::finding("header: status " + std::to_string(h.status));
  } else if (const etl::ParseStatus s = etl::parse_records(file, t, kMaxArena); !s.ok()) {
    check_status(s);
    if (!t.records.empty()) etwh::fuzz::finding("records kept after a failed parse");
  } else {
    check_records(t);
  }
  std::vector<std::byte> out(1 << 16), expected(1 << 16);
  const std::ptrdiff_t n = etl::xpress_lz77_decompress(file, out);
  const std::ptrdiff_t want = etl::testing::reference_lz77(file, expected);
  if (n != want) {
    etwh::fuzz::finding("decompressor returned " + std::to_string(n) + ", MS-XCA's loop " +
                        std::to_string(want));
  }
  if (n > 0 && std::memcmp(out.data(), expected.data(), static_cast<std::size_t>(n)) != 0) {
    etwh::fuzz::finding("decompressed bytes differ from MS-XCA's loop");
  }
  check_round_trip(file);
  return 0;
}
