// The families' registrations: every op of the core has exactly one runner in the driver and
// every runner an op of the core, each op's name once, and each op a body for unit tests.
#include "harness/conformance/families/core_families.h"
#include "harness/conformance/families/driver_families.h"
#include "harness/conformance/families/data_path/data_path_ops.h"
#include "harness/conformance/families/providers/providers_ops.h"
#include "harness/conformance/families/sessions/sessions_ops.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace etwh {
namespace {

TEST(OpRegistrations, EveryOpHasOneRunnerAndEveryRunnerAnOp) {
  for (const std::string& problem : op_registration_mismatches()) ADD_FAILURE() << problem;
  EXPECT_EQ(core_ops().size(), driver_ops().size());
}

TEST(OpRegistrations, EachCoreOpIsWhole) {
  std::set<std::string_view> names;
  for (const CoreOp& op : core_ops()) {
    EXPECT_TRUE(names.insert(op.name).second) << "op \"" << op.name << "\" registered twice";
    EXPECT_NE(op.parse, nullptr) << "op \"" << op.name << "\" has no parser";
    ASSERT_NE(op.default_body, nullptr) << "op \"" << op.name << "\" has no default body";
    EXPECT_FALSE(op.default_body("s", "p").empty()) << op.name;
    EXPECT_EQ(find_core_op(op.name), &op) << op.name;
    EXPECT_EQ(op.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_"), std::string_view::npos)
        << "op \"" << op.name << "\" is not a lower-case name";
  }
  EXPECT_EQ(find_core_op("no_such_op"), nullptr);
}

TEST(OpRegistrations, EachRunnerIsSet) {
  for (const DriverOp& op : driver_ops()) {
    EXPECT_NE(op.run, nullptr) << "op \"" << op.name << "\" has no runner";
    EXPECT_EQ(find_driver_op(op.name), &op) << op.name;
  }
}

// Scenario authors learn the ops from scenarios/README.md's table of steps: each op has a row
// whose first cell names it.
TEST(OpRegistrations, EachOpHasItsRowInTheScenariosReadme) {
  std::ifstream in(ETWH_SCENARIOS_README);
  ASSERT_TRUE(in) << ETWH_SCENARIOS_README;
  std::set<std::string> named;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| `", 0) != 0) continue;
    const std::string first = line.substr(0, line.find(" |", 1));
    for (std::size_t at = first.find('`'); at != std::string::npos;) {
      const std::size_t end = first.find('`', at + 1);
      if (end == std::string::npos) break;
      named.insert(first.substr(at + 1, end - at - 1));
      at = first.find('`', end + 1);
    }
  }
  for (const CoreOp& op : core_ops()) {
    EXPECT_TRUE(named.count(std::string(op.name)))
        << "op \"" << op.name << "\" has no row in scenarios/README.md's table of steps";
  }
}

// A body knows its type, and the provider and session it names (none where it has no such field).
TEST(StepBodies, KnowTheirTypeProviderAndSession) {
  Step s;
  ControlStep call;
  call.session = "s1";
  call.provider = "p1";
  s.body = call;
  ASSERT_NE(s.body.get_if<ControlStep>(), nullptr);
  EXPECT_EQ(s.body.get_if<SessionStep>(), nullptr);
  EXPECT_EQ(step_provider(s), "p1");
  EXPECT_EQ(step_session(s), "s1");
  s.body = AgentStep{"a"};
  EXPECT_TRUE(s.body.holds<AgentStep>());
  EXPECT_EQ(step_provider(s), "");
  EXPECT_EQ(step_session(s), "");
  Step copy = s;
  copy.body.get_if<AgentStep>()->agent = "b";
  EXPECT_EQ(step_body<AgentStep>(s).agent, "a");  // a copy owns its body
  EXPECT_THROW(step_body<WriteStep>(s), std::logic_error);
}

}  // namespace
}  // namespace etwh
