#include "progress.h"

#include <fmt/format.h>

#include <string>

namespace etwh {

namespace {

// The findings shown under a case's line: every one (verbose), or the warnings of a case whose
// message is not on its line already.
bool shows(const Finding& f, Verbosity verbosity) {
  if (verbosity == Verbosity::kVerbose) return true;
  return f.severity == Severity::kWarning;
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
  if (!result.as_expected) {
    line += ": " + result.message;
  } else if (!plain) {
    line += " (expected): " + result.message;
  }
  out_ << line << "\n";
  // A case not PASS has its findings in its message already; a passing one shows its warnings
  // (or, verbose, everything it found).
  if (plain || verbosity_ == Verbosity::kVerbose) {
    for (const Finding& f : result.findings) {
      if (shows(f, verbosity_))
        out_ << "    " << severity_name(f.severity) << " " << describe(f) << "\n";
    }
  }
  out_.flush();
}

}  // namespace etwh
