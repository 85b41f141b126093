// Classic providers: the steps go to classic::Run (classic_run.cc), which lends the driver's
// agents, findings and waits through DriverHooks.
#include "harness/conformance/case_run.h"

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

}  // namespace etwh
