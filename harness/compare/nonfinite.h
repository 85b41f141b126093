// Google Benchmark writes a double that is not finite as a bare NaN, -NaN, Infinity or
// -Infinity (src/json_reporter.cc, 1.5 to 1.9), which JSON does not allow and nlohmann::json
// refuses. Before parsing, each such token outside a string becomes a marker string of the same
// length (padded with spaces), so that every byte keeps its offset and errors their line:col;
// the compare readers turn the markers back into the double.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace etwh::compare {

// `text` with the bare non-finite tokens replaced; `replaced` counts them.
std::string nonfinite_as_markers(const std::string& text, int& replaced);

// The double a marker stands for; nullopt for any other value.
std::optional<double> marker_value(const nlohmann::json& v);

}  // namespace etwh::compare
