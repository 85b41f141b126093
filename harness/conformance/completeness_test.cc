// Catalog completeness: every rule of RULES.md is in catalog/rules.json (and any other cites a
// source of the catalog); every catalog rule has
// at least one case, or an UNSUPPORTED reason for every platform (and not both: a stale reason
// is the XPASS of the catalog); every case names known rules; every expectation file names
// known cases, and etwrt expects nothing but PASS (or UNSUPPORTED with a reason).
#include "harness/model/catalog.h"
#include "harness/model/expectations.h"
#include "harness/conformance/scenario.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <regex>

namespace etwh {
namespace {

namespace fs = std::filesystem;

const Catalog& catalog() {
  static const Catalog c = load_catalog(ETWH_CATALOG_FILE);
  return c;
}

// The catalog's platforms (its /platforms), the one list of them.
std::vector<std::string> platforms() {
  std::vector<std::string> out;
  for (const auto& [name, text] : catalog().platforms) out.push_back(name);
  return out;
}

const std::vector<Case>& cases() {
  static const std::vector<Case> c = load_scenarios({ETWH_SCENARIOS_DIR}, catalog().ids());
  return c;
}

TEST(Completeness, EveryRulesMdRuleIsInTheCatalog) {
  std::ifstream in(ETWH_RULES_MD);
  if (!in) GTEST_SKIP() << ETWH_RULES_MD << " is not beside the repository";
  // Table rows of RULES.md: "| ID | rule | kind |".
  const std::regex row(R"(^\| ([A-Z0-9]+(-[A-Z0-9]+)+) \|)");
  std::set<std::string> documented;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, row)) documented.insert(m[1]);
  }
  ASSERT_GT(documented.size(), 50u) << "RULES.md did not parse";
  for (const std::string& id : documented) {
    EXPECT_NE(catalog().find(id), nullptr) << id << " is in RULES.md but not in the catalog";
  }
  std::ifstream catalog_in(ETWH_CATALOG_FILE);
  const nlohmann::json sources = nlohmann::json::parse(catalog_in).at("sources");
  // The catalog grows beyond RULES.md (the first list) only with rules read from a page the
  // catalog lists in its sources: a rule's citation starts with the source's key.
  for (const Rule& r : catalog().rules) {
    if (documented.count(r.id)) continue;
    const std::string source = r.citation.substr(0, r.citation.find(' '));
    EXPECT_TRUE(sources.contains(source))
        << r.id << " is in the catalog but not in RULES.md, and its citation (" << r.citation
        << ") names no source of the catalog";
  }
}

TEST(Completeness, EveryRuleHasACaseOrAnUnsupportedReasonPerPlatform) {
  std::map<std::string, std::vector<std::string>> by_rule;
  for (const Case& c : cases()) {
    for (const std::string& r : c.rules) by_rule[r].push_back(c.id);
  }
  for (const Rule& r : catalog().rules) {
    const bool has_case = by_rule.count(r.id) > 0;
    if (has_case) {
      EXPECT_TRUE(r.unsupported.empty())
          << r.id << " has cases (" << by_rule[r.id].front()
          << ", ...) and an UNSUPPORTED reason: remove the stale reason or use an expectation";
      continue;
    }
    for (const std::string& p : platforms()) {
      EXPECT_TRUE(r.unsupported.count(p))
          << r.id << " has no case and no UNSUPPORTED reason for " << p;
    }
  }
}

TEST(Completeness, LintRulesHaveASeverity) {
  for (const Rule& r : catalog().rules) {
    const bool lint = std::find(r.kinds.begin(), r.kinds.end(), "lint") != r.kinds.end();
    EXPECT_EQ(lint, !r.severity.empty()) << r.id;
  }
}

TEST(Completeness, ACaseNamingAnUnknownRuleIsRejected) {
  const std::string text = R"({"cases": [{"id": "x", "rules": ["NO-SUCH-RULE"],
      "agents": {"a": {}}, "steps": [{"op": "exit_agent", "agent": "a"}]}]})";
  try {
    load_scenario_text(text, "x.json", catalog().ids());
    FAIL() << "an unknown rule was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown rule ID \"NO-SUCH-RULE\""), std::string::npos);
  }
}

TEST(Completeness, ExpectationFilesNameKnownCasesAndEtwrtExpectsPass) {
  std::set<std::string> ids;
  std::vector<CaseFile> files;
  for (const Case& c : cases()) {
    ids.insert(c.id);
    files.push_back({c.id, c.file});
  }
  for (const std::string& p : platforms()) {
    const fs::path file = fs::path(ETWH_EXPECTATIONS_DIR) / (p + ".json");
    if (!fs::exists(file)) continue;  // no file: PASS expected everywhere
    Expectations e;
    EXPECT_NO_THROW(e = load_expectations(file, ids, files)) << file;
    // Every shipped entry says why (`etwh expectations update` leaves a placeholder to
    // replace), and the file is in the form update writes, so that an update diffs cleanly.
    for (const auto& [case_id, x] : e) {
      EXPECT_FALSE(reason_is_placeholder(x.reason)) << file << ": " << case_id << " needs a reason";
    }
    std::ifstream in(file);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(expectations_text(load_expectations_file(file)), text) << file;
    if (p != "etwrt") continue;
    for (const auto& [case_id, x] : e) {
      EXPECT_EQ(x.status, Status::kUnsupported)
          << case_id << ": etwrt expects PASS everywhere, UNSUPPORTED only with a reason";
      EXPECT_FALSE(x.reason.empty()) << case_id;
    }
  }
}

// The rules the first milestone must show PASS on etwrt each have at least one shipped case.
TEST(ShippedScenarios, CoverTheMilestoneRules) {
  const Catalog c = load_catalog(ETWH_CATALOG_FILE);
  const auto cases = load_scenarios({ETWH_SCENARIOS_DIR}, c.ids());
  std::set<std::string> named;
  for (const Case& k : cases) named.insert(k.rules.begin(), k.rules.end());
  for (const char* id : {"CB-LEVEL-MAX", "CB-ANY-OR", "CB-ALL-AND", "CB-RECOMPUTE",
                         "CB-ENABLED-STAYS", "CB-DISABLE-LAST", "CB-CAPTURE-STATE", "CB-SOURCEID",
                         "CB-SOURCEID-NULL-PREENABLED", "CB-SOURCEID-NULL-LEGACY", "CB-CONTEXT",
                         "CB-TIMEOUT", "TR-SET-ONCE", "TR-FORMAT", "SES-MAX-8", "SES-PERSIST"}) {
    EXPECT_TRUE(named.count(id)) << id << " has no shipped case";
  }
}

}  // namespace
}  // namespace etwh
