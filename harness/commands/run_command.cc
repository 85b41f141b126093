// `etwh run`: loads the catalog, the scenarios and the platform's expectations and selects the
// cases (everything that can be wrong with the input fails here, before anything runs), runs
// the selected cases through the driver (run_parallel.h), printing a line as each finishes, adds
// lint and expectation findings, and hands the results to the report writers.
#include "harness/commands/command.h"

#include "harness/commands/case_findings.h"
#include "harness/commands/case_reports.h"
#include "harness/commands/console_options.h"
#include "harness/model/catalog.h"
#include "harness/report/console_lines.h"
#include "harness/report/console_report.h"
#include "harness/conformance/driver.h"
#include "etwh/output_file.h"
#include "etwh/pattern.h"
#include "etwh/platform.h"
#include "etwh/stop_signals.h"
#include "harness/model/expectations.h"
#include "harness/report/progress.h"
#include "harness/report/formats.h"
#include "harness/report/report.h"
#include "harness/commands/run_parallel.h"
#include "harness/commands/run_selection.h"
#include "harness/conformance/scenario.h"
#include "harness/report/trace/trace.h"
#include "harness/environment/stale_sessions.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

namespace etwh::cli {
namespace {

namespace fs = std::filesystem;

// What a run needs from its input files, all checked.
struct RunInput {
  Catalog catalog;
  Selection selection;  // the cases to run, and the order of their runs
  std::string platform;
  Expectations expectations;
};

// One result per case once every run ended; `runs_done` short of the runs when a stop came first.
struct RunResults {
  std::vector<CaseResult> cases;
  std::size_t runs_done = 0;
};

class RunCommand : public Command {
 public:
  RunCommand() : Command("run", "Run conformance scenarios") {}
  void add_options(CLI::App& cmd, const Context&) override;
  int execute(const Context& context) override;

 private:
  RunInput load(const Context& context) const;
  Expectations load_expectations_for(const Context& context, const std::string& platform,
                                     const std::vector<Case>& cases) const;
  RunInfo run_info(const Context& context, const RunInput& input) const;
  DriverOptions driver_options(const Context& context) const;
  void define_console_options(CLI::App& cmd);
  void define_selection_options(CLI::App& cmd);
  RunResults run_cases(const RunInput& input, const DriverOptions& options,
                       const ConsoleOptions& console) const;

  std::vector<std::string> paths_;
  std::string agent_, platform_, expectations_file_;
  // A file per report format (report/formats.h), in its order; empty: not asked for.
  std::vector<std::string> report_files_;
  std::string subject_;     // the provider under test's agent (providers/adapter/)
  std::string trace_file_;  // --trace: a Trace Event Format timeline (harness/report/trace/)
  SelectionOptions selection_;
  int jobs_ = 1;
  bool quiet_ = false, verbose_ = false;
  std::string color_ = "auto";
};

void RunCommand::add_options(CLI::App& cmd, const Context&) {
  cmd.add_option("paths", paths_, "Scenario files or folders (default: all shipped)");
  add_format_options(cmd, report_formats(), report_files_);
  cmd.add_option("--agent", agent_, "The provider agent executable");
  cmd.add_option("--subject", subject_,
                 "Provider under test: an agent built with etwh_provider_under_test (default: "
                 "the shipped manifest-style example)");
  cmd.add_option("--platform", platform_,
                 "Platform name, one of the catalog's platforms (selects "
                 "expectations/<NAME>.json)");
  cmd.add_option("--expectations", expectations_file_, "Expectations file");
  cmd.add_option("--trace", trace_file_,
                 "Write a timeline (Trace Event Format, for Perfetto) to FILE");
  define_selection_options(cmd);
  define_console_options(cmd);
}

// A seed is digits only: CLI11 would take "-1" for the largest unsigned value.
CLI::Validator decimal_digits() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const bool digits = !text.empty() && text.find_first_not_of("0123456789") == text.npos;
        return digits ? "" : "'" + text + "' is not a non-negative integer";
      },
      "");
}

void RunCommand::define_selection_options(CLI::App& cmd) {
  cmd.add_option("--filter", selection_.filter,
                 std::string("Run only the cases whose ID matches REGEX (searched; ") +
                     pattern_syntax() + ")")
      ->type_name("REGEX");
  cmd.add_option("--rule", selection_.rules,
                 "Run only the cases naming rule ID (repeatable: any of them)")
      ->type_name("ID")
      ->allow_extra_args(false);
  cmd.add_option("-j,--jobs", jobs_,
                 "Run N cases at once, each with its own agents and sessions (cases sharing a "
                 "provider never overlap)")
      ->type_name("N")
      ->check(CLI::Range(1, 64));
  cmd.add_option("--repeat", selection_.repeat,
                 "Run each case N times; a case whose status changes is flaky (exit 1)")
      ->type_name("N")
      ->check(CLI::Range(1, 100000));
  CLI::Option* shuffle =
      cmd.add_flag("--shuffle", selection_.shuffle, "Run the cases in a random order");
  cmd.add_option("--seed", selection_.seed, "Seed of --shuffle (default: random, printed)")
      ->type_name("S")
      ->check(decimal_digits())
      ->needs(shuffle);
}

