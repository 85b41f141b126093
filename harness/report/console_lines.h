// The pieces of console text that the live lines (progress.h) and the summary (console_report.h)
// share: a finding as a compiler prints a diagnostic, lines cut to the terminal's width, and the
// run's warnings grouped so that one repeated in many cases is printed once.
#pragma once

#include "harness/report/console_style.h"
#include "harness/model/result.h"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace etwh {

// The characters a terminal shows for `text`: ANSI SGR sequences count none, a UTF-8 sequence
// one.
std::size_t visible_width(std::string_view text);

// `line` cut to `width` visible characters, its last one "…" when cut (colour reset after
// it); `width` 0: unlimited.
std::string fit(std::string_view line, std::size_t width);

// How wide console lines may be: COLUMNS when set to a number, else the terminal's width when
// standard output is one, else 0 (no limit: a log or a pipe keeps whole lines).
std::size_t console_width();

// A file as the console names it: relative to the working folder when inside it.
std::string display_path(const std::string& file);

// "FILE:LINE:COL" of the step a finding comes from ("FILE" with no position, "" with no file).
std::string finding_location(const Finding& f);

// "FILE:LINE:COL: error: text [RULE]" as clang prints a diagnostic ("error" for a failed
// check, "warning", "note"); the severity coloured on a terminal.
std::string finding_line(const Finding& f, const ConsoleStyle& style);

// One warning as the run printed it once: its rule and text, where it was first seen, and the
// cases that raised it.
struct WarningGroup {
  std::string rule;
  std::string text;
  std::string location;
  std::vector<std::string> cases;
};

// The run's warnings (severity warning), one group per rule and text, in order of first
// appearance.
std::vector<WarningGroup> group_warnings(const std::vector<CaseResult>& results);

}  // namespace etwh
