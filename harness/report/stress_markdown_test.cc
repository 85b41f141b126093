#include "harness/report/stress_formats.h"

#include <gtest/gtest.h>

namespace etwh::stress {
namespace {

using nlohmann::ordered_json;

ordered_json run(const std::string& status, unsigned repetition, std::uint64_t lost) {
  ordered_json session = {{"name", "s0"},
                          {"written", 1000},
                          {"delivered", 1000 - lost},
                          {"reported_lost", lost},
                          {"throughput", {{"events_per_s", 2.5e6}}},
                          {"latency_us", {{"p50", 12.5}, {"p99", 80.0}}}};
  return {{"id", "write_path"},
          {"repetition", repetition},
          {"status", status},
          {"message", status == "PASS" ? "" : "s0: written 1000 != delivered 990 + lost 0 | x"},
          {"writers", {{"cpu", {{"ns_per_event", 66.5}}}}},
          {"sessions", ordered_json::array({session})}};
}

TEST(StressMarkdown, FailedRunsFirstThenATableOfSessions) {
  const ordered_json doc = {
      {"schema_version", 1},
      {"run_info", {{"platform", "etwrt"}}},
      {"results",
       {run("PASS", 1, 0),
        run("FAIL", 2, 10),
        {{"id", "write_path"}, {"repetition", 3}, {"status", "HARNESS_ERROR"}, {"message", "m"}}}}};
  const std::string md = stress_markdown(doc, nullptr);
  EXPECT_EQ(md.rfind("### etwh stress on etwrt: 2 of 3 runs failed\n", 0), 0u) << md;
  const auto failed = md.find(
      "- `write_path` #2 **FAIL**: s0: written 1000 != delivered 990 + lost "
      "0 \\| x\n");
  const auto table = md.find("| run | status | session |");
  ASSERT_NE(failed, std::string::npos) << md;
  EXPECT_LT(failed, table);
  EXPECT_NE(md.find("| `write_path` #1 | PASS | s0 | 1000 | 1000 | 0 | 2.5e+06 | 12.5 / 80.0 | "
                    "66.5 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| `write_path` #3 | **HARNESS_ERROR** |"), std::string::npos) << md;
  // With a baseline, the comparison follows.
  compare::Comparison c;
  c.regressions = 1;
  EXPECT_NE(stress_markdown(doc, &c).find("### etwh compare (stress): **1 regressions**"),
            std::string::npos);
}

}  // namespace
}  // namespace etwh::stress
