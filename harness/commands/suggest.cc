#include "harness/commands/suggest.h"

#include <algorithm>
#include <cctype>
#include <numeric>

namespace etwh::cli {
namespace {

char folded(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// The long names of an app's options ("--json"), and its subcommands' names.
std::vector<std::string> long_options(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::Option* o : app.get_options()) {
    for (const std::string& name : o->get_lnames()) out.push_back("--" + name);
  }
  return out;
}

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    out.push_back(sub->get_name());
  }
  return out;
}

const CLI::App* subcommand_named(const CLI::App& app, const std::string& name) {
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == name) return sub;
  }
  return nullptr;
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "'" : ", '") + n + "'";
  return out;
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: three rows of the Damerau-Levenshtein table.
  std::vector<std::size_t> before(b.size() + 1), previous(b.size() + 1), row(b.size() + 1);
  std::iota(previous.begin(), previous.end(), 0);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const bool same = folded(a[i - 1]) == folded(b[j - 1]);
      row[j] = std::min({previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (same ? 0 : 1)});
      if (i > 1 && j > 1 && folded(a[i - 1]) == folded(b[j - 2]) &&
          folded(a[i - 2]) == folded(b[j - 1])) {
        row[j] = std::min(row[j], before[j - 2] + 1);
      }
    }
    before.swap(previous);
    previous.swap(row);
  }
  return previous[b.size()];
}

std::vector<std::string> closest(const std::string& typed,
                                 const std::vector<std::string>& candidates) {
  const std::size_t allowed = std::max<std::size_t>(1, typed.size() / 3);
  std::size_t best = allowed + 1;
  std::vector<std::string> out;
  for (const std::string& c : candidates) {
    const std::size_t d = edit_distance(typed, c);
    if (d > allowed || d > best) continue;
    if (d < best) out.clear();
    best = d;
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  return out;
}

std::string did_you_mean(const std::string& typed, const std::vector<std::string>& candidates) {
  const std::vector<std::string> nearest = closest(typed, candidates);
  if (nearest.empty()) return "";
  if (nearest.size() == 1) return "; did you mean '" + nearest.front() + "'?";
  return "; did you mean one of " + quoted_list(nearest) + "?";
}

std::optional<std::string> unknown_word_hint(const CLI::App& app, int argc, char** argv) {
  const CLI::App* current = &app;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") break;  // what follows is a program's (etwh observe -- PROGRAM)
    if (word.rfind("--", 0) == 0) {
      const std::string name = word.substr(0, word.find('='));
      const CLI::Option* o = current->get_option_no_throw(name);
      if (o == nullptr) o = app.get_option_no_throw(name);  // the global options
      if (o == nullptr) {
        std::vector<std::string> known = long_options(*current);
        if (current != &app) {
          for (std::string& g : long_options(app)) known.push_back(std::move(g));
        }
        return "etwh: unknown option '" + name + "'" + did_you_mean(name, known);
      }
      if (o->get_expected_min() > 0 && name.size() == word.size()) ++i;  // its value
      continue;
    }
    if (word.rfind('-', 0) == 0) continue;  // a short option: CLI11's message says enough
    const std::vector<std::string> subs = subcommand_names(*current);
    if (subs.empty()) continue;  // a positional argument of the command
    if (const CLI::App* sub = subcommand_named(*current, word)) {
      current = sub;
      continue;
    }
    // A command that takes positional arguments besides subcommands would land here; none does.
    return "etwh: unknown command '" + word + "'" + did_you_mean(word, subs);
  }
  return std::nullopt;
}

}  // namespace etwh::cli
