#include "harness/report/stress_formats.h"

namespace etwh::stress {
namespace {

constexpr FileFormat<StressResults> kFormats[] = {
    {"json", "Write the JSON results to FILE", stress_json_text},
    {"markdown",
     "Write a markdown summary to FILE (- for standard output), for a CI job summary or a "
     "merge-request comment",
     stress_markdown_text},
};

}  // namespace

std::span<const FileFormat<StressResults>> stress_formats() { return kFormats; }

}  // namespace etwh::stress
