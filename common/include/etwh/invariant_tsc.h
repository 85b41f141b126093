// Whether the TSC ticks at one rate in every power state and on every CPU, by the kernel's own
// flags (/proc/cpuinfo: constant_tsc and nonstop_tsc). Header-only: etwrt's pools stamp with
// the TSC only then, and so does `etwh stress` (StampClock), which stays on the Win32 side of
// the seam and cannot call into etwrt.
#pragma once

#include <fstream>
#include <string>

namespace etwh {

inline bool cpu_has_invariant_tsc() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) == 0) {
      return line.find(" constant_tsc") != std::string::npos &&
             line.find(" nonstop_tsc") != std::string::npos;
    }
  }
  return false;
}

}  // namespace etwh
