// `etwh stress --markdown`: the runs for a CI job summary or a merge-request comment, read from
// the results document the command writes with --json (schemas/stress.schema.json).
#pragma once

#include "harness/compare/compare.h"

#include <nlohmann/json.hpp>

#include <string>

namespace etwh::stress {

// A title with the outcome, the runs that failed first (with why), then a table per run and
// session: written, delivered, reported lost, delivery rate, latency p50 and p99, the writer's
// CPU per event. With a baseline, its comparison's markdown follows.
std::string stress_markdown(const nlohmann::ordered_json& results,
                            const compare::Comparison* baseline);

}  // namespace etwh::stress
