// `etwh selftest` on the command line; the mutation self-test itself is
// harness/selftest/selftest.h.
#include "harness/commands/command.h"

#include "harness/selftest/selftest.h"

#ifndef ETWH_MUTANTS_FROM_BINDIR
#define ETWH_MUTANTS_FROM_BINDIR "../lib/etwh/mutants"
#endif

namespace etwh::cli {
namespace {

namespace fs = std::filesystem;

// The mutant build of etwrt and the provider mutants (mutants/README.md): installed relative to
// the program (../lib/etwh/mutants), or <build>/mutants.
fs::path mutant_dir(const fs::path& exe_dir) {
  const fs::path installed = (exe_dir / ETWH_MUTANTS_FROM_BINDIR).lexically_normal();
  std::error_code ec;
  if (fs::is_directory(installed, ec)) return installed;
  return exe_dir.parent_path() / "mutants";
}

fs::path absolute_or_empty(const std::string& path) {
  return path.empty() ? fs::path() : fs::absolute(path);
}

class SelftestCommand : public Command {
 public:
  SelftestCommand()
      : Command(
            "selftest",
            "Mutation self-test: the suite must pass on the clean build and kill every mutant") {}

  void add_options(CLI::App& cmd, const Context& context) override {
    mutants_ = (context.data / "mutants" / "mutants.json").string();
    mutant_dir_ = mutant_dir(context.exe_dir).string();
    cmd.add_option("--mutants", mutants_, "Mutant registry (mutants/mutants.json)");
    cmd.add_option("--mutant-dir", mutant_dir_, "The mutant build (holds bin/, lib/ and libexec/)");
    cmd.add_option("--only", options_.only, "Run only this mutant (repeatable)");
    cmd.add_option("--keep", keep_, "Keep each run's report and log in DIR");
    cmd.add_option("--json", json_, "Write the kill matrix as JSON to FILE");
    cmd.add_option("--jobs", options_.jobs, "Mutant runs at once (default 2)")
        ->check(CLI::Range(1, 16));
    cmd.add_option("--run-timeout", options_.run_timeout_s, "Seconds one `etwh run` may take");
  }

  int execute(const Context& context) override {
    options_.etwh = context.exe_dir / "etwh";
    options_.data_dir = context.data;
    options_.catalog_file = fs::absolute(context.catalog_file);
    options_.scenarios_dir = fs::absolute(context.scenarios_dir);
    options_.mutants_file = fs::absolute(mutants_);
    options_.mutant_dir = fs::absolute(mutant_dir_);
    options_.keep_dir = absolute_or_empty(keep_);
    options_.json_file = absolute_or_empty(json_);
    return selftest::run(options_);
  }

 private:
  selftest::Options options_;
  std::string mutants_, mutant_dir_, keep_, json_;
};

}  // namespace

std::unique_ptr<Command> make_selftest_command() { return std::make_unique<SelftestCommand>(); }

}  // namespace etwh::cli
