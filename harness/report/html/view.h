// The page's data: what the inputs say, arranged for its tables and charts (the page's script
// only draws). Every value read is checked: bad input throws InputError naming the file and the
// JSON pointer, so no page is written from it.
#pragma once

#include "harness/report/html/inputs.h"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace etwh::report_html {

// The rule-by-platform matrix of `etwh run` reports: one column per report, one row per rule
// (in the order first seen), each cell with the rule's verdict and the cases behind it.
nlohmann::json conformance_view(const std::vector<const Input*>& runs);

// Every run of every `etwh stress` file: per session its figures, latency CDF (from the
// histogram) and time series; and the sweeps found over them.
nlohmann::json stress_view(const std::vector<const Input*>& stress);

// The figures with their verdicts (and the cases and rules) of `etwh compare` outputs.
nlohmann::json compare_view(const std::vector<const Input*>& compares);

// The events of `--trace` files (Trace Event Format): per file its lanes (process / thread, in
// order of first appearance) and every event but the metadata as a mark {lane, ph, name, ts,
// dur (slices), args}.
nlohmann::json timeline_view(const std::vector<const Input*>& traces);

// One measured point of a sweep: which profile (group), with which parameters (flattened:
// "buffers.maximum"), and what came out.
struct SweepPoint {
  std::string group;
  std::map<std::string, nlohmann::json> parameters;
  std::map<std::string, double> figures;
};

// The sweeps among `points`: per group whose points differ in a numeric parameter, each figure
// against that parameter (one series per combination of the other varying parameters). Returns
// {"sweeps": [...], "no_sweep": ["<group>: why not", ...]}.
nlohmann::json sweeps_of(const std::vector<SweepPoint>& points);

// The whole page's data: {"generator", "inputs", "conformance", "stress", "compare",
// "timeline"}.
nlohmann::json build_view(const std::vector<Input>& inputs, const std::string& generator);

}  // namespace etwh::report_html
