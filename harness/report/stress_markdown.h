// `etwh stress`'s file formats: the results document the command makes (its runs as data,
// schemas/stress.schema.json) written as JSON, and the markdown summary read from it.
#pragma once

#include "harness/model/comparison.h"
#include "harness/report/file_formats.h"

#include <nlohmann/json.hpp>

#include <span>
#include <string>

namespace etwh::stress {

// What `etwh stress` hands its writers: the results document and, with --baseline, the
// comparison with it.
struct StressResults {
  const nlohmann::ordered_json& doc;
  const compare::Comparison* baseline = nullptr;
};

// A title with the outcome, the runs that failed first (with why), then a table per run and
// session: written, delivered, reported lost, delivery rate, latency p50 and p99, the writer's
// CPU per event. With a baseline, its comparison's markdown follows.
std::string stress_markdown(const nlohmann::ordered_json& results,
                            const compare::Comparison* baseline);

// --json and --markdown.
std::span<const FileFormat<StressResults>> stress_formats();

}  // namespace etwh::stress
