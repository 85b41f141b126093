// Test support: the processors a test may run on, and pinning the calling thread to one, for
// the tests of what each record says of its writer's processor.
#pragma once

#include <sched.h>

#include <cstddef>
#include <vector>

namespace etwrt::testing {

// The processors this process may run on (its affinity), at most `most` of them.
inline std::vector<int> allowed_processors(std::size_t most) {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE && cpus.size() < most; ++cpu)
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  return cpus;
}

// Pins the calling thread to `cpu`; false when the system refuses.
inline bool pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof set, &set) == 0;
}

}  // namespace etwrt::testing
