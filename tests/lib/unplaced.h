// For unit tests of the loaders: an InputError's message without its line:col when it has a
// pointer, so that a test names the place by pointer only (the locator is tested on its own).
#pragma once

#include "harness/model/input_error.h"

#include <string>

namespace etwh::test_support {

inline std::string unplaced(const InputError& e) {
  return e.pointer().empty() ? e.what()
                             : format_input_error(e.file(), e.pointer(), e.reason(), 0, 0);
}

}  // namespace etwh::test_support
