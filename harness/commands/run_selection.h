// Which cases `etwh run` runs, and in what order: --filter REGEX over case IDs, --rule ID
// (repeatable), --repeat N and --shuffle [--seed S]. A selection that leaves no case is bad
// input: the run says so and exits 2 before starting anything.
#pragma once

#include "harness/conformance/scenario.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace etwh::cli {

struct SelectionOptions {
  std::string filter;  // a pattern (etwh/pattern.h), searched in each case ID (empty: all)
  std::vector<std::string> rules;  // keep the cases naming any of these (empty: all)
  int repeat = 1;                  // runs of each case
  bool shuffle = false;
  std::optional<std::uint64_t> seed;  // of the shuffle; unset: a random one, printed
};

// One run of one case: its index in the selected cases, its repetition (1-based).
struct ScheduledRun {
  std::size_t case_index = 0;
  int repetition = 1;
};

struct Selection {
  std::vector<Case> cases;            // the selected cases, in file order
  std::vector<ScheduledRun> runs;     // every run to do, in the order to start them
  std::optional<std::uint64_t> seed;  // the shuffle's, set with --shuffle
};

// Applies `options` to `cases` (file order). `catalog_rules` checks the --rule IDs; `source`
// names the scenarios in messages. Throws InputError: a regex that does not compile, a rule not
// in the catalog, a --repeat below 1, or no case left.
Selection select_cases(std::vector<Case> cases, const SelectionOptions& options,
                       const std::set<std::string>& catalog_rules, const std::string& source);

}  // namespace etwh::cli