void RunCommand::define_console_options(CLI::App& cmd) {
  add_console_flags(cmd, quiet_, verbose_);
  cmd.add_option("--color", color_,
                 "Colour the statuses: auto (on a terminal, unless NO_COLOR is set), always, "
                 "never")
      ->type_name("WHEN")
      ->check(CLI::IsMember({"auto", "always", "never"}));
}

Expectations RunCommand::load_expectations_for(const Context& context, const std::string& platform,
                                               const std::vector<Case>& cases) const {
  fs::path file = expectations_file_;
  if (file.empty()) {
    file = context.data / "expectations" / (platform + ".json");
    if (!fs::exists(file)) return {};
  }
  // Entries for cases outside this run are fine when only some files were chosen.
  std::set<std::string> case_ids;
  std::vector<CaseFile> files;
  for (const auto& c : cases) {
    if (paths_.empty()) case_ids.insert(c.id);
    files.push_back({c.id, c.file});
  }
  return load_expectations(file, case_ids, files);
}

RunInput RunCommand::load(const Context& context) const {
  RunInput in;
  in.catalog = load_catalog(context.catalog_file);
  require_harness_rules(in.catalog, context.catalog_file);
  in.platform = platform_.empty() ? build_platform() : platform_;
  if (!in.catalog.platforms.count(in.platform)) {
    std::string known;
    for (const auto& [name, text] : in.catalog.platforms)
      known += (known.empty() ? "" : ", ") + name;
    throw InputError(
        context.catalog_file, "/platforms",
        "--platform " + in.platform + ": not a platform of the catalog (" + known + ")");
  }
  std::vector<fs::path> paths(paths_.begin(), paths_.end());
  if (paths.empty()) paths.push_back(context.scenarios_dir);
  std::vector<Case> cases = load_scenarios(paths, in.catalog.ids());
  in.expectations = load_expectations_for(context, in.platform, cases);
  std::string source;
  for (const fs::path& p : paths) source += (source.empty() ? "" : ", ") + p.string();
  in.selection = select_cases(std::move(cases), selection_, in.catalog.ids(), source);
  return in;
}

RunInfo RunCommand::run_info(const Context& context, const RunInput& input) const {
  RunInfo info = run_info_now(context, input.platform);
  for (const Rule& r : input.catalog.rules) {
    info.catalog_rules.push_back(r.id);
    if (auto u = r.unsupported.find(input.platform); u != r.unsupported.end()) {
      info.unsupported_reasons[r.id] = u->second;
    }
  }
  return info;
}

DriverOptions RunCommand::driver_options(const Context& context) const {
  DriverOptions options;
  options.agent =
      agent_.empty() ? context.exe_dir / executable_name("etwh-agent") : fs::path(agent_);
  if (!fs::exists(options.agent)) {
    throw InputError(options.agent.string(), "", "agent executable not found (use --agent)");
  }
  // Cases with a subject agent run the user's provider; by default a shipped example, so that
  // they always run.
  const fs::path subject = subject_.empty()
                               ? context.exe_dir / executable_name("etwh-example-manifest")
                               : fs::path(subject_);
  if (!subject_.empty() && !fs::exists(subject)) {
    throw InputError(subject.string(), "", "--subject executable not found");
  }
  if (fs::exists(subject)) options.subject = subject;
  options.session_prefix = fmt::format("etwh-{}-", process_id());
  return options;
}

CaseResult judge(Driver& driver, const Case& c, const RunInput& input) {
  CaseOutcome outcome = driver.run(c);
  apply_lint(c, input.catalog, outcome);
  note_expectation(input.expectations, c.id, outcome);
  CaseResult result;
  std::tie(result.status, result.as_expected) = classify(outcome.status, input.expectations, c.id);
  result.id = c.id;
  result.rules = c.rules;
  if (!outcome.fault.empty()) {
    // The message keeps the step's pointer; the finding is located in the file (file:line:col).
    const StepLocation& at = outcome.fault_step;
    result.message = summarize(outcome.findings,
                               (at.pointer.empty() ? std::string("setup: ")
                                                   : "step " + at.pointer + " (" + at.op + "): ") +
                                   outcome.fault);
    Finding fault = failed_check("", kCheckFault, outcome.fault);
    fault.step = at;
    // After the failed checks it followed, before the notes.
    const auto notes =
        std::find_if(outcome.findings.begin(), outcome.findings.end(),
                     [](const Finding& f) { return f.severity != Severity::kFailure; });
    outcome.findings.insert(notes, std::move(fault));
  } else {
    result.message = summarize(outcome.findings, "");
  }
  result.duration_s = outcome.duration_s;
  result.file = c.file;
  result.findings = std::move(outcome.findings);
  locate_findings(result.findings);
  result.unreached = std::move(outcome.unreached);
  return result;
}

