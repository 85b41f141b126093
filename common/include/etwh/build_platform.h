// Which implementation answers the Win32 ETW API in this build, header-only so that the harness
// and the provider agent (which links nothing else of common/) say it the same way.
#pragma once

namespace etwh {

// The platform this build judges when none is named: "windows" for the Windows build (real
// ETW), "etwrt" on Linux. The list of platforms is the catalog's (`platforms` in rules.json).
constexpr const char* build_platform() {
#ifdef _WIN32
  return "windows";
#else
  return "etwrt";
#endif
}

}  // namespace etwh
