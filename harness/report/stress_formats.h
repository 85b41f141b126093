// `etwh stress`'s file formats: the results document the command's runs make (model/stress_run.h
// to schemas/stress.schema.json, stress_json_report.cc) written as JSON, and the markdown summary
// read from it (stress_markdown.cc); the table of both is stress_formats.cc.
#pragma once

#include "harness/model/comparison.h"
#include "harness/model/stress_run.h"
#include "harness/report/file_formats.h"

#include <nlohmann/json.hpp>

#include <span>
#include <string>
#include <vector>

namespace etwh::stress {

// The results document: schema_version, run_info (from `info`), results[] (one per outcome,
// in order). The JSON format writes it; --baseline compares it; the markdown reads it.
nlohmann::ordered_json results_document(const StressRunInfo& info,
                                        const std::vector<Outcome>& outcomes);

// What `etwh stress` hands its writers: the results document and, with --baseline, the
// comparison with it.
struct StressResults {
  const nlohmann::ordered_json& doc;
  const compare::Comparison* baseline = nullptr;
};

// The document as the --json file holds it.
std::string stress_json_text(const StressResults& results);

// A title with the outcome, the runs that failed first (with why), then a table per run and
// session: written, delivered, reported lost, delivery rate, latency p50 and p99, the writer's
// CPU per event. With a baseline, its comparison's markdown follows.
std::string stress_markdown(const nlohmann::ordered_json& results,
                            const compare::Comparison* baseline);
std::string stress_markdown_text(const StressResults& results);

// --json and --markdown.
std::span<const FileFormat<StressResults>> stress_formats();

}  // namespace etwh::stress
