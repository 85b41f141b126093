// What the commands that report cases as `etwh run` does share (run, judge, observe): the run's
// description, and for the commands that judge every case before printing any (judge, observe)
// their console output, their report files and their exit status.
#pragma once

#include "harness/commands/command.h"
#include "harness/model/result.h"
#include "harness/report/console_report.h"
#include "harness/report/formats.h"
#include "etwh/output_file.h"

#include <optional>
#include <string>
#include <vector>

namespace etwh::cli {

// A run that starts now on `platform`: this program's version, the host and the command line.
RunInfo run_info_now(const Context& context, std::string platform);

// A line per case (as `etwh run` prints them live; with their findings under -v), the summary,
// then each report asked for (`reports`: one per format of report_formats(), or empty).
// Returns the exit status: kExitBadInput on a harness error, kExitUnexpected when a case is not
// as expected, else kExitOk.
int report_judged_cases(const std::vector<CaseResult>& cases, const RunInfo& info,
                        const ConsoleOptions& console,
                        const std::vector<std::optional<OutputFile>>& reports,
                        const ReportSettings& settings);

}  // namespace etwh::cli
