// `etwh expectations update --platform P --from REPORT [--file FILE]`: rewrites the platform's
// expectations (expectations/<P>.json unless --file) from a run's JSON report
// (harness/model/expectations_update.h), atomically and in a stable order, and says what changed.
#include "harness/commands/command.h"

#include "harness/model/catalog.h"
#include "harness/model/expectations_update.h"
#include "etwh/output_file.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>

namespace etwh::cli {
namespace {

namespace fs = std::filesystem;

void print_list(const char* what, const std::vector<std::string>& ids) {
  if (!ids.empty()) std::cout << fmt::format("{} {}: {}\n", what, ids.size(), fmt::join(ids, ", "));
}

class ExpectationsCommand : public Command {
 public:
  ExpectationsCommand() : Command("expectations", "Maintain the platforms' expectations") {}

  void add_options(CLI::App& cmd, const Context&) override {
    cmd.require_subcommand(1);
    CLI::App* update = cmd.add_subcommand(
        "update", "Rewrite a platform's expectations from the JSON report of a run");
    update->add_option("--platform", platform_, "The platform the report ran on")->required();
    update->add_option("--from", report_, "The JSON report of the run")->required();
    update->add_option("--file", file_,
                       "The expectations file to rewrite (default: expectations/<PLATFORM>.json)");
  }

  int execute(const Context& context) override {
    const Catalog catalog = load_catalog(context.catalog_file);
    if (!catalog.platforms.count(platform_)) {
      throw InputError(context.catalog_file, "/platforms",
                       "--platform " + platform_ + ": not a platform of the catalog");
    }
    const fs::path file =
        file_.empty() ? context.data / "expectations" / (platform_ + ".json") : fs::path(file_);
    // Everything is read and checked before the file is touched.
    const OutputFile output(file.string());
    const std::vector<ReportedCase> cases = load_run_report(report_, platform_);
    ExpectationsFile expectations =
        fs::exists(file) ? load_expectations_file(file) : ExpectationsFile{};
    const UpdateSummary s = update_expectations(expectations, cases);
    output.write(expectations_text(expectations));
    std::cout << fmt::format("{}: {} cases of {} read\n", file.string(), cases.size(), report_);
    print_list("added", s.added);
    print_list("changed", s.changed);
    print_list("removed", s.removed);
    print_list("ignored (harness errors are never expected)", s.ignored);
    int placeholders = 0;
    for (const auto& [id, e] : expectations.cases) {
      if (reason_is_placeholder(e.reason)) ++placeholders;
    }
    if (placeholders > 0) {
      std::cout << fmt::format(
          "{} entries still need a reason: replace \"{}\" (a CTest fails on a shipped file "
          "that keeps it)\n",
          placeholders, kPlaceholderReason);
    }
    return kExitOk;
  }

 private:
  std::string platform_, report_, file_;
};

}  // namespace

std::unique_ptr<Command> make_expectations_command() {
  return std::make_unique<ExpectationsCommand>();
}

}  // namespace etwh::cli
