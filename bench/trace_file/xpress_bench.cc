// etwh_bench_xpress: the trace-file logger's compressor (MS-XCA plain LZ77, XpressEncoder) and
// the reader's decompressor on one 64 KB buffer's records, per record and per byte. The records
// are laid out as the logger writes etwh_bench_event_path's file-session events: EVENT_HEADER
// (80 bytes) and 32 bytes of user data whose first word counts, stamps on a 10 MHz clock at
// about three events per tick. Random bytes show the path of data that does not compress.
#include "etl/xpress.h"
#include "etl/xpress_encode.h"

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace {

using etwrt::etl::XpressEncoder;

constexpr std::size_t kBufferBytes = 64 * 1024;
constexpr std::size_t kHeaderBytes = 0x48;  // the WMI_BUFFER_HEADER ahead of the records
constexpr std::size_t kRecordBytes = 112;

template <typename T>
void put(std::byte* at, T v) {
  std::memcpy(at, &v, sizeof v);
}

std::vector<std::byte> trace_records() {
  std::vector<std::byte> b(kBufferBytes - kHeaderBytes, std::byte{0xFF});
  std::byte r[kRecordBytes] = {};
  put<std::uint16_t>(r, kRecordBytes);
  put<std::uint8_t>(r + 2, 0x13);  // EVENT_HEADER64
  put<std::uint8_t>(r + 3, 0xC0);
  put<std::uint16_t>(r + 4, 0x0040);
  put<std::uint32_t>(r + 8, 41231);  // ThreadId, ProcessId
  put<std::uint32_t>(r + 12, 41230);
  for (int i = 24; i < 56; ++i) r[i] = std::byte(i * 37 + 11);  // provider, descriptor
  std::uint64_t stamp = 0x01DB12345678;
  for (std::size_t at = 0, n = 0; at + kRecordBytes <= b.size(); at += kRecordBytes, ++n) {
    if (n % 3 == 0) ++stamp;
    put<std::uint64_t>(r + 16, stamp);
    put<std::uint64_t>(r + 80, n);
    std::memcpy(b.data() + at, r, kRecordBytes);
  }
  return b;
}

std::vector<std::byte> random_bytes() {
  std::vector<std::byte> b(kBufferBytes - kHeaderBytes);
  std::mt19937_64 rng(7);
  for (auto& x : b) x = static_cast<std::byte>(rng());
  return b;
}

void report(benchmark::State& state, std::size_t in_bytes, std::size_t out_bytes) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * in_bytes));
  state.counters["ns_per_record"] = benchmark::Counter(
      static_cast<double>(in_bytes / kRecordBytes),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["compressed_share"] = static_cast<double>(out_bytes) / in_bytes;
}

void BM_Xpress_Compress(benchmark::State& state, std::vector<std::byte> (*make)()) {
  const std::vector<std::byte> in = make();
  std::vector<std::byte> out(etwrt::etl::xpress_lz77_bound(in.size()));
  XpressEncoder encoder;  // as the logger keeps one, its table from buffer to buffer
  std::size_t n = 0;
  for (auto _ : state) {
    n = encoder.compress(in, out);
    benchmark::DoNotOptimize(n);
  }
  if (n == 0) state.SkipWithError("the output did not fit");
  report(state, in.size(), n);
}
BENCHMARK_CAPTURE(BM_Xpress_Compress, TraceRecords, trace_records);
BENCHMARK_CAPTURE(BM_Xpress_Compress, RandomBytes, random_bytes);

void BM_Xpress_Decompress(benchmark::State& state, std::vector<std::byte> (*make)()) {
  const std::vector<std::byte> raw = make();
  std::vector<std::byte> packed(etwrt::etl::xpress_lz77_bound(raw.size()));
  packed.resize(etwrt::etl::xpress_lz77_compress(raw, packed));
  std::vector<std::byte> out(raw.size());
  for (auto _ : state) {
    const std::ptrdiff_t n = etwrt::etl::xpress_lz77_decompress(packed, out);
    benchmark::DoNotOptimize(n);
  }
  if (out != raw) state.SkipWithError("the round trip changed the bytes");
  report(state, raw.size(), packed.size());
}
BENCHMARK_CAPTURE(BM_Xpress_Decompress, TraceRecords, trace_records);
BENCHMARK_CAPTURE(BM_Xpress_Decompress, RandomBytes, random_bytes);

}  // namespace

BENCHMARK_MAIN();
