// The regression gate's options, as `etwh compare` and `etwh stress --baseline` take them:
// --alpha, --min-effect (in %) and --only, into a compare::Thresholds.
#pragma once

#include "harness/model/comparison.h"

#include <CLI/CLI.hpp>

#include <string>

namespace etwh::cli {

// `condition` starts each help line ("With --baseline"); empty: none.
void add_threshold_options(CLI::App& cmd, compare::Thresholds& thresholds,
                           const std::string& condition = {});

}  // namespace etwh::cli
