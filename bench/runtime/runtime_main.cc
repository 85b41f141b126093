// etwh_bench_runtime: the etwrt control-plane and EventWrite benchmarks alone (runtime_bench.cc).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <exception>

#include "runtime_world.h"

int main(int argc, char** argv) {
  std::string owned_dir;
  try {
    owned_dir = etwh_bench::runtime_begin();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "etwh_bench_runtime: %s\n", e.what());
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  etwh_bench::runtime_end(owned_dir);
  return 0;
}
