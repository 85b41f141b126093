// The report formats `etwh run` writes to files, as data: each one's option, its help and its
// writer. The command defines an option per row and writes each file asked for; a new format
// is its writer's file and one row in formats.cc.
#pragma once

#include "harness/report/report.h"

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace etwh {

// What a writer may need from the command beyond the results.
struct ReportSettings {
  std::string scenarios_dir;  // --scenarios: the folder scenario files are named from
};

struct ReportFormat {
  const char* option;  // the long option, without "--" ("json")
  const char* help;    // its help line; the value is a FILE ("-": standard output)
  std::unique_ptr<ReportWriter> (*make)(const ReportSettings&);
};

// Every file format of `etwh run`, in the order of its help.
std::span<const ReportFormat> report_formats();

// The format whose option is `option` ("json", for `etwh observe`); throws std::out_of_range
// for a name the table lacks.
const ReportFormat& report_format(std::string_view option);

// `format`'s report of a run, as the file's text.
std::string report_text(const ReportFormat& format, const ReportSettings& settings,
                        const RunInfo& info, const std::vector<CaseResult>& results);

}  // namespace etwh
