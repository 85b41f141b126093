// Groups and disallow lists: TraceSetInformation(TraceSetDisallowList) for a session the
// driver started (group_steps.h). Enabling a group is an enable step (sessions.cc).
#include "harness/conformance/families/driver_families.h"

#include "harness/conformance/families/groups/group_steps.h"
#include "harness/conformance/families/groups/groups_ops.h"
#include "win32_text.h"

namespace etwh {

using nlohmann::json;
using std::chrono::milliseconds;

std::optional<StepReply> CaseRun::disallow(const Step& step, const oracle::StepExpectation&) {
  const DisallowStep& d = step_body<DisallowStep>(step);
  require_session(d.session);
  std::vector<GUID> guids;
  for (const std::string& label : d.providers) guids.push_back(case_.providers.at(label).guid);
  return StepReply{set_disallow_list(parse_hex(sessions_.at(d.session).handle).value_or(0), guids)};
}

// The family's driver registration: each op's runner (families/driver_families.h).
std::vector<DriverOp> groups_driver_ops() {
  return {
      {ops::kDisallow, run_part<&CaseRun::disallow>},
  };
}

}  // namespace etwh
