// etwh_bench_runtime: the etwrt control-plane and EventWrite benchmarks alone (runtime_bench.cc).
#include "runtime_world.h"

int main(int argc, char** argv) {
  return etwh_bench::run_in_runtime("etwh_bench_runtime", argc, argv);
}
