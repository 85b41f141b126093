// etwh_bench_trace_file: reading a trace file through the Win32 API (OpenTraceA, ProcessTrace
// with an EventRecordCallback that only counts, CloseTrace), records per second. The file is
// ETWH_BENCH_ETL, else the corpus's largest (net.4.5.2.x64, 179,474 records, compressed),
// extracted from ../shared/etl-corpus into a temporary folder.
#include "bench/etl_bench_main.h"

#include <string>

namespace {

using etl_bench::g_path;

// The whole read, as a consumer does it: open, play, close.
[[maybe_unused]] const auto* const kOpenProcessClose =
    etl_bench::register_whole_read("BM_TraceFile_OpenProcessClose");

// ProcessTrace again on an open handle: the delivery alone (etwrt keeps the parsed file).
void BM_TraceFile_ProcessAgain(benchmark::State& state) {
  std::size_t records = 0;
  EVENT_TRACE_LOGFILEA logfile;
  TRACEHANDLE h = etl_bench::open_counting(g_path, records, logfile);
  if (h == INVALID_PROCESSTRACE_HANDLE || ProcessTrace(&h, 1, nullptr, nullptr) != 0) {
    state.SkipWithError("the file does not open or play");
    return;
  }
  records = 0;
  for (auto _ : state) ProcessTrace(&h, 1, nullptr, nullptr);
  CloseTrace(h);
  state.SetItemsProcessed(static_cast<std::int64_t>(records));
}
BENCHMARK(BM_TraceFile_ProcessAgain)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  return etl_bench::run_on_file(argc, argv, "etwh_bench_trace_file");
}
