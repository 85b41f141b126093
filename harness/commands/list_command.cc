// `etwh list`: the rule catalog, with the cases that judge each rule or why none can.
#include "harness/commands/command.h"

#include "harness/model/catalog.h"
#include "harness/conformance/scenario.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <iostream>
#include <map>

namespace etwh::cli {
namespace {

// {schema_version: 1, rules: [...]}: versioned like every JSON output of etwh; the schema is
// schemas/list.schema.json.
void print_json(const Catalog& catalog, std::map<std::string, std::vector<std::string>>& cases) {
  nlohmann::ordered_json rules = nlohmann::ordered_json::array();
  for (const auto& r : catalog.rules) {
    rules.push_back({{"id", r.id},
                     {"kind", r.kinds},
                     {"observed", r.observed},
                     {"cases", cases[r.id].size()},
                     {"case_ids", cases[r.id]},
                     {"unsupported", r.unsupported},
                     {"citation", r.citation},
                     {"text", r.text}});
  }
  const nlohmann::ordered_json out{{"schema_version", 1}, {"rules", std::move(rules)}};
  std::cout << out.dump(2) << "\n";
}

void print_table(const Catalog& catalog, std::map<std::string, std::vector<std::string>>& cases) {
  std::cout << fmt::format("{:<28} {:<16} {:>5}  {}\n", "ID", "KIND", "CASES", "TEXT");
  for (const auto& r : catalog.rules) {
    std::string kind;
    for (const auto& k : r.kinds) kind += (kind.empty() ? "" : "+") + k;
    if (r.observed) kind += "(obs)";
    std::cout << fmt::format("{:<28} {:<16} {:>5}  {}\n", r.id, kind, cases[r.id].size(), r.text);
    // What judges the rule: its cases, else why nothing can (per platform).
    if (!cases[r.id].empty()) {
      std::cout << fmt::format("{:<28} cases: {}\n", "", fmt::join(cases[r.id], ", "));
    }
    for (const auto& [platform, reason] : r.unsupported) {
      std::cout << fmt::format("{:<28} UNSUPPORTED on {}: {}\n", "", platform, reason);
    }
  }
}

class ListCommand : public Command {
 public:
  ListCommand() : Command("list", "Print the rule catalog") {}

  void add_options(CLI::App& cmd, const Context&) override {
    cmd.add_flag("--json", as_json_, "Print JSON instead of a table");
  }

  int execute(const Context& context) override {
    const Catalog catalog = load_catalog(context.catalog_file);
    const auto all = load_scenarios({context.scenarios_dir}, catalog.ids());
    std::map<std::string, std::vector<std::string>> cases;  // rule -> case IDs
    for (const auto& c : all) {
      for (const auto& r : c.rules) cases[r].push_back(c.id);
    }
    if (as_json_) {
      print_json(catalog, cases);
    } else {
      print_table(catalog, cases);
    }
    return kExitOk;
  }

 private:
  bool as_json_ = false;
};

}  // namespace

std::unique_ptr<Command> make_list_command() { return std::make_unique<ListCommand>(); }

}  // namespace etwh::cli
