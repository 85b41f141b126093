// The commands of `etwh` (list, run, compare, report, expectations, stress, selftest, observe,
// judge): each one a class that adds its subcommand and options to the command line and carries
// it out. main.cc only lists them.
#pragma once

#include <CLI/CLI.hpp>

#include <cmath>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <utility>
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

// An option `--<name> FILE` per row of a command's file formats (harness/report/formats.h,
// file_formats.h: the registry), its value in `files` at the row's index.
template <class Format>
void add_format_options(CLI::App& cmd, std::span<const Format> formats,
                        std::vector<std::string>& files) {
  files.resize(formats.size());
  for (std::size_t i = 0; i < formats.size(); ++i) {
    cmd.add_option(std::string("--") + formats[i].option, files[i], formats[i].help);
  }
}

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
  Command(std::string name, std::string description)
      : name_(std::move(name)), description_(std::move(description)) {}
  virtual ~Command() = default;
  // Adds the subcommand (its name, its description) and its options to `app`; the values land
  // in this object.
  CLI::App* define(CLI::App& app, const Context& context) {
    CLI::App* cmd = app.add_subcommand(name_, description_);
    add_options(*cmd, context);
    return cmd;
  }
  // Runs the command, once the command line was parsed. Throws InputError for bad input.
  virtual int execute(const Context& context) = 0;

 protected:
  // The command's options (and subcommands of its own) on its subcommand `cmd`.
  virtual void add_options(CLI::App& cmd, const Context& context) = 0;

 private:
  std::string name_, description_;
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
