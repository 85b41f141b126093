// The case selection and the parallel scheduling of `etwh run`, with cases run by a stand-in
// (no platform, no agents).
#include "harness/model/input_error.h"
#include "harness/commands/run_parallel.h"
#include "harness/commands/run_selection.h"
#include "harness/conformance/families/sessions/sessions_ops.h"
#include "win32_text.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <chrono>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace etwh {

// driver.cc is not linked: the stand-in run_case never drives a case, and constructing the real
// driver would probe a platform.
Driver::Driver(DriverOptions options) : options_(std::move(options)) {}

}  // namespace etwh

namespace etwh::cli {
namespace {

GUID guid(int n) {
  return GUID{static_cast<std::uint32_t>(n), 0, 0x4000, {0x80, 0, 0, 0, 0, 0, 0, 1}};
}

Case make_case(std::string id, std::vector<std::string> rules, int provider_guid) {
  Case c;
  c.id = std::move(id);
  c.rules = std::move(rules);
  c.providers["p"] = ProviderDef{"p", "a", guid(provider_guid)};
  return c;
}

std::vector<Case> sample() {
  return {make_case("cb-one", {"CB-LEVEL-MAX"}, 1), make_case("cb-two", {"CB-ANY-OR"}, 1),
          make_case("tr-three", {"TR-SET-ONCE"}, 2), make_case("cb-four", {"CB-LEVEL-MAX"}, 3)};
}

const std::set<std::string> kRules = {"CB-LEVEL-MAX", "CB-ANY-OR", "TR-SET-ONCE", "SES-MAX-8"};

std::vector<std::string> ids(const Selection& s) {
  std::vector<std::string> out;
  for (const ScheduledRun& r : s.runs) out.push_back(s.cases[r.case_index].id);
  return out;
}

TEST(SelectCases, FilterSearchesIdsAndRulesKeepCasesNamingAny) {
  SelectionOptions options;
  options.filter = "^cb-";
  options.rules = {"CB-LEVEL-MAX"};
  EXPECT_EQ(ids(select_cases(sample(), options, kRules, "s")),
            (std::vector<std::string>{"cb-one", "cb-four"}));
  options = {};
  options.rules = {"CB-ANY-OR", "TR-SET-ONCE"};
  EXPECT_EQ(ids(select_cases(sample(), options, kRules, "s")),
            (std::vector<std::string>{"cb-two", "tr-three"}));
}

TEST(SelectCases, NothingSelectedIsBadInput) {
  SelectionOptions options;
  options.filter = "nothing";
  EXPECT_THROW(select_cases(sample(), options, kRules, "s"), InputError);
  options = {};
  options.rules = {"SES-MAX-8"};  // a rule of the catalog no case names
  EXPECT_THROW(select_cases(sample(), options, kRules, "s"), InputError);
  EXPECT_THROW(select_cases({}, SelectionOptions{}, kRules, "s"), InputError);
}

TEST(SelectCases, BadRegexAndUnknownRuleAreBadInput) {
  SelectionOptions options;
  options.filter = "(";
  EXPECT_THROW(select_cases(sample(), options, kRules, "s"), InputError);
  options = {};
  options.rules = {"NO-SUCH"};
  EXPECT_THROW(select_cases(sample(), options, kRules, "s"), InputError);
}

TEST(SelectCases, RepeatRunsEveryCaseEachRound) {
  SelectionOptions options;
  options.repeat = 2;
  const Selection s = select_cases(sample(), options, kRules, "s");
  ASSERT_EQ(s.runs.size(), 8u);
  EXPECT_EQ(s.runs[4].case_index, 0u);
  EXPECT_EQ(s.runs[4].repetition, 2);
  EXPECT_FALSE(s.seed);
}

TEST(SelectCases, ShuffleIsAPermutationTheSeedRepeats) {
  SelectionOptions options;
  options.shuffle = true;
  options.seed = 7;
  std::vector<Case> many;
  for (int i = 0; i < 20; ++i) many.push_back(make_case("c" + std::to_string(i), {}, i));
  const Selection a = select_cases(many, options, kRules, "s");
  const Selection b = select_cases(many, options, kRules, "s");
  EXPECT_EQ(ids(a), ids(b));
  EXPECT_EQ(*a.seed, 7u);
  std::vector<std::string> sorted = ids(a), in_order;
  for (const Case& c : many) in_order.push_back(c.id);
  EXPECT_NE(sorted, in_order);
  std::sort(sorted.begin(), sorted.end());
  std::sort(in_order.begin(), in_order.end());
  EXPECT_EQ(sorted, in_order);
}

TEST(MachineWideResources, ProvidersGroupsAndTheSubject) {
  Case c = make_case("c", {}, 1);
  c.providers["s"] = ProviderDef{"s", "b", guid(9)};
  c.providers["s"].subject = true;
  Step enable;
  ControlStep control;
  control.group = guid(5);
  enable.body = control;
  c.steps.push_back(enable);
  EXPECT_EQ(machine_wide_resources(c),
            (std::set<std::string>{"{00000001-0000-4000-8000-000000000001}",
                                   "{00000005-0000-4000-8000-000000000001}", "subject"}));
}

// Runs every case for a while, recording how many cases holding each GUID run at once.
class Recorder {
 public:
  CaseResult run(const Case& c) {
    const std::string key = format_guid(c.providers.at("p").guid);
    {
      std::lock_guard lock(mutex_);
      max_ = std::max(max_, ++running_[key]);
      ++all_running_;
      max_all_ = std::max(max_all_, all_running_);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    std::lock_guard lock(mutex_);
    --running_[key];
    --all_running_;
    return {c.id, c.rules, Status::kPass, true, "", 0, "", {}};
  }
  int max_same_provider() const { return max_; }
  int max_at_once() const { return max_all_; }

 private:
  std::mutex mutex_;
  std::map<std::string, int> running_;
  int max_ = 0, all_running_ = 0, max_all_ = 0;
};

TEST(RunInParallel, CasesSharingAProviderNeverOverlapAndResultsKeepTheirOrder) {
  SelectionOptions options;
  options.repeat = 3;
  const Selection s = select_cases(sample(), options, kRules, "s");
  Recorder recorder;
  std::size_t finished = 0;
  const auto results = run_in_parallel(
      s, 3, DriverOptions{}, [&](Driver&, const Case& c) { return recorder.run(c); },
      [&](const CaseResult&, const ScheduledRun&) { ++finished; });
  EXPECT_EQ(finished, s.runs.size());
  ASSERT_EQ(results.size(), s.runs.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    ASSERT_TRUE(results[i]);
    EXPECT_EQ(results[i]->id, s.cases[s.runs[i].case_index].id);
  }
  EXPECT_EQ(recorder.max_same_provider(), 1);
  EXPECT_GT(recorder.max_at_once(), 1);  // it did run in parallel
}

TEST(RunInParallel, AnExceptionOfACaseIsRethrown) {
  const Selection s = select_cases(sample(), SelectionOptions{}, kRules, "s");
  auto throwing = [](Driver&, const Case& c) -> CaseResult {
    if (c.id == "tr-three") throw std::runtime_error("boom");
    return {c.id, c.rules, Status::kPass, true, "", 0, "", {}};
  };
  auto nothing = [](const CaseResult&, const ScheduledRun&) {};
  EXPECT_THROW(run_in_parallel(s, 2, DriverOptions{}, throwing, nothing), std::runtime_error);
  EXPECT_THROW(run_in_parallel(s, 1, DriverOptions{}, throwing, nothing), std::runtime_error);
}

}  // namespace
}  // namespace etwh::cli
