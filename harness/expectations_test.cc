#include "expectations.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>

namespace etwh {
namespace {

std::filesystem::path write_temp(const std::string& name, const std::string& text) {
  auto path = std::filesystem::temp_directory_path() /
              ("etwh_exp_" + std::to_string(std::random_device{}()) + "_" + name);
  std::ofstream(path) << text;
  return path;
}

TEST(Classify, NoEntryMeansPass) {
  const Expectations none;
  EXPECT_EQ(classify(Status::kPass, none, "c"), std::make_pair(Status::kPass, true));
  EXPECT_EQ(classify(Status::kFail, none, "c"), std::make_pair(Status::kFail, false));
  EXPECT_EQ(classify(Status::kCrash, none, "c"), std::make_pair(Status::kCrash, false));
}

TEST(Classify, ExpectedFailBecomesXfailOrXpass) {
  const Expectations e = {{"c", Expectation{Status::kFail, "why"}}};
  EXPECT_EQ(classify(Status::kFail, e, "c"), std::make_pair(Status::kXFail, true));
  EXPECT_EQ(classify(Status::kPass, e, "c"), std::make_pair(Status::kXPass, false));
  EXPECT_EQ(classify(Status::kTimeout, e, "c"), std::make_pair(Status::kTimeout, false));
}

TEST(Classify, OtherExpectedStatusesMatchExactly) {
  const Expectations e = {{"c", Expectation{Status::kUnsupported, "n/a"}}};
  EXPECT_EQ(classify(Status::kUnsupported, e, "c"), std::make_pair(Status::kUnsupported, true));
  EXPECT_EQ(classify(Status::kPass, e, "c"), std::make_pair(Status::kPass, false));
}

TEST(LoadExpectations, ParsesAndRejects) {
  auto ok = write_temp("ok.json", R"({"c": {"status": "FAIL", "reason": "stub"}})");
  auto e = load_expectations(ok, {"c"});
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e["c"].status, Status::kFail);
  EXPECT_EQ(e["c"].reason, "stub");
  auto bad = write_temp("bad.json", R"({"c": {"status": "XPASS", "reason": "r"}})");
  try {
    load_expectations(bad, {"c"});
    FAIL() << "no error";
  } catch (const InputError& ex) {
    EXPECT_EQ(std::string(ex.what()),
              bad.string() + ":1:18: /c/status: status \"XPASS\" is not one of PASS, FAIL, "
                             "UNSUPPORTED, TIMEOUT, CRASH, HARNESS_ERROR");
  }
  try {
    load_expectations(ok, {"other"});
    FAIL() << "no error";
  } catch (const InputError& ex) {
    EXPECT_EQ(std::string(ex.what()), ok.string() + ":1:7: /c: unknown case id \"c\"");
  }
  std::filesystem::remove(ok);
  std::filesystem::remove(bad);
}

}  // namespace
}  // namespace etwh
