#include "harness/model/stress_run.h"

namespace etwh::stress {

const char* file_mode_name(FileMode mode) {
  return mode == FileMode::kCircular ? "circular" : "sequential";
}

const char* outcome_status(const Outcome& o) {
  if (!o.run) return "HARNESS_ERROR";
  return o.run->failures.empty() ? "PASS" : "FAIL";
}

}  // namespace etwh::stress
