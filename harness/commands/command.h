// The commands of `etwh` (list, run, compare, report, expectations, stress, selftest, observe,
// judge): each one a class that adds its subcommand and options to the command line and carries
// it out. main.cc only lists them.
#pragma once

#include <CLI/CLI.hpp>

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace etwh::cli {

constexpr int kExitOk = 0;
constexpr int kExitUnexpected = 1;
constexpr int kExitBadInput = 2;

// Before CLI::Range on a floating-point option: Range lets NaN through (every comparison with it
// is false), this refuses "nan" by name.
inline const CLI::Validator kANumber(
    [](std::string& text) -> std::string {
      double value = 0;
      if (CLI::detail::lexical_cast(text, value) && std::isnan(value)) {
        return "not a number: " + text;
      }
      return "";
    },
    "NUMBER");

// What every command may use: where the program and its data are, and the global options.
struct Context {
  std::filesystem::path exe_dir;
  std::filesystem::path data;  // catalog/, scenarios/, expectations/, mutants/
  std::string catalog_file;    // --catalog
  std::string scenarios_dir;   // --scenarios
  std::string command_line;    // as typed, for reports
};

// The data folder: installed relative to the program (../share/etwh), or the source tree the
// program was built from.
std::filesystem::path data_dir(const std::filesystem::path& exe_dir);

class Command {
 public:
  virtual ~Command() = default;
  // Adds the subcommand and its options to `app`; the values land in this object.
  virtual CLI::App* define(CLI::App& app, const Context& context) = 0;
  // Runs the command, once the command line was parsed. Throws InputError for bad input.
  virtual int execute(const Context& context) = 0;
};

std::unique_ptr<Command> make_list_command();
std::unique_ptr<Command> make_run_command();
std::unique_ptr<Command> make_compare_command();
std::unique_ptr<Command> make_report_command();
std::unique_ptr<Command> make_expectations_command();
std::unique_ptr<Command> make_judge_command();
#ifdef ETWH_HAVE_STRESS
std::unique_ptr<Command> make_stress_command();
#endif
#ifdef ETWH_HAVE_SELFTEST
std::unique_ptr<Command> make_selftest_command();
#endif
#ifdef ETWH_HAVE_OBSERVE
std::unique_ptr<Command> make_observe_command();
#endif

}  // namespace etwh::cli
