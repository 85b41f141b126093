// `etwh judge FILE.etl...`: the command line of harness/recorded/: traces recorded anywhere
// (Windows included) read through the Win32 API, judged per provider against the rules a trace
// alone can show, reported as `etwh run` reports (console, and run's file formats).
#include "harness/commands/command.h"

#include "harness/commands/case_reports.h"
#include "harness/commands/console_options.h"
#include "etwh/output_file.h"
#include "etwh/platform.h"
#include "harness/model/catalog.h"
#include "harness/model/input_error.h"
#include "harness/recorded/trace_judge.h"
#include "harness/recorded/trace_reader.h"
#include "harness/report/console_lines.h"
#include "harness/report/console_report.h"
#include "harness/report/formats.h"
#include "harness/report/progress.h"
#include "harness/report/report.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>

namespace etwh::cli {
namespace {

class JudgeCommand : public Command {
 public:
  JudgeCommand()
      : Command(
            "judge",
            "Judge recorded traces (.etl, from Windows or etwrt): each provider's events against "
            "the rules a trace alone can show") {}

  void add_options(CLI::App& cmd, const Context&) override {
    cmd.add_option("--provider", providers_,
                   "Judge only this provider (GUID or name; may be repeated)");
    cmd.add_option("--manifest", manifests_,
                   "Load this instrumentation manifest (TdhLoadManifest) to decode its "
                   "providers' events (may be repeated)");
    add_format_options(cmd, report_formats(), report_files_);
    add_console_flags(cmd, quiet_, verbose_);
    cmd.add_option("files", files_, "The .etl files to judge")->required();
  }

  int execute(const Context& context) override;

 private:
  void check_inputs() const;

  std::vector<std::string> files_, providers_, manifests_;
  std::vector<std::string> report_files_;  // a file per format of report_formats(), or empty
  bool quiet_ = false, verbose_ = false;
};

// A name that is no regular file is refused before anything is read.
void JudgeCommand::check_inputs() const {
  for (const std::vector<std::string>* list : {&files_, &manifests_}) {
    for (const std::string& file : *list) {
      std::error_code ec;
      const auto status = std::filesystem::status(file, ec);
      if (!std::filesystem::exists(status)) throw InputError(file, "", "no such file");
      if (!std::filesystem::is_regular_file(status)) {
        throw InputError(file, "", "not a regular file");
      }
    }
  }
}

int JudgeCommand::execute(const Context& context) {
  const Catalog catalog = load_catalog(context.catalog_file);
  check_inputs();
  const std::vector<std::optional<OutputFile>> reports = output_files(report_files_);
  struct Manifests {
    ~Manifests() { recorded::unload_manifests(); }
  } loaded;
  for (const std::string& manifest : manifests_) {
    if (const std::uint32_t st = recorded::load_manifest(manifest); st != 0) {
      throw InputError(manifest, "", fmt::format("TdhLoadManifest returned {}", st));
    }
  }
  RunInfo info = run_info_now(context, build_platform());
  const auto start = std::chrono::steady_clock::now();
  std::vector<recorded::RecordedTrace> traces;
  for (const std::string& file : files_) traces.push_back(recorded::read_trace(file));
  recorded::JudgeOptions options;
  options.catalog = &catalog;
  options.providers = providers_;
  const std::vector<CaseResult> cases = recorded::judge_traces(traces, options);
  info.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report_judged_cases(cases, info, console_options_from(quiet_, verbose_), reports,
                             ReportSettings{context.scenarios_dir});
}

}  // namespace

std::unique_ptr<Command> make_judge_command() { return std::make_unique<JudgeCommand>(); }

}  // namespace etwh::cli
