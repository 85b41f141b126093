// `etwh compare`'s writers (and those of `etwh stress --baseline`): the comparison
// (harness/model/comparison.h) as a console table, as markdown for a pull-request comment and as
// JSON (schemas/compare.schema.json).
#pragma once

#include "harness/model/comparison.h"
#include "harness/report/file_formats.h"

#include <nlohmann/json.hpp>

#include <ostream>
#include <span>
#include <string>

namespace etwh::compare {

void print_console(const Comparison& c, std::ostream& out);
// What went wrong first: slower figures, then noisy ones, faster, same; regressed cases first.
std::string markdown(const Comparison& c);
nlohmann::ordered_json to_json(const Comparison& c);

// `etwh compare`'s file formats: --markdown, --json.
std::span<const FileFormat<Comparison>> compare_formats();

}  // namespace etwh::compare
