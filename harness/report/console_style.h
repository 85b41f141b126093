// How the console writers (the live progress lines and the summary) present a status: how much
// they say (Verbosity) and whether they colour it (ConsoleStyle). The command line decides
// both; the writers only follow.
#pragma once

#include "harness/model/result.h"

#include <string>
#include <string_view>

namespace etwh {

// Quiet: only the cases not as expected, and the summary. Normal: a line per case, the
// warnings of passing cases under theirs. Verbose: every finding of every case, notes too.
enum class Verbosity { kQuiet, kNormal, kVerbose };

// ANSI colours (SGR) on a terminal, plain text elsewhere:
//   ConsoleStyle style(true);
//   out << style.status(Status::kFail, false, "FAIL");  // "\x1b[31mFAIL\x1b[0m"
class ConsoleStyle {
 public:
  ConsoleStyle() = default;
  explicit ConsoleStyle(bool color) : color_(color) {}

  // `text` in the colour of a result: green for a PASS as expected, yellow for another status
  // as expected (XFAIL, UNSUPPORTED), red for anything not as expected.
  std::string status(Status s, bool as_expected, std::string_view text) const;
  std::string bold(std::string_view text) const;
  // `text` in the colour clang gives a diagnostic of that severity: red, magenta, cyan.
  std::string severity(Severity s, std::string_view text) const;
  bool color() const { return color_; }

 private:
  bool color_ = false;
};

}  // namespace etwh
