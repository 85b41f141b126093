// etwh_bench_judge: what `etwh judge` costs beside reading the file, in one run (ratios):
// ProcessTrace with a callback that only counts, read_trace (ProcessTrace summing each record
// into its event kind, the first of each kind decoded by TDH), and the whole judge (read_trace
// then judge_traces). Records per second. The file is ETWH_BENCH_ETL, else the corpus's largest
// (net.4.5.2.x64, 179,474 records, compressed), extracted from ../shared/etl-corpus into a
// temporary folder.
#include "harness/recorded/trace_judge.h"
#include "harness/recorded/trace_reader.h"

#include "bench/etl_bench_main.h"

#include <string>

namespace {

using etl_bench::g_path;

// The read alone, as a consumer that only counts does it: open, play, close.
[[maybe_unused]] const auto* const kProcessTraceOnly =
    etl_bench::register_whole_read("BM_Judge_ProcessTraceOnly");

void BM_Judge_ReadTrace(benchmark::State& state) {
  std::size_t records = 0;
  for (auto _ : state) {
    const etwh::recorded::RecordedTrace t = etwh::recorded::read_trace(g_path);
    if (t.open_status != 0 || t.process_status != 0) {
      state.SkipWithError("the file does not open or play");
      return;
    }
    records += t.records;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(records));
}
BENCHMARK(BM_Judge_ReadTrace)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Judge_Whole(benchmark::State& state) {
  static const etwh::Catalog catalog = etwh::load_catalog(ETWH_CATALOG_FILE);
  etwh::recorded::JudgeOptions options;
  options.catalog = &catalog;
  std::size_t records = 0, cases = 0;
  for (auto _ : state) {
    const etwh::recorded::RecordedTrace t = etwh::recorded::read_trace(g_path);
    records += t.records;
    cases += etwh::recorded::judge_traces({t}, options).size();
  }
  benchmark::DoNotOptimize(cases);
  state.SetItemsProcessed(static_cast<std::int64_t>(records));
}
BENCHMARK(BM_Judge_Whole)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) { return etl_bench::run_on_file(argc, argv, "etwh_bench_judge"); }
