#include "harness/report/formats.h"

#include <sstream>
#include <stdexcept>

namespace etwh {

// Each format's writer, made in its own file (sarif_report.cc, ...).
std::unique_ptr<ReportWriter> make_sarif_report(const ReportSettings& settings);
std::unique_ptr<ReportWriter> make_tap_report(const ReportSettings& settings);

namespace {

std::unique_ptr<ReportWriter> make_json(const ReportSettings&) {
  return std::make_unique<JsonReport>();
}
std::unique_ptr<ReportWriter> make_junit(const ReportSettings& s) {
  return std::make_unique<JunitReport>(s.scenarios_dir);
}
std::unique_ptr<ReportWriter> make_markdown(const ReportSettings& s) {
  return std::make_unique<MarkdownReport>(s.scenarios_dir);
}

constexpr ReportFormat kFormats[] = {
    {"json", "Write the JSON report to FILE", make_json},
    {"junit", "Write JUnit XML to FILE", make_junit},
    {"markdown",
     "Write a markdown summary to FILE (- for standard output), for a CI job summary or a "
     "merge-request comment",
     make_markdown},
    {"sarif", "Write SARIF 2.1.0 to FILE, for GitHub code scanning", make_sarif_report},
    {"tap", "Write TAP version 14 to FILE (- for standard output), for prove and TAP readers",
     make_tap_report},
};

}  // namespace

std::span<const ReportFormat> report_formats() { return kFormats; }

const ReportFormat& report_format(std::string_view option) {
  for (const ReportFormat& format : kFormats) {
    if (format.option == option) return format;
  }
  throw std::out_of_range("no report format \"" + std::string(option) + "\"");
}

std::string report_text(const ReportFormat& format, const ReportSettings& settings,
                        const RunInfo& info, const std::vector<CaseResult>& results) {
  std::ostringstream text;
  format.make(settings)->write(info, results, text);
  return text.str();
}

}  // namespace etwh
