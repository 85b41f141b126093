// The driver's side of the provider-group steps (scenarios/README.md, "disallow"): calls the
// Win32 API for a session the driver started and reports as the other controller calls do.
#pragma once

#include <windows.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

namespace etwh {

// TraceSetInformation(handle, TraceSetDisallowList, guids): returns {"status": <ULONG>}.
nlohmann::json set_disallow_list(std::uint64_t handle, const std::vector<GUID>& guids);

}  // namespace etwh
