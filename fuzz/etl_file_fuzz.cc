// Fuzz target: the trace-file reader (runtime/src/etl/) over any bytes as a .etl file: the
// header, every buffer (MS-XCA decompression included) and every record's conversion into an
// EVENT_RECORD. Bad input must get one of the documented statuses (ERROR_BAD_FORMAT,
// ERROR_FILE_CORRUPT, ERROR_NOT_SUPPORTED, ERROR_NOT_ENOUGH_MEMORY) and every accepted record
// must lie inside the parsed bytes, its user data and extended items inside itself. The same
// bytes also go through the decompressor alone, which must give what MS-XCA's byte-by-byte
// pseudocode gives (the same bytes, the same failures).
#include "fuzz_target.h"

#include "etl/record_decode.h"
#include "etl/trace_file.h"
#include "etl/xpress.h"

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

// MS-XCA 2.4.4's pseudocode as written, byte by byte: the reference the reader's block copies
// must agree with. Returns -1 where the reader must fail.
std::ptrdiff_t reference_lz77(std::span<const std::byte> in_bytes, std::vector<std::byte>& out) {
  const auto* in = reinterpret_cast<const std::uint8_t*>(in_bytes.data());
  const std::size_t size = in_bytes.size();
  std::size_t ip = 0, op = 0, half = 0;
  std::uint32_t flags = 0;
  int count = 0;
  const auto u16 = [&](std::size_t at) {
    return std::uint32_t{in[at]} | (std::uint32_t{in[at + 1]} << 8);
  };
  for (;;) {
    if (count == 0) {
      if (size - ip < 4) return ip == size ? static_cast<std::ptrdiff_t>(op) : -1;
      flags = u16(ip) | (u16(ip + 2) << 16);
      ip += 4;
      count = 32;
    }
    --count;
    if ((flags & (1U << count)) == 0) {
      if (ip == size) return static_cast<std::ptrdiff_t>(op);
      if (op == out.size()) return -1;
      out[op++] = static_cast<std::byte>(in[ip++]);
      continue;
    }
    if (ip == size) return static_cast<std::ptrdiff_t>(op);
    if (size - ip < 2) return -1;
    const std::uint32_t match = u16(ip);
    ip += 2;
    std::size_t length = match % 8;
    const std::size_t offset = match / 8 + 1;
    if (length == 7) {
      if (half == 0) {
        if (ip == size) return -1;
        half = ip;
        length = in[ip++] % 16;
      } else {
        length = in[half] / 16;
        half = 0;
      }
      if (length == 15) {
        if (ip == size) return -1;
        length = in[ip++];
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
    if (offset > op || length > out.size() - op) return -1;
    for (std::size_t i = 0; i < length; ++i, ++op) out[op] = out[op - offset];
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
  const std::ptrdiff_t want = reference_lz77(file, expected);
  if (n != want) {
    etwh::fuzz::finding("decompressor returned " + std::to_string(n) + ", MS-XCA's loop " +
                        std::to_string(want));
  }
  if (n > 0 && std::memcmp(out.data(), expected.data(), static_cast<std::size_t>(n)) != 0) {
    etwh::fuzz::finding("decompressed bytes differ from MS-XCA's loop");
  }
  return 0;
}
