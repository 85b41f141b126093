// etwh_bench_trace_file: reading a trace file through the Win32 API (OpenTraceA, ProcessTrace
// with an EventRecordCallback that only counts, CloseTrace), records per second. The file is
// ETWH_BENCH_ETL, else the corpus's largest (net.4.5.2.x64, 179,474 records, compressed),
// extracted from ../shared/etl-corpus into a temporary folder.
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

TRACEHANDLE open(std::size_t& records, EVENT_TRACE_LOGFILEA& logfile) {
  logfile = EVENT_TRACE_LOGFILEA{};
  logfile.LogFileName = g_path.data();
  logfile.ProcessTraceMode = PROCESS_TRACE_MODE_EVENT_RECORD;
  logfile.EventRecordCallback = count;
  logfile.Context = &records;
  return OpenTraceA(&logfile);
}

// The whole read, as a consumer does it: open, play, close.
void BM_TraceFile_OpenProcessClose(benchmark::State& state) {
  std::size_t records = 0;
  for (auto _ : state) {
    EVENT_TRACE_LOGFILEA logfile;
    TRACEHANDLE h = open(records, logfile);
    if (h == INVALID_PROCESSTRACE_HANDLE || ProcessTrace(&h, 1, nullptr, nullptr) != 0) {
      state.SkipWithError("the file does not open or play");
      return;
    }
    CloseTrace(h);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(records));
}
BENCHMARK(BM_TraceFile_OpenProcessClose)->Unit(benchmark::kMillisecond)->UseRealTime();

// ProcessTrace again on an open handle: the delivery alone (etwrt keeps the parsed file).
void BM_TraceFile_ProcessAgain(benchmark::State& state) {
  std::size_t records = 0;
  EVENT_TRACE_LOGFILEA logfile;
  TRACEHANDLE h = open(records, logfile);
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

// The corpus file, extracted once into a folder removed at exit.
std::string corpus_file(fs::path& dir) {
  const fs::path zip = fs::path(ETWH_ETL_CORPUS_DIR) / "net.4.5.2.x64.etl.zip";
  if (!fs::exists(zip)) return {};
  std::string templ = (fs::temp_directory_path() / "etwh-bench-etl-XXXXXX").string();
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
    std::fprintf(stderr, "etwh_bench_trace_file: no file: set ETWH_BENCH_ETL or provide %s\n",
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
