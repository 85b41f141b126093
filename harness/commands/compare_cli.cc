// `etwh compare` on the command line; the comparison itself is harness/compare/.
#include "harness/commands/command.h"

#include "harness/commands/threshold_options.h"
#include "harness/compare/compare_command.h"
#include "harness/report/compare_report.h"

#include <string>

namespace etwh::cli {
namespace {

class CompareCommand : public Command {
 public:
  CompareCommand()
      : Command("compare",
                "Compare two result files (stress, run or Google Benchmark JSON): exit 1 on a "
                "regression") {}

  void add_options(CLI::App& cmd, const Context&) override {
    cmd.add_option("old", args_.old_file, "The baseline")->required();
    cmd.add_option("new", args_.new_file, "The results to judge")->required();
    add_threshold_options(cmd, args_.thresholds);
    add_format_options(cmd, compare::compare_formats(), args_.format_files);
  }

  int execute(const Context&) override { return compare::run_compare_command(args_); }

 private:
  compare::CompareArgs args_;
};

}  // namespace

std::unique_ptr<Command> make_compare_command() { return std::make_unique<CompareCommand>(); }

}  // namespace etwh::cli
