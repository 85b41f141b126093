// Traits: EventSetInformation(EventProviderSetTraits) with the step's blob (lint.h builds it);
// the blob is kept to judge TR-IN-EVENTS on what consumers receive (consumer_judge.h).
#include "harness/conformance/families/driver_families.h"

#include "harness/conformance/lint.h"
#include "harness/conformance/families/traits/traits_ops.h"
#include "win32_text.h"

namespace etwh {

using nlohmann::json;
using std::chrono::milliseconds;

std::optional<StepReply> CaseRun::set_traits(const Step& step, const oracle::StepExpectation&) {
  const TraitsStep& t = step_body<TraitsStep>(step);
  const std::vector<std::uint8_t> blob = lint::traits_blob_of(step);
  traits_[t.provider] = bytes_to_hex(blob.data(), blob.size());
  return StepReply{agent(case_.providers.at(t.provider).agent)
                       .call({{"op", "set_information"},
                              {"provider", t.provider},
                              {"class", 2},  // EventProviderSetTraits
                              {"data", bytes_to_hex(blob.data(), blob.size())}},
                             kReplySlack)};
}

// The family's driver registration: each op's runner (families/driver_families.h).
std::vector<DriverOp> traits_driver_ops() {
  return {
      {ops::kSetTraits, run_part<&CaseRun::set_traits>},
  };
}

}  // namespace etwh
