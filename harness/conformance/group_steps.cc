#include "harness/conformance/group_steps.h"

#include <evntrace.h>

namespace etwh {

nlohmann::json set_disallow_list(std::uint64_t handle, const std::vector<GUID>& guids) {
  // An empty list is a NULL pointer of length 0 (it clears the list).
  std::vector<GUID> copy = guids;
  const ULONG status = TraceSetInformation(static_cast<TRACEHANDLE>(handle), TraceSetDisallowList,
                                           copy.empty() ? nullptr : copy.data(),
                                           static_cast<ULONG>(copy.size() * sizeof(GUID)));
  return {{"status", status}};
}

}  // namespace etwh
