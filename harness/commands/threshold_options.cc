#include "harness/commands/threshold_options.h"

#include "etwh/pattern.h"
#include "harness/commands/command.h"

#include <cctype>

namespace etwh::cli {
namespace {

// "Condition: text", or "Text" without a condition.
std::string help(const std::string& condition, std::string text) {
  if (!condition.empty()) return condition + ": " + text;
  text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
  return text;
}

}  // namespace

void add_threshold_options(CLI::App& cmd, compare::Thresholds& thresholds,
                           const std::string& condition) {
  cmd.add_option("--alpha", thresholds.alpha,
                 help(condition, "significance level of the Mann-Whitney U test (default 0.05)"))
      ->check(kANumber & CLI::Range(0.0, 1.0));
  cmd.add_option_function<double>(
         "--min-effect", [&thresholds](double percent) { thresholds.min_effect = percent / 100; },
         help(condition, "smallest change of a median that counts, in % (default 5)"))
      ->check(kANumber & CLI::Range(0.0, 1000.0));
  cmd.add_option("--only", thresholds.only,
                 help(condition, "compare only the figures whose name this REGEX finds (") +
                     pattern_syntax() + ")");
}

}  // namespace etwh::cli
