// What `etwh compare` finds between two result files, as data: each figure's verdict, the cases
// and rules whose status changed, the regressions. harness/compare/ makes it; the writers of
// harness/report/ (compare_report.h) and `etwh stress --markdown` read it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace etwh::compare {

enum class Kind { kStress, kRun, kBenchmark };
enum class Better { kLower, kHigher };
const char* kind_name(Kind kind);

// What a Google Benchmark file written with --benchmark_report_aggregates_only keeps of a
// figure's repetitions: their count, mean, median and standard deviation.
struct Summary {
  std::size_t n = 0;
  double mean = 0, median = 0, stddev = 0;
};

struct Thresholds {
  double alpha = 0.05;       // a difference is significant when p < alpha
  double min_effect = 0.05;  // ... and matters when the medians differ by this fraction or more
  std::string only;          // a pattern (etwh/pattern.h): compare only the figures it finds
};

enum class Verdict { kFaster, kSlower, kSame, kNoisy };
const char* verdict_name(Verdict v);

struct Sample {
  std::size_t n = 0;
  double median = 0, min = 0, max = 0;
  std::optional<Summary> summary;  // from aggregates: min and max unknown
};

struct FigureComparison {
  std::string name, unit;
  Better better = Better::kLower;
  Sample old_sample, new_sample;
  double change = 0;  // (new median - old median) / old median
  double u = 0, p_value = 1;
  bool exact = false;
  bool welch = false;  // from summaries (aggregates only): Welch's t-test, not the U test
  Verdict verdict = Verdict::kSame;
};

// A case whose status changed (absent on one side: nullopt).
struct CaseChange {
  std::string id;
  std::optional<std::string> old_status, new_status;
  std::string change;  // "new failure", "new XPASS", "fixed", "changed", "added", "removed"
  bool regression = false;
};

struct RuleChange {
  std::string id;
  std::optional<std::string> old_status, new_status;
};

struct Comparison {
  Kind kind = Kind::kStress;
  std::string old_source, new_source;
  Thresholds thresholds;
  std::vector<FigureComparison> figures;
  std::vector<std::string> unmatched;  // figures on one side only: "<name> (only in OLD)"
  std::vector<CaseChange> cases;
  std::vector<RuleChange> rules;
  std::size_t regressions = 0;  // slower figures, new failures and new XPASSes
};

}  // namespace etwh::compare
