// The ops of the trace files family (scenarios/README.md): read_file. Its fields are a
// SessionStep's (families/sessions/sessions_ops.h): the file session to stop and read back.
#pragma once

#include "harness/conformance/families/sessions/sessions_ops.h"

#include <string_view>

namespace etwh {

// The ops' names, as in scenario files (Step::op; the registrations are keyed by them).
namespace ops {
inline constexpr std::string_view kReadFile = "read_file";
}  // namespace ops

}  // namespace etwh
