// `etwh expectations update`: rewrites a platform's expectations from a run's JSON report, as
// wpt's update-expectations does from a log. Cases the report does not hold keep their entries;
// existing reasons are kept; a case that now passes as its file expects loses its entry; a new
// non-PASS case gets an entry with kPlaceholderReason for a person to replace.
#pragma once

#include "harness/model/expectations.h"

#include <filesystem>
#include <string>
#include <vector>

namespace etwh {

// One case of a report, as update needs it: its raw outcome (XFAIL read as FAIL, XPASS as PASS).
struct ReportedCase {
  std::string id;
  std::string file;  // the scenario file; empty in reports that do not carry it
  Status outcome = Status::kPass;
};

// Reads an `etwh run --json` report (schema_version 2) of a run on `platform`. Throws
// InputError "<report>:<line>:<col>: <pointer>: reason" (a wrong platform included).
std::vector<ReportedCase> load_run_report(const std::filesystem::path& report,
                                          const std::string& platform);

// What an update changed, each list of case ids sorted.
struct UpdateSummary {
  std::vector<std::string> added;    // new entries, with the placeholder reason
  std::vector<std::string> changed;  // another status, the reason kept
  std::vector<std::string> removed;  // pass now as their file expects
  std::vector<std::string> ignored;  // HARNESS_ERROR: a fault of the harness, never expected
};

// Brings `file` in line with `cases`. Example:
//   ExpectationsFile f = load_expectations_file(path);
//   UpdateSummary s = update_expectations(f, load_run_report(report, "wine"));
//   OutputFile(path).write(expectations_text(f));
UpdateSummary update_expectations(ExpectationsFile& file, const std::vector<ReportedCase>& cases);

}  // namespace etwh
