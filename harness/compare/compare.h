// `etwh compare OLD NEW`: regression gates between two result files of the same kind.
//  - figures with repetitions (`etwh stress` JSON, Google Benchmark JSON): the Mann-Whitney U
//    test over the repetitions plus a minimum effect on the median give each figure a verdict
//    (faster, slower, same, noisy); "slower" is a regression;
//  - conformance runs (`etwh run` JSON, schema_version 1 or 2): the verdicts that changed per
//    case and per rule; a new failure or a new XPASS is a regression.
// Format, thresholds and how to keep a baseline from flapping: harness/compare/README.md.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <iosfwd>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace etwh::compare {

// Bad input, in the one format of every loader (input_error.h):
// "<file>:<line>:<col>: <pointer>: <reason>", leaving out what is unknown.
class CompareInputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  // At a JSON value: load_document adds its line:col.
  CompareInputError(std::string file, std::string pointer, std::string reason);

  const std::string& file() const { return file_; }
  const std::string& pointer() const { return pointer_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string file_, pointer_, reason_;
};

enum class Kind { kStress, kRun, kBenchmark };
enum class Better { kLower, kHigher };
const char* kind_name(Kind kind);

// What a Google Benchmark file written with --benchmark_report_aggregates_only keeps of a
// figure's repetitions: their count, mean, median and standard deviation.
struct Summary {
  std::size_t n = 0;
  double mean = 0, median = 0, stddev = 0;
};

// One figure of a result file: its value in every repetition, or only their summary.
struct Figure {
  std::string name;  // "<profile> writer CPU/event", "<benchmark> real_time", ...
  std::string unit;
  Better better = Better::kLower;
  std::vector<double> values;
  std::optional<Summary> summary;  // set when the file has no repetitions, only aggregates
};

struct Document {
  std::string source;  // the file (or "this run"), for messages and reports
  Kind kind = Kind::kStress;
  std::vector<Figure> figures;               // stress and benchmark files
  std::map<std::string, std::string> cases;  // run files: case id -> status
  std::map<std::string, std::string> rules;  // run files: rule id -> status
  // Figures left out because a value is not a number or infinite: name -> "NaN in <file>".
  std::map<std::string, std::string> not_comparable;
};

// Reads a result file; throws CompareInputError naming the file and the place.
Document load_document(const std::filesystem::path& file);
// The same from parsed JSON; `source` names it in messages. With `nonfinite_markers`, the
// markers of nonfinite.h read as the numbers they stand for.
Document read_document(const nlohmann::json& doc, const std::string& source,
                       bool nonfinite_markers = false);

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

// Throws CompareInputError when the two are of different kinds or `only` is not a valid
// regular expression.
Comparison compare_documents(const Document& old_doc, const Document& new_doc,
                             const Thresholds& thresholds);

// The verdict of one figure (exposed for tests): significant (p < alpha) and at least
// min_effect: faster or slower as `better` says; significant and smaller: same; large but not
// significant: noisy; else same.
Verdict judge_figure(double change, double p_value, Better better, const Thresholds& t);

void print_console(const Comparison& c, std::ostream& out);
std::string markdown(const Comparison& c);
nlohmann::ordered_json to_json(const Comparison& c);  // schemas/compare.schema.json

}  // namespace etwh::compare
