#include "harness/commands/run_selection.h"
#include "harness/commands/suggest.h"

#include "harness/model/input_error.h"

#include <gtest/gtest.h>

namespace etwh::cli {
namespace {

TEST(Suggest, EditDistance) {
  EXPECT_EQ(edit_distance("run", "run"), 0u);
  EXPECT_EQ(edit_distance("runn", "run"), 1u);
  EXPECT_EQ(edit_distance("rnu", "run"), 1u);  // two neighbours swapped: one edit
  EXPECT_EQ(edit_distance("FLT-LEVL", "FLT-LEVEL"), 1u);
  EXPECT_EQ(edit_distance("flt-level", "FLT-LEVEL"), 0u);  // case is not an edit
  EXPECT_EQ(edit_distance("", "list"), 4u);
  EXPECT_EQ(edit_distance("stress", "selftest"), 5u);
}

TEST(Suggest, NearestWithinAThirdOfTheLength) {
  const std::vector<std::string> commands = {"list", "run", "compare", "report", "stress"};
  EXPECT_EQ(closest("runn", commands), std::vector<std::string>{"run"});
  EXPECT_EQ(closest("comprae", commands), std::vector<std::string>{"compare"});
  EXPECT_EQ(closest("xyz", commands), std::vector<std::string>{});  // 3 edits from run: too far
  EXPECT_EQ(closest("repor", commands), std::vector<std::string>{"report"});
  EXPECT_EQ(did_you_mean("runn", commands), "; did you mean 'run'?");
  EXPECT_EQ(did_you_mean("lst", {"list", "last"}), "; did you mean one of 'list', 'last'?");
  EXPECT_EQ(did_you_mean("zzzz", commands), "");
}

TEST(Suggest, CommandsAndOptionsOfTheCommandLine) {
  CLI::App app{"test", "etwh"};
  std::string catalog, json;
  app.add_option("--catalog", catalog);
  CLI::App* run = app.add_subcommand("run");
  run->add_option("--json", json);
  run->add_flag("--quiet");
  app.add_subcommand("list");
  auto hint = [&](std::vector<const char*> words) {
    words.insert(words.begin(), "etwh");
    return unknown_word_hint(app, static_cast<int>(words.size()), const_cast<char**>(words.data()))
        .value_or("(none)");
  };
  EXPECT_EQ(hint({"runn"}), "etwh: unknown command 'runn'; did you mean 'run'?");
  EXPECT_EQ(hint({"--catalog", "runn", "run"}), "(none)");  // the catalog's value, then run
  EXPECT_EQ(hint({"run", "--jsn", "x"}), "etwh: unknown option '--jsn'; did you mean '--json'?");
  EXPECT_EQ(hint({"run", "--catalg=x"}),
            "etwh: unknown option '--catalg'; did you mean '--catalog'?");  // a global one
  EXPECT_EQ(hint({"run", "--quiet", "scenario.json"}), "(none)");
  EXPECT_EQ(hint({"frobnicate"}), "etwh: unknown command 'frobnicate'");
}

TEST(Suggest, RuleIdsOfTheCatalog) {
  SelectionOptions options;
  options.rules = {"FLT-LEVL"};
  try {
    select_cases({}, options, {"FLT-LEVEL", "FLT-KEYWORD0-BYPASS", "CB-LEVEL-MAX"}, "x");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "'FLT-LEVL' is not a rule of the catalog; did you mean 'FLT-LEVEL'?"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace etwh::cli
