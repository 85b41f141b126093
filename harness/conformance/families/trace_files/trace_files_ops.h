// The ops of the trace files family (scenarios/README.md): read_file, whose fields are the file
// session to stop and read back and whether to read it a second time with raw timestamps.
#pragma once

#include <string>
#include <string_view>

namespace etwh {

// The ops' names, as in scenario files (Step::op; the registrations are keyed by them).
namespace ops {
inline constexpr std::string_view kReadFile = "read_file";
}  // namespace ops

// read_file: the session (one with a log_file); raw_timestamp: read the file a second time with
// PROCESS_TRACE_MODE_RAW_TIMESTAMP and judge both reads' stamps against each other.
struct FileStep {
  std::string session;
  bool raw_timestamp = false;
};

}  // namespace etwh
