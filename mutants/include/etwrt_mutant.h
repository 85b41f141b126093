// etwrt mutants: which single defect of the mutant build is on. Only the mutant build of etwrt
// (mutants/CMakeLists.txt, ETWRT_MUTANTS defined) includes this; the clean build never sees it.
// ETWRT_MUTANT=<name> in the environment selects the defect; unset, the mutant build behaves
// like the clean one. The broker inherits the variable from the process that starts it.
#pragma once

#if !defined(ETWRT_MUTANTS)
#error "etwrt_mutant.h belongs to the mutant build of etwrt only (ETWRT_MUTANTS)"
#endif

#include <cstdlib>
#include <cstring>

namespace etwrt::mutant {

inline bool active(const char* name) {
  // Read once: the environment does not change under a running test process.
  static const char* const selected = std::getenv("ETWRT_MUTANT");
  return selected != nullptr && std::strcmp(selected, name) == 0;
}

}  // namespace etwrt::mutant
