// etwh: the conformance harness's command line. Each command is a class in commands/; this file
// only lists them, reads the global options and maps errors to exit codes.
#include "harness/commands/command.h"
#include "harness/commands/help_text.h"
#include "harness/commands/suggest.h"
#include "etwh/platform.h"
#include "etwh/stop_signals.h"
#include "harness/model/input_error.h"

#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <optional>
#include <vector>

#ifndef ETWH_DATA_DIR
#error "ETWH_DATA_DIR must name the folder holding catalog/, scenarios/ and expectations/"
#endif
#ifndef ETWH_DATA_FROM_BINDIR
#define ETWH_DATA_FROM_BINDIR "../share/etwh"
#endif

namespace etwh::cli {

std::filesystem::path data_dir(const std::filesystem::path& exe_dir) {
  const std::filesystem::path installed = (exe_dir / ETWH_DATA_FROM_BINDIR).lexically_normal();
  std::error_code ec;
  if (std::filesystem::exists(installed / "catalog" / "rules.json", ec)) return installed;
  return ETWH_DATA_DIR;
}

}  // namespace etwh::cli

namespace {

using etwh::cli::Command;

std::vector<std::unique_ptr<Command>> all_commands() {
  std::vector<std::unique_ptr<Command>> commands;
  commands.push_back(etwh::cli::make_list_command());
  commands.push_back(etwh::cli::make_run_command());
  commands.push_back(etwh::cli::make_compare_command());
  commands.push_back(etwh::cli::make_report_command());
  commands.push_back(etwh::cli::make_expectations_command());
#ifdef ETWH_HAVE_STRESS
  commands.push_back(etwh::cli::make_stress_command());
#endif
#ifdef ETWH_HAVE_SELFTEST
  commands.push_back(etwh::cli::make_selftest_command());
#endif
#ifdef ETWH_HAVE_OBSERVE
  commands.push_back(etwh::cli::make_observe_command());
#endif
  commands.push_back(etwh::cli::make_judge_command());
  return commands;
}

std::string joined(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) line += (i ? " " : "") + std::string(argv[i]);
  return line;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace etwh::cli;
  CLI::App app{"etwh: conformance harness for ETW (Event Tracing for Windows)", "etwh"};
  app.require_subcommand(1);
  // Global options work before or after the subcommand: what a subcommand does not know falls
  // through to here (inherited by the subcommands added below).
  app.fallthrough();
  app.set_version_flag("--version", "etwh " ETWH_VERSION);
  app.footer("Global options (--catalog, --scenarios, --version) go before or after the command.");
  Context context;
  context.exe_dir = etwh::self_dir(argv[0]);
  context.data = data_dir(context.exe_dir);
  context.catalog_file = (context.data / "catalog" / "rules.json").string();
  context.scenarios_dir = (context.data / "scenarios" / "conformance").string();
  context.command_line = joined(argc, argv);
  app.add_option("--catalog", context.catalog_file, "Rule catalog (JSON)");
  app.add_option("--scenarios", context.scenarios_dir,
                 "Folder of the shipped conformance scenarios");

  std::vector<std::unique_ptr<Command>> commands = all_commands();
  std::vector<CLI::App*> subcommands;
  for (auto& c : commands) subcommands.push_back(c->define(app, context));
  describe_for_people(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // A mistyped command or option: what was meant, as git says it.
    const std::optional<std::string> hint =
        e.get_exit_code() == 0 ? std::nullopt : unknown_word_hint(app, argc, argv);
    if (!hint) return app.exit(e) == 0 ? kExitOk : kExitBadInput;
    std::cerr << *hint << "\nRun with --help for more information.\n";
    return kExitBadInput;
  }
  try {
    for (std::size_t i = 0; i < commands.size(); ++i) {
      if (*subcommands[i]) return etwh::end_stop_signals(commands[i]->execute(context));
    }
  } catch (const etwh::InputError& e) {
    std::cerr << e.what() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "etwh: " << e.what() << "\n";
  }
  return kExitBadInput;
}
