#include "harness/commands/console_options.h"

#include "harness/report/console_lines.h"

#include <cstdio>
#include <cstdlib>

#ifdef _WIN32
#include <io.h>
#else
#include <unistd.h>
#endif

namespace etwh::cli {
namespace {

bool stdout_is_terminal() {
#ifdef _WIN32
  return _isatty(_fileno(stdout)) != 0;
#else
  return isatty(STDOUT_FILENO) != 0;
#endif
}

}  // namespace

ConsoleOptions console_options_from(bool quiet, bool verbose, std::string_view color) {
  ConsoleOptions console;
  console.verbosity = quiet     ? Verbosity::kQuiet
                      : verbose ? Verbosity::kVerbose
                                : Verbosity::kNormal;
  const char* no_color = std::getenv("NO_COLOR");
  console.style = ConsoleStyle(
      color == "always" ||
      (color == "auto" && (no_color == nullptr || *no_color == '\0') && stdout_is_terminal()));
  console.width = verbose ? 0 : console_width();
  return console;
}

void add_console_flags(CLI::App& cmd, bool& quiet, bool& verbose) {
  CLI::Option* quiet_flag =
      cmd.add_flag("-q,--quiet", quiet, "Print only the cases not as expected and the summary");
  cmd.add_flag("-v,--verbose", verbose, "Print every finding of every case, passing ones too")
      ->excludes(quiet_flag);
}

}  // namespace etwh::cli
