// `etwh compare` on the command line; the comparison itself is harness/compare/.
#include "harness/commands/command.h"

#include "harness/compare/compare_command.h"
#include "etwh/pattern.h"

#include <string>

namespace etwh::cli {
namespace {

class CompareCommand : public Command {
 public:
  CLI::App* define(CLI::App& app, const Context&) override {
    CLI::App* cmd = app.add_subcommand(
        "compare",
        "Compare two result files (stress, run or Google Benchmark JSON): exit 1 on a regression");
    cmd->add_option("old", args_.old_file, "The baseline")->required();
    cmd->add_option("new", args_.new_file, "The results to judge")->required();
    cmd->add_option("--alpha", args_.thresholds.alpha,
                    "Significance level of the Mann-Whitney U test (default 0.05)")
        ->check(kANumber & CLI::Range(0.0, 1.0));
    cmd->add_option("--min-effect", min_effect_pct_,
                    "Smallest change of a median that counts, in % (default 5)")
        ->check(kANumber & CLI::Range(0.0, 1000.0));
    cmd->add_option("--only", args_.thresholds.only,
                    std::string("Compare only the figures whose name this REGEX finds (") +
                        pattern_syntax() + ")");
    cmd->add_option("--markdown", args_.markdown_file,
                    "Write markdown to FILE (- for standard output), for a CI job summary or a "
                    "merge-request comment");
    cmd->add_option("--json", args_.json_file, "Write JSON to FILE");
    return cmd;
  }

  int execute(const Context&) override {
    args_.thresholds.min_effect = min_effect_pct_ / 100;
    return compare::run_compare_command(args_);
  }

 private:
  compare::CompareArgs args_;
  double min_effect_pct_ = 5;
};

}  // namespace

std::unique_ptr<Command> make_compare_command() { return std::make_unique<CompareCommand>(); }

}  // namespace etwh::cli