// One result per case, in case order. Repeated, a case is reported by its first repetition not
// as expected (else its last), with every repetition's status. `runs` has every run.
std::vector<CaseResult> per_case(const Selection& selection,
                                 std::vector<std::optional<CaseResult>>& runs, int repeat) {
  std::vector<std::vector<CaseResult*>> of_case(selection.cases.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const ScheduledRun& run = selection.runs[i];
    of_case[run.case_index].resize(repeat);
    of_case[run.case_index][run.repetition - 1] = &*runs[i];
  }
  std::vector<CaseResult> out;
  for (const std::vector<CaseResult*>& reps : of_case) {
    CaseResult* shown = reps.back();
    for (CaseResult* r : reps) {
      if (!r->as_expected) {
        shown = r;
        break;
      }
    }
    std::vector<Status> statuses;
    if (repeat > 1) {
      for (const CaseResult* r : reps) statuses.push_back(r->status);
    }
    out.push_back(std::move(*shown));
    out.back().repetitions = std::move(statuses);
  }
  return out;
}

RunResults RunCommand::run_cases(const RunInput& input, const DriverOptions& options,
                                 const ConsoleOptions& console) const {
  ProgressPrinter progress(std::cout, input.selection.runs.size(), console.verbosity, console.style,
                           console.width);
  const int repeat = selection_.repeat;
  std::vector<std::optional<CaseResult>> runs = run_in_parallel(
      input.selection, jobs_, options,
      [&](Driver& driver, const Case& c) { return judge(driver, c, input); },
      [&](const CaseResult& result, const ScheduledRun& run) {
        progress.finished(result, repeat > 1 ? run.repetition : 0);
      });
  RunResults results;
  for (const auto& r : runs) results.runs_done += r.has_value();
  if (results.runs_done == runs.size()) results.cases = per_case(input.selection, runs, repeat);
  return results;
}

// The report files asked for, one per format (report_formats()), each checked (output_file.h)
// before the run starts; written when it ended; a stopped run writes none.
void write_reports(const std::vector<std::optional<OutputFile>>& files, const Context& context,
                   const RunInfo& info, const std::vector<CaseResult>& results) {
  const ReportSettings settings{context.scenarios_dir};
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (files[i]) files[i]->write(report_text(report_formats()[i], settings, info, results));
  }
}

// A flaky case counts as not as expected, whatever the repetition shown.
int exit_code(const std::vector<CaseResult>& results) {
  bool harness_fault = false, unexpected = false;
  for (const auto& r : results) {
    if (r.flaky()) unexpected = true;
    if (r.as_expected) continue;
    unexpected = true;
    if (r.status == Status::kHarnessError) harness_fault = true;
  }
  return harness_fault ? kExitBadInput : unexpected ? kExitUnexpected : kExitOk;
}

int RunCommand::execute(const Context& context) {
  const RunInput input = load(context);
  DriverOptions options = driver_options(context);
  const ConsoleOptions console = console_options_from(quiet_, verbose_, color_);
  const std::vector<std::optional<OutputFile>> reports = output_files(report_files_);
  const std::optional<OutputFile> trace_out = output_file(trace_file_);
  trace::Trace timeline;
  if (trace_out) options.trace = &timeline;

  catch_stop_signals();  // from here on, a stop unwinds: sessions, agents, then `home`
  PrivateEtwrtHome home;
  std::optional<std::vector<StaleSession>> stale =
      prepare_sessions_for_run(options.session_prefix, process_id(), std::cerr);
  if (!stale) return kExitBadInput;  // no right to control sessions: said once, no case run
  RunInfo info = run_info(context, input);
  info.stale_sessions = std::move(*stale);
  if (input.selection.seed) {
    std::cout << "etwh: cases shuffled with --seed " << *input.selection.seed << "\n";
  }
  const auto start = std::chrono::steady_clock::now();
  const RunResults results = run_cases(input, options, console);
  info.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Stopped: the driver has ended every case it began; `home` goes on return. No report: the
  // run is incomplete.
  if (results.runs_done < input.selection.runs.size()) {
    std::cerr << "etwh: stopped by signal " << stop_signal() << " after " << results.runs_done
              << " of " << input.selection.runs.size() << " cases\n";
    return stop_exit_code();
  }
  ConsoleReport(console).write(info, results.cases, std::cout);
  write_reports(reports, context, info, results.cases);
  if (trace_out) {
    timeline.name_process(driver_track().pid, "etwh run");
    const trace::Track track = driver_track();
    for (int k = 0; k <= jobs_; ++k) {
      timeline.name_thread({track.pid, track.pid + k}, "driver " + std::to_string(k));
    }
    timeline.set_metadata("command_line", info.command_line);
    trace_out->write(timeline.text());
  }
  // A stop that came after the last case still ends as a stop (130/143), reports written.
  return stop_requested() ? stop_exit_code() : exit_code(results.cases);
}

}  // namespace

std::unique_ptr<Command> make_run_command() { return std::make_unique<RunCommand>(); }

}  // namespace etwh::cli
