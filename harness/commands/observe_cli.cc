// `etwh observe -- PROGRAM [ARGS]` (Linux): the command line of harness/observe/; the run and
// its judging are observe_run.h and judge.h. Reports and exit codes as `etwh run`.
#include "harness/commands/command.h"

#include "harness/commands/case_findings.h"
#include "harness/commands/case_reports.h"
#include "harness/commands/console_options.h"
#include "harness/model/catalog.h"
#include "harness/report/console_lines.h"
#include "harness/report/console_report.h"
#include "etwh/child_process.h"
#include "etwh/output_file.h"
#include "etwh/platform.h"
#include "etwh/stop_signals.h"
#include "harness/model/input_error.h"
#include "harness/observe/observe_run.h"
#include "harness/observe/schedule.h"
#include "harness/report/formats.h"
#include "harness/report/progress.h"
#include "harness/report/report.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

namespace etwh::cli {
namespace {

class ObserveCommand : public Command {
 public:
  ObserveCommand()
      : Command("observe",
                "Run a program linked against etwrt and judge its providers as they work") {}

  void add_options(CLI::App& cmd, const Context&) override {
    cmd.add_option("--schedule", schedule_file_,
                   "The session configurations each provider is walked through (JSON; default "
                   "scenarios/observe/default.json)");
    // The file formats of `etwh run` (report/formats.h), each from its row.
    add_format_options(cmd, report_formats(), report_files_);
    cmd.add_option("--timeout", timeout_s_,
                   "Stop the program after this many seconds (a harness error; default 60)")
        ->check(CLI::Range(1u, 86400u));
    add_console_flags(cmd, quiet_, verbose_);
    cmd.add_option("command", command_, "-- PROGRAM [ARGS]: the program to observe")->required();
  }

  int execute(const Context& context) override {
    const Catalog catalog = load_catalog(context.catalog_file);
    require_harness_rules(catalog, context.catalog_file);
    observe::ObserveOptions o;
    o.schedule_file = schedule_file_.empty()
                          ? (context.data / "scenarios" / "observe" / "default.json").string()
                          : schedule_file_;
    o.schedule = observe::load_schedule(o.schedule_file);
    o.catalog = &catalog;
    o.program = command_.front();
    if (::access(o.program.c_str(), X_OK) != 0) {
      throw InputError(o.program.string(), "", "not an executable file");
    }
    o.args.assign(command_.begin() + 1, command_.end());
    o.timeout = std::chrono::seconds(timeout_s_);
    const std::vector<std::optional<OutputFile>> reports = output_files(report_files_);

    catch_stop_signals();
    PrivateEtwrtHome home;
    RunInfo info = run_info_now(context, build_platform());
    std::vector<CaseResult> cases;
    try {
      cases = observe::observe_program(o);
    } catch (const ChildProcessError& e) {
      throw InputError(o.program.string(), "", e.what());
    }
    if (stop_requested()) return stop_exit_code();
    for (const CaseResult& c : cases) info.duration_s = std::max(info.duration_s, c.duration_s);
    // Findings under -v: the event kinds seen, decoded, and each session's account.
    return report_judged_cases(cases, info, console_options_from(quiet_, verbose_), reports, {});
  }

 private:
  std::string schedule_file_;
  std::vector<std::string> report_files_;  // a file per format of report_formats(), or empty
  unsigned timeout_s_ = 60;
  bool quiet_ = false, verbose_ = false;
  std::vector<std::string> command_;
};

}  // namespace

std::unique_ptr<Command> make_observe_command() { return std::make_unique<ObserveCommand>(); }

}  // namespace etwh::cli
