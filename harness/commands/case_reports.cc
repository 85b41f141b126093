#include "harness/commands/case_reports.h"

#include "etwh/platform.h"
#include "harness/report/progress.h"
#include "harness/report/report.h"

#include <iostream>
#include <utility>

namespace etwh::cli {

RunInfo run_info_now(const Context& context, std::string platform) {
  RunInfo info;
  info.platform = std::move(platform);
  info.version = ETWH_VERSION;
  info.start_time = utc_now();
  info.host = host_name();
  info.command_line = context.command_line;
  return info;
}

int report_judged_cases(const std::vector<CaseResult>& cases, const RunInfo& info,
                        const ConsoleOptions& console,
                        const std::vector<std::optional<OutputFile>>& reports,
                        const ReportSettings& settings) {
  ProgressPrinter progress(std::cout, cases.size(), console.verbosity, console.style,
                           console.width);
  for (const CaseResult& c : cases) progress.finished(c, 0);
  ConsoleReport(console).write(info, cases, std::cout);
  for (std::size_t i = 0; i < reports.size(); ++i) {
    if (reports[i]) reports[i]->write(report_text(report_formats()[i], settings, info, cases));
  }
  bool unexpected = false;
  for (const CaseResult& c : cases) {
    if (c.status == Status::kHarnessError) return kExitBadInput;
    unexpected |= !c.as_expected;
  }
  return unexpected ? kExitUnexpected : kExitOk;
}

}  // namespace etwh::cli
