#include "harness/report/progress.h"

#include "harness/report/console_lines.h"

#include <fmt/format.h>

#include <string>

namespace etwh {

namespace {

bool is_fault(Status s) {
  return s == Status::kTimeout || s == Status::kCrash || s == Status::kHarnessError;
}

// The findings printed under a case's line, each once: every one (verbose); else the failed
// checks of a case not as expected. Warnings are grouped over the run in the summary, notes
// show only verbose.
bool shows(const Finding& f, const CaseResult& r, Verbosity verbosity) {
  if (verbosity == Verbosity::kVerbose) return true;
  return !r.as_expected && !is_fault(r.status) && f.severity == Severity::kFailure;
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
  // A case whose failure no finding says (an unforeseen PASS, an XPASS) says it here, and a
  // fault (TIMEOUT, CRASH, HARNESS_ERROR) says what ended the case after the failures before it.
  if (!plain &&
      (verbosity_ == Verbosity::kVerbose || !has_failure(result) || is_fault(result.status)) &&
      !result.message.empty())
    line += ": " + result.message;
  out_ << fit(line, width_) << "\n";
  for (const Finding& f : result.findings) {
    if (shows(f, result, verbosity_)) out_ << fit(finding_line(f, style_), width_) << "\n";
  }
  out_.flush();
}

}  // namespace etwh
