// `etwh compare OLD NEW`: regression gates between two result files of the same kind.
//  - figures with repetitions (`etwh stress` JSON, Google Benchmark JSON): the Mann-Whitney U
//    test over the repetitions plus a minimum effect on the median give each figure a verdict
//    (faster, slower, same, noisy); "slower" is a regression;
//  - conformance runs (`etwh run` JSON, schema_version 1 or 2): the verdicts that changed per
//    case and per rule; a new failure or a new XPASS is a regression.
// Format, thresholds and how to keep a baseline from flapping: harness/compare/README.md. What a
// comparison finds is data (harness/model/comparison.h); its writers are in harness/report/.
#pragma once

#include "harness/model/comparison.h"

#include <nlohmann/json.hpp>

#include <filesystem>
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

// Throws CompareInputError when the two are of different kinds or `only` is not a valid
// regular expression.
Comparison compare_documents(const Document& old_doc, const Document& new_doc,
                             const Thresholds& thresholds);

// The verdict of one figure (exposed for tests): significant (p < alpha) and at least
// min_effect: faster or slower as `better` says; significant and smaller: same; large but not
// significant: noisy; else same.
Verdict judge_figure(double change, double p_value, Better better, const Thresholds& t);

}  // namespace etwh::compare
