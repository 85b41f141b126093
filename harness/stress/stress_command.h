// `etwh stress PROFILE... [--json FILE] [--sweep dim=v1,v2,...]`: loads every profile (all
// before any runs), runs each, prints one verdict line per session and writes the JSON results
// (schema_version, run_info, results[], as `etwh run` does). Exit 0 when every run balanced and
// met its profile's expectation, 1 when one did not, 2 on bad input or a harness fault.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace etwh::stress {

struct StressArgs {
  std::vector<std::string> profiles;
  std::string json_file;
  std::string sweep;                   // empty: none
  std::filesystem::path writer;        // etwh-stress-writer
  std::string platform, version, command_line, host, start_time;
};

int run_stress_command(const StressArgs& args);

}  // namespace etwh::stress
