// Every rule ID the harness's code blames a finding on (harness/model/rules.h) is a rule of the
// shipped catalog, and no source file of the harness names a rule by a string literal.
#include "harness/model/catalog.h"
#include "harness/model/rules.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace etwh {
namespace {

TEST(Rules, EveryConstantIsInTheCatalog) {
  const Catalog catalog = load_catalog(ETWH_CATALOG_FILE);
  for (std::string_view id : rules::kAll) {
    EXPECT_NE(catalog.find(std::string(id)), nullptr) << id << " is not in the catalog";
  }
  const std::set<std::string_view> unique(rules::kAll.begin(), rules::kAll.end());
  EXPECT_EQ(unique.size(), rules::kAll.size());
}

// kAll holds every constant of rules.h (its size follows from the list: no count to keep).
TEST(Rules, EveryConstantIsInKAll) {
  std::ifstream in(std::filesystem::path(ETWH_HARNESS_DIR) / "model" / "rules.h");
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  const std::regex constant("inline constexpr char (k\\w+)\\[\\] = \"([^\"]+)\";");
  const std::set<std::string_view> all(rules::kAll.begin(), rules::kAll.end());
  int constants = 0;
  for (std::sregex_iterator it(s.begin(), s.end(), constant), end; it != end; ++it, ++constants) {
    EXPECT_TRUE(all.count((*it)[2].str())) << (*it)[1].str() << " is not in rules::kAll";
  }
  EXPECT_EQ(constants, static_cast<int>(rules::kAll.size()));
}

// Tests and rules.h itself may spell IDs out; every other source of the harness goes through
// the constants, so that the test above covers every rule the code can blame.
TEST(Rules, HarnessCodeNamesRulesOnlyThroughTheConstants) {
  const std::set<std::string> ids = load_catalog(ETWH_CATALOG_FILE).ids();
  const std::regex literal("\"([A-Z][A-Z0-9]*(-[A-Z0-9]+)+)\"");
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(ETWH_HARNESS_DIR)) {
    const std::string name = entry.path().filename().string();
    const std::string ext = entry.path().extension().string();
    if ((ext != ".cc" && ext != ".h") || name == "rules.h" ||
        name.find("_test.cc") != std::string::npos)
      continue;
    ++files;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    for (std::sregex_iterator it(s.begin(), s.end(), literal), end; it != end; ++it) {
      EXPECT_FALSE(ids.count((*it)[1].str()))
          << entry.path() << " names rule " << (*it)[1].str() << " by a literal";
    }
  }
  EXPECT_GT(files, 10);
}

}  // namespace
}  // namespace etwh
