// `etwh run`: loads the catalog, the scenarios and the platform's expectations (everything that
// can be wrong with the input fails here, before anything runs), runs every case through the
// driver, adds lint and expectation findings, and hands the results to the report writers.
#include "command.h"

#include "case_findings.h"
#include "catalog.h"
#include "driver.h"
#include "etwh/platform.h"
#include "etwh/stop_signals.h"
#include "expectations.h"
#include "report.h"
#include "scenario.h"
#include "stale_sessions.h"

#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>

namespace etwh::cli {
namespace {

namespace fs = std::filesystem;

// What a run needs from its input files, all checked.
struct RunInput {
  Catalog catalog;
  std::vector<Case> cases;
  std::string platform;
  Expectations expectations;
};

// A report file, opened (and so checked to be writable) before the run starts.
struct ReportFile {
  std::string path;
  std::ofstream out;
};

class RunCommand : public Command {
 public:
  CLI::App* define(CLI::App& app, const Context&) override;
  int execute(const Context& context) override;

 private:
  RunInput load(const Context& context) const;
  Expectations load_expectations_for(const Context& context, const std::string& platform,
                                     const std::vector<Case>& cases) const;
  RunInfo run_info(const Context& context, const RunInput& input) const;
  DriverOptions driver_options(const Context& context) const;
  std::vector<CaseResult> run_cases(const RunInput& input, const DriverOptions& options) const;

  std::vector<std::string> paths_;
  std::string json_file_, junit_file_, agent_, platform_, expectations_file_;
  std::string subject_;  // the provider under test's agent (providers/adapter/)
};

CLI::App* RunCommand::define(CLI::App& app, const Context&) {
  CLI::App* cmd = app.add_subcommand("run", "Run conformance scenarios");
  cmd->add_option("paths", paths_, "Scenario files or folders (default: all shipped)");
  cmd->add_option("--json", json_file_, "Write the JSON report to FILE");
  cmd->add_option("--junit", junit_file_, "Write JUnit XML to FILE");
  cmd->add_option("--agent", agent_, "The provider agent executable");
  cmd->add_option("--subject", subject_,
                  "Provider under test: an agent built with etwh_provider_under_test (default: "
                  "the shipped manifest-style example)");
  cmd->add_option("--platform", platform_,
                  "Platform name, one of the catalog's platforms (selects "
                  "expectations/<NAME>.json)");
  cmd->add_option("--expectations", expectations_file_, "Expectations file");
  return cmd;
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
  if (paths_.empty()) {
    for (const auto& c : cases) case_ids.insert(c.id);
  }
  return load_expectations(file, case_ids);
}

RunInput RunCommand::load(const Context& context) const {
  RunInput in;
  in.catalog = load_catalog(context.catalog_file);
  require_harness_rules(in.catalog, context.catalog_file);
  in.platform = platform_.empty() ? build_platform() : platform_;
  if (!in.catalog.platforms.count(in.platform)) {
    std::string known;
    for (const auto& [name, text] : in.catalog.platforms) known += (known.empty() ? "" : ", ") + name;
    throw InputError(context.catalog_file, "/platforms",
                     "--platform " + in.platform + ": not a platform of the catalog (" + known +
                         ")");
  }
  std::vector<fs::path> paths(paths_.begin(), paths_.end());
  if (paths.empty()) paths.push_back(context.scenarios_dir);
  in.cases = load_scenarios(paths, in.catalog.ids());
  in.expectations = load_expectations_for(context, in.platform, in.cases);
  return in;
}

RunInfo RunCommand::run_info(const Context& context, const RunInput& input) const {
  RunInfo info;
  info.platform = input.platform;
  info.version = ETWH_VERSION;
  info.start_time = utc_now();
  info.host = host_name();
  info.command_line = context.command_line;
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
  options.agent = agent_.empty() ? context.exe_dir / executable_name("etwh-agent") : fs::path(agent_);
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

std::vector<CaseResult> RunCommand::run_cases(const RunInput& input,
                                              const DriverOptions& options) const {
  Driver driver(options);
  std::vector<CaseResult> results;
  for (const auto& c : input.cases) {
    if (stop_requested()) break;
    CaseOutcome outcome = driver.run(c);
    apply_lint(c, input.catalog, outcome);
    note_expectation(input.expectations, c.id, outcome);
    auto [status, ok] = classify(outcome.status, input.expectations, c.id);
    results.push_back({c.id, c.rules, status, ok, summarize(outcome.findings, outcome.fault),
                       outcome.duration_s, c.file, std::move(outcome.findings)});
  }
  return results;
}

std::optional<ReportFile> open_report(const std::string& path) {
  if (path.empty()) return std::nullopt;
  ReportFile f{path, std::ofstream(path)};
  if (!f.out) throw InputError(path, "", "cannot write the report");
  return f;
}

void write_report(std::optional<ReportFile>& file, const ReportWriter& writer, const RunInfo& info,
                  const std::vector<CaseResult>& results) {
  if (!file) return;
  writer.write(info, results, file->out);
  file->out.flush();
  if (!file->out) throw std::runtime_error(file->path + ": cannot write the report");
}

// A stopped run writes no report: the files opened at the start go again.
void discard_report(std::optional<ReportFile>& file) {
  if (!file) return;
  file->out.close();
  std::error_code ec;
  fs::remove(file->path, ec);
}

int exit_code(const std::vector<CaseResult>& results) {
  bool harness_fault = false, unexpected = false;
  for (const auto& r : results) {
    if (r.as_expected) continue;
    unexpected = true;
    if (r.status == Status::kHarnessError) harness_fault = true;
  }
  return harness_fault ? kExitBadInput : unexpected ? kExitUnexpected : kExitOk;
}

int RunCommand::execute(const Context& context) {
  const RunInput input = load(context);
  const DriverOptions options = driver_options(context);
  std::optional<ReportFile> json = open_report(json_file_), junit = open_report(junit_file_);

  catch_stop_signals();  // from here on, a stop unwinds: sessions, agents, then `home`
  PrivateEtwrtHome home;
  if (!prepare_sessions_for_run(options.session_prefix, process_id(), std::cerr)) {
    discard_report(json);  // no right to control sessions: said once, no case run
    discard_report(junit);
    return kExitBadInput;
  }
  RunInfo info = run_info(context, input);
  const auto start = std::chrono::steady_clock::now();
  const std::vector<CaseResult> results = run_cases(input, options);
  info.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Stopped: the driver has ended every case it began; `home` goes on return. No report: the
  // run is incomplete.
  if (stop_requested()) {
    std::cerr << "etwh: stopped by signal " << stop_signal() << " after " << results.size()
              << " of " << input.cases.size() << " cases\n";
    discard_report(json);
    discard_report(junit);
    return stop_exit_code();
  }
  ConsoleReport().write(info, results, std::cout);
  write_report(json, JsonReport(), info, results);
  write_report(junit, JunitReport(), info, results);
  // A stop that came after the last case still ends as a stop (130/143), reports written.
  return stop_requested() ? stop_exit_code() : exit_code(results);
}

}  // namespace

std::unique_ptr<Command> make_run_command() { return std::make_unique<RunCommand>(); }

}  // namespace etwh::cli
