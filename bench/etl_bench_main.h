// What the benchmarks that read one trace file share: a consumer that only counts its records,
// and a main that finds the file (ETWH_BENCH_ETL, else the corpus's largest, net.4.5.2.x64,
// extracted from ETWH_ETL_CORPUS_DIR into a temporary folder removed at exit).
#pragma once

#include <windows.h>
#include <evntcons.h>
#include <evntrace.h>

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace etl_bench {

// The file the benchmarks read, set by run_on_file before they run.
inline std::string g_path;

inline void WINAPI count_record(PEVENT_RECORD e) { ++*static_cast<std::size_t*>(e->UserContext); }

// OpenTraceA on `path` with a callback that adds each record to `records`.
inline TRACEHANDLE open_counting(std::string& path, std::size_t& records,
                                 EVENT_TRACE_LOGFILEA& logfile) {
  logfile = EVENT_TRACE_LOGFILEA{};
  logfile.LogFileName = path.data();
  logfile.ProcessTraceMode = PROCESS_TRACE_MODE_EVENT_RECORD;
  logfile.EventRecordCallback = count_record;
  logfile.Context = &records;
  return OpenTraceA(&logfile);
}

// The whole read, as a consumer that only counts does it: open, play, close; records per second.
inline void open_process_close(benchmark::State& state, std::string& path) {
  std::size_t records = 0;
  for (auto _ : state) {
    EVENT_TRACE_LOGFILEA logfile;
    TRACEHANDLE h = etl_bench::open_counting(path, records, logfile);
    if (h == INVALID_PROCESSTRACE_HANDLE || ProcessTrace(&h, 1, nullptr, nullptr) != 0) {
      state.SkipWithError("the file does not open or play");
      return;
    }
    CloseTrace(h);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(records));
}

// Registers the whole read of the file (open_process_close) as `name`, in milliseconds of real
// time: each binary's baseline. Called at namespace scope, before a file's BENCHMARKs, it runs
// first.
inline benchmark::internal::Benchmark* register_whole_read(const char* name) {
  return benchmark::RegisterBenchmark(
             name, [](benchmark::State& state) { open_process_close(state, g_path); })
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
}

// The corpus file, extracted into a new folder `dir` named after `tool`; empty if it cannot be.
inline std::string corpus_file(const char* tool, std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  const fs::path zip = fs::path(ETWH_ETL_CORPUS_DIR) / "net.4.5.2.x64.etl.zip";
  if (!fs::exists(zip)) return {};
  std::string templ = (fs::temp_directory_path() / (std::string(tool) + "-XXXXXX")).string();
  if (::mkdtemp(templ.data()) == nullptr) return {};
  dir = templ;
  const std::string cmd =
      "python3 -c \"import sys,zipfile; zipfile.ZipFile(sys.argv[1])"
      ".extractall(sys.argv[2])\" '" +
      zip.string() + "' '" + templ + "'";
  if (std::system(cmd.c_str()) != 0) return {};
  return (dir / "net.4.5.2.x64.etl").string();
}

// The benchmark's main: sets g_path to the file, then runs the registered benchmarks. 2 when
// there is no file.
inline int run_on_file(int argc, char** argv, const char* tool) {
  std::filesystem::path dir;
  const char* given = std::getenv("ETWH_BENCH_ETL");
  g_path = given != nullptr ? given : corpus_file(tool, dir);
  if (g_path.empty()) {
    std::fprintf(stderr, "%s: no file: set ETWH_BENCH_ETL or provide %s\n", tool,
                 ETWH_ETL_CORPUS_DIR);
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (!dir.empty()) std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace etl_bench
