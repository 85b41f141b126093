// TAP version 14 (the Test Anything Protocol, testanything.org), which prove, tap-junit and most
// CI readers take: the plan "1..N", then a test point per case, "ok N - <case>" or
// "not ok N - <case>". A case not as expected (FAIL, XPASS, a fault) is "not ok" followed by a
// YAML diagnostic block (status, expected, file, message and its failed findings); an XFAIL is
// "not ok ... # TODO <the expectation's reason>", TAP's expected failure; any other expected
// non-PASS (UNSUPPORTED, ...) is "ok ... # SKIP <reason>".
#include "harness/report/formats.h"

#include <fmt/format.h>

#include <ostream>

namespace etwh {
namespace {

// A YAML double-quoted scalar: every string reads back as itself whatever it holds.
std::string yaml_quoted(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// A test point's description or directive text: one line, no '#' that would start a directive
// (TAP escapes it and the backslash as "\#" and "\\").
std::string tap_text(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '#' || c == '\\') out += '\\';
    out += (c == '\n' || c == '\r') ? ' ' : c;
  }
  return out;
}

// A directive's reason: the expectation's (as JUnit's <skipped> gives it), else the case's
// message; " <reason>", or nothing when there is none.
std::string reason_text(const CaseResult& r) {
  std::string reason = r.message;
  for (const Finding& f : r.findings) {
    if (f.check == kCheckExpectation && f.severity == Severity::kNote) reason = f.text;
  }
  if (reason.empty()) return "";
  // Appended, not '" " + tap_text(...)': mingw-w64's GCC 12 at -O3 takes that for an
  // overlapping copy (-Werror=restrict).
  std::string text = " ";
  text += tap_text(reason);
  return text;
}

void diagnostic(const CaseResult& r, const std::string& scenarios_dir, std::ostream& out) {
  out << "  ---\n";
  out << "  status: " << status_name(r.status) << "\n";
  out << "  expected: " << status_name(expected_status(r)) << "\n";
  if (!r.file.empty())
    out << "  file: " << yaml_quoted(scenario_path(r.file, scenarios_dir)) << "\n";
  out << "  message: " << yaml_quoted(r.message) << "\n";
  bool any = false;
  for (const Finding& f : r.findings) {
    if (f.severity != Severity::kFailure) continue;
    if (!any) out << "  findings:\n";
    any = true;
    out << "    - rule: " << yaml_quoted(f.rule) << "\n";
    out << "      check: " << yaml_quoted(f.check) << "\n";
    out << "      text: " << yaml_quoted(describe(f)) << "\n";
    if (!f.expected.empty()) out << "      expected: " << yaml_quoted(f.expected) << "\n";
    if (!f.observed.empty()) out << "      observed: " << yaml_quoted(f.observed) << "\n";
    if (f.step.line > 0) {
      out << "      at: "
          << yaml_quoted(
                 fmt::format("{}:{}:{}", scenario_path(f.step.file, {}), f.step.line, f.step.col))
          << "\n";
    }
  }
  out << "  ...\n";
}

class TapReport : public ReportWriter {
 public:
  explicit TapReport(std::string scenarios_dir) : scenarios_dir_(std::move(scenarios_dir)) {}

  void write(const RunInfo& info, const std::vector<CaseResult>& results,
             std::ostream& out) const override {
    out << "TAP version 14\n";
    out << "1.." << results.size() << "\n";
    out << "# etwh " << tap_text(info.version) << " on " << tap_text(info.platform) << "\n";
    std::size_t n = 0;
    for (const CaseResult& r : results) {
      const std::string point = fmt::format("{} - {}", ++n, tap_text(r.id));
      if (!r.as_expected) {
        out << "not ok " << point << "\n";
        diagnostic(r, scenarios_dir_, out);
      } else if (r.status == Status::kXFail) {
        out << "not ok " << point << " # TODO" << reason_text(r) << "\n";
      } else if (r.status != Status::kPass) {
        out << "ok " << point << " # SKIP " << status_name(r.status) << reason_text(r) << "\n";
      } else {
        out << "ok " << point << "\n";
      }
    }
  }

 private:
  std::string scenarios_dir_;
};

}  // namespace

std::unique_ptr<ReportWriter> make_tap_report(const ReportSettings& settings) {
  return std::make_unique<TapReport>(settings.scenarios_dir);
}

}  // namespace etwh
