#include "harness/report/progress.h"

#include "harness/report/console_lines.h"

#include <fmt/format.h>

#include <string>

namespace etwh {

namespace {

// The findings printed under a case's line, each once: every one (verbose); else the failed
// checks of a case not as expected, and what ended it early (a fault, located in its file).
// Warnings are grouped over the run in the summary, notes show only verbose.
bool shows(const Finding& f, const CaseResult& r, Verbosity verbosity) {
  if (verbosity == Verbosity::kVerbose) return true;
  return !r.as_expected && f.severity == Severity::kFailure;
}

bool has_failure(const CaseResult& r) {
  for (const Finding& f : r.findings) {
    if (f.severity == Severity::kFailure) return true;
  }
  return false;
}

}  // namespace

void ProgressPrinter::finished(const CaseResult& result, int repetition) {
  ++done_;
  const bool plain = result.as_expected && result.status == Status::kPass;
  if (verbosity_ == Verbosity::kQuiet && result.as_expected) return;
  const std::size_t width = std::to_string(total_).size();
  std::string line = fmt::format("[{:>{}}/{}] ", done_, width, total_);
  line += style_.status(result.status, result.as_expected,
                        fmt::format("{:<5}", status_name(result.status)));
  line += " " + result.id;
  if (repetition > 0) line += fmt::format(" #{}", repetition);
  line += fmt::format(" ({:.2f} s)", result.duration_s);
  if (!plain && result.as_expected) line += " (expected)";
  // A case whose failure no finding says (an unforeseen PASS, an XPASS) says it here; a fault
  // (TIMEOUT, CRASH, HARNESS_ERROR) is a finding of its own, under the line.
  if (!plain && !has_failure(result) && !result.message.empty()) line += ": " + result.message;
  out_ << fit(line, width_) << "\n";
  for (const Finding& f : result.findings) {
    if (shows(f, result, verbosity_)) out_ << fit(finding_line(f, style_), width_) << "\n";
  }
  out_.flush();
}

}  // namespace etwh
