// Classic providers: the steps go to classic::Run (classic_driver.cc), which lends the driver's
// agents, findings and waits through DriverHooks.
#include "harness/conformance/families/driver_families.h"
#include "harness/conformance/families/classic/classic_ops.h"

namespace etwh {

using nlohmann::json;
using std::chrono::milliseconds;

std::optional<StepReply> CaseRun::classic_step(const Step& step, const oracle::StepExpectation& e) {
  return StepReply{classic_.run_step(case_, step, e, classic_hooks())};
}

// What classic_steps.cc needs of this run.
classic::DriverHooks CaseRun::classic_hooks() {
  return {[this](const std::string& label) -> AgentProcess& { return agent(label); },
          [this](Finding f) { fail(std::move(f)); },
          [this](const std::string& what) { note(what); }, [this] { return callback_wait_; },
          [this] { callback_wait_ = kCallbackWaitAfterMiss; }};
}

// The family's driver registration: each op's runner (families/driver_families.h).
std::vector<DriverOp> classic_driver_ops() {
  std::vector<DriverOp> out;
  for (std::string_view op : ops::kClassicOps) {
    out.push_back({op, run_part<&CaseRun::classic_step>});
  }
  return out;
}

}  // namespace etwh
