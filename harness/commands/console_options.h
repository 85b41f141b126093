// The console's options of a command that prints cases (run, judge, observe), from its flags.
#pragma once

#include "harness/report/console_report.h"

#include <CLI/CLI.hpp>

#include <string_view>

namespace etwh::cli {

// -q and -v give the verbosity; -v also the width (0: everything, whole). `color` is a --color
// value: "always", "never", or "auto" (colour on a terminal unless NO_COLOR, no-color.org, is set
// and not empty).
ConsoleOptions console_options_from(bool quiet, bool verbose, std::string_view color = "auto");

// The flags behind them, -q,--quiet and -v,--verbose (which exclude each other), on `cmd`.
void add_console_flags(CLI::App& cmd, bool& quiet, bool& verbose);

}  // namespace etwh::cli
