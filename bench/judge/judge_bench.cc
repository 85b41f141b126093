// etwh_bench_judge: what `etwh judge` costs beside reading the file, in one run (ratios):
// ProcessTrace with a callback that only counts, read_trace (ProcessTrace summing each record
// into its event kind, the first of each kind decoded by TDH), and the whole judge (read_trace
// then judge_traces). Records per second. The file is ETWH_BENCH_ETL, else the corpus's largest
// (net.4.5.2.x64, 179,474 records, compressed), extracted from ../shared/etl-corpus into a
// temporary folder.
#include "harness/recorded/trace_judge.h"
#include "harness/recorded/trace_reader.h"

#include <windows.h>
#include <evntcons.h>
#include <evntrace.h>

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace {

namespace fs = std::filesystem;

std::string g_path;

void WINAPI count(PEVENT_RECORD e) { ++*static_cast<std::size_t*>(e->UserContext); }

// The read alone, as a consumer that only counts does it: open, play, close.
void BM_Judge_ProcessTraceOnly(benchmark::State& state) {
  std::size_t records = 0;
  for (auto _ : state) {
    EVENT_TRACE_LOGFILEA logfile{};
    logfile.LogFileName = g_path.data();
    logfile.ProcessTraceMode = PROCESS_TRACE_MODE_EVENT_RECORD;
    logfile.EventRecordCallback = count;
    logfile.Context = &records;
    TRACEHANDLE h = OpenTraceA(&logfile);
    if (h == INVALID_PROCESSTRACE_HANDLE || ProcessTrace(&h, 1, nullptr, nullptr) != 0) {
      state.SkipWithError("the file does not open or play");
      return;
    }
    CloseTrace(h);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(records));
}
BENCHMARK(BM_Judge_ProcessTraceOnly)->Unit(benchmark::kMillisecond)->UseRealTime();

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

// The corpus file, extracted once into a folder removed at exit.
std::string corpus_file(fs::path& dir) {
  const fs::path zip = fs::path(ETWH_ETL_CORPUS_DIR) / "net.4.5.2.x64.etl.zip";
  if (!fs::exists(zip)) return {};
  std::string templ = (fs::temp_directory_path() / "etwh-bench-judge-XXXXXX").string();
  if (::mkdtemp(templ.data()) == nullptr) return {};
  dir = templ;
  const std::string cmd =
      "python3 -c \"import sys,zipfile; zipfile.ZipFile(sys.argv[1])"
      ".extractall(sys.argv[2])\" '" +
      zip.string() + "' '" + templ + "'";
  if (std::system(cmd.c_str()) != 0) return {};
  return (dir / "net.4.5.2.x64.etl").string();
}

}  // namespace

int main(int argc, char** argv) {
  fs::path dir;
  const char* given = std::getenv("ETWH_BENCH_ETL");
  g_path = given != nullptr ? given : corpus_file(dir);
  if (g_path.empty()) {
    std::fprintf(stderr, "etwh_bench_judge: no file: set ETWH_BENCH_ETL or provide %s\n",
                 ETWH_ETL_CORPUS_DIR);
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (!dir.empty()) fs::remove_all(dir);
  return 0;
}
