#include "harness/model/comparison.h"

namespace etwh::compare {

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::kStress: return "stress";
    case Kind::kRun: return "run";
    case Kind::kBenchmark: return "benchmark";
  }
  return "?";
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kFaster: return "faster";
    case Verdict::kSlower: return "slower";
    case Verdict::kSame: return "same";
    case Verdict::kNoisy: return "noisy";
  }
  return "?";
}

}  // namespace etwh::compare
