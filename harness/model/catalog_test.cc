#include "harness/model/catalog.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>

namespace etwh {
namespace {

TEST(ShippedCatalog, LoadsWithEveryRuleOfRulesMd) {
  const Catalog c = load_catalog(ETWH_CATALOG_FILE);
  // IDs are unique and never change once shipped; that every RULES.md rule is here is
  // completeness_test.cc's check, with no count to keep.
  EXPECT_EQ(c.ids().size(), c.rules.size());
  for (const char* id : {"CB-LEVEL-MAX", "TR-FORMAT", "HDR-CPU-TIME", "CON-WPP", "DESC-MOF-OPCODE",
                         "GRP-PERMISSION", "SES-PERSIST"}) {
    EXPECT_NE(c.find(id), nullptr) << id;
  }
  const Rule* observed = c.find("CB-SOURCEID-NULL-STOPPING");
  ASSERT_NE(observed, nullptr);
  EXPECT_TRUE(observed->observed);
  EXPECT_EQ(c.find("TR-FORMAT")->kinds, (std::vector<std::string>{"lint", "runtime"}));
}

std::string catalog_error(const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("etwh_catalog_" + std::to_string(std::random_device{}()) + ".json");
  std::ofstream(path) << text;
  std::string error = "(no error)";
  try {
    load_catalog(path);
  } catch (const InputError& e) {
    error = e.what();
    error = error.substr(error.find(": ") + 2);  // drop the temporary file name
  }
  std::filesystem::remove(path);
  return error;
}

// A catalog text with one platform and the given "rules" member.
std::string with_rules(const std::string& rules) {
  return R"({"schema_version": 1, "platforms": {"etwrt": "Linux"}, "rules": )" + rules + "}";
}

TEST(LoadCatalog, RejectsBadEntries) {
  const std::string rule = R"({"id": "A-B", "text": "t", "citation": "c", "kind": "runtime"})";
  EXPECT_EQ(catalog_error(with_rules("[" + rule + "]")), "(no error)");
  EXPECT_EQ(catalog_error(with_rules("[" + rule + "," + rule + "]")),
            "/rules/1/id: duplicate rule ID \"A-B\"");
  EXPECT_EQ(catalog_error(with_rules(R"([{"id": "X", "text": "t", "citation": "c",
                                         "kind": "kernel"}])")),
            "/rules/0/kind: unknown kind \"kernel\"");
  EXPECT_EQ(catalog_error(with_rules(R"([{"id": "X", "citation": "c", "kind": "lint"}])")),
            "/rules/0/text: missing or not a non-empty string");
  EXPECT_EQ(catalog_error(with_rules("{}")), "/rules: expected an array of rules");
}

// A version this loader does not read is refused, never guessed (-1 was accepted).
TEST(LoadCatalog, RefusesAnotherSchemaVersion) {
  const std::string rules = R"("platforms": {"etwrt": "Linux"}, "rules": [])";
  EXPECT_EQ(catalog_error(R"({"schema_version": -1, )" + rules + "}"),
            "/schema_version: unsupported schema_version -1 (1)");
  EXPECT_EQ(catalog_error(R"({"schema_version": 1e999, )" + rules + "}"),
            "/schema_version: number overflow parsing '1e999'");
  EXPECT_EQ(catalog_error("{" + rules + "}"), "missing field \"schema_version\" (1)");
}

TEST(LoadCatalog, PlatformsAreTheOneList) {
  const std::string rule = R"({"id": "A-B", "text": "t", "citation": "c", "kind": "runtime",
                              "unsupported": {"wine": "w"}})";
  EXPECT_EQ(catalog_error(R"({"schema_version": 1, "rules": []})"),
            "/platforms: expected an object of platform name -> description");
  EXPECT_EQ(catalog_error(with_rules("[" + rule + "]")),
            "/rules/0/unsupported/wine: unknown platform (not in /platforms)");
  const Catalog shipped = load_catalog(ETWH_CATALOG_FILE);
  EXPECT_EQ(shipped.platforms.size(), 3u);
  EXPECT_TRUE(shipped.platforms.count("etwrt") && shipped.platforms.count("wine") &&
              shipped.platforms.count("windows"));
}

}  // namespace
}  // namespace etwh
