// `etwh compare OLD NEW [--alpha P] [--min-effect PCT] [--only REGEX] [--markdown FILE]
// [--json FILE]`: prints the comparison (harness/compare/README.md) and writes it as markdown and
// JSON (schemas/compare.schema.json). Exit 0: no regression; 1: a figure got slower beyond the
// thresholds, or a case newly fails or XPASSes; 2: bad input (a file that does not read, two
// files of different kinds, a bad option), nothing written.
#pragma once

#include "harness/compare/compare.h"

#include <string>
#include <vector>

namespace etwh::compare {

struct CompareArgs {
  std::string old_file, new_file;
  Thresholds thresholds;
  // The file of each of compare_formats() (harness/report/compare_report.h), in its order; empty:
  // not written.
  std::vector<std::string> format_files;
};

int run_compare_command(const CompareArgs& args);

}  // namespace etwh::compare
