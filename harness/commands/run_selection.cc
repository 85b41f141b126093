#include "harness/commands/run_selection.h"

#include "harness/model/input_error.h"
#include "harness/commands/suggest.h"

#include <etwh/pattern.h>
#include <fmt/format.h>

#include <algorithm>
#include <random>

namespace etwh::cli {

namespace {

Pattern compile_filter(const std::string& filter) {
  try {
    return Pattern(filter);
  } catch (const PatternError& e) {
    throw InputError("--filter", "",
                     fmt::format("'{}' is not a regular expression: {}", filter, e.what()));
  }
}

bool names_any(const Case& c, const std::vector<std::string>& rules) {
  return std::any_of(rules.begin(), rules.end(), [&](const std::string& rule) {
    return std::find(c.rules.begin(), c.rules.end(), rule) != c.rules.end();
  });
}

// Fisher-Yates over mt19937_64, whose sequence the standard fixes: the same seed gives the same
// order with every standard library (std::shuffle's is the library's own).
void shuffle_runs(std::vector<ScheduledRun>& runs, std::mt19937_64& rng) {
  for (std::size_t i = runs.size(); i > 1; --i) {
    std::swap(runs[i - 1], runs[rng() % i]);
  }
}

std::string what_was_asked(const SelectionOptions& options) {
  std::string asked;
  if (!options.filter.empty()) asked += fmt::format(" --filter '{}'", options.filter);
  for (const std::string& rule : options.rules) asked += " --rule " + rule;
  return asked;
}

}  // namespace

Selection select_cases(std::vector<Case> cases, const SelectionOptions& options,
                       const std::set<std::string>& catalog_rules, const std::string& source) {
  for (const std::string& rule : options.rules) {
    if (!catalog_rules.count(rule)) {
      const std::vector<std::string> known(catalog_rules.begin(), catalog_rules.end());
      throw InputError("--rule", "",
                       "'" + rule + "' is not a rule of the catalog" + did_you_mean(rule, known));
    }
  }
  if (options.repeat < 1) {
    throw InputError("--repeat", "", fmt::format("{}: must be at least 1", options.repeat));
  }
  const std::size_t loaded = cases.size();
  if (!options.filter.empty()) {
    const Pattern filter = compile_filter(options.filter);
    std::erase_if(cases, [&](const Case& c) { return !filter.found_in(c.id); });
  }
  if (!options.rules.empty()) {
    std::erase_if(cases, [&](const Case& c) { return !names_any(c, options.rules); });
  }
  if (cases.empty()) {
    throw InputError(source, "",
                     loaded == 0 ? "no case to run: no scenario case found"
                                 : fmt::format("no case to run:{} selects none of the {} cases",
                                               what_was_asked(options), loaded));
  }
  Selection selection;
  selection.cases = std::move(cases);
  std::mt19937_64 rng;
  if (options.shuffle) {
    selection.seed = options.seed ? *options.seed : std::random_device{}();
    rng.seed(*selection.seed);
  }
  for (int rep = 1; rep <= options.repeat; ++rep) {
    std::vector<ScheduledRun> round;
    for (std::size_t i = 0; i < selection.cases.size(); ++i) round.push_back({i, rep});
    if (options.shuffle) shuffle_runs(round, rng);
    selection.runs.insert(selection.runs.end(), round.begin(), round.end());
  }
  return selection;
}

}  // namespace etwh::cli
