// Test support: tests/etl/check_layout.py (ETWRT_CHECK_LAYOUT, run with ETWRT_PYTHON) on a trace
// file etwrt wrote: a reader of the bytes that shares no code with the writer.
#pragma once

#include <nlohmann/json.hpp>

#include <stdio.h>
#include <sys/wait.h>

#include <array>
#include <string>

namespace etwrt::testing {

// The checker's exit status (0: every check of `expect` held), its JSON summary of the file
// (its first line) and all it printed.
struct Checked {
  int status = -1;
  nlohmann::json summary;
  std::string output;
};

inline Checked check_layout(const std::string& file, const nlohmann::json& expect) {
  const std::string command = std::string(ETWRT_PYTHON) + " " + ETWRT_CHECK_LAYOUT + " '" + file +
                              "' --expect '" + expect.dump() + "' 2>&1";
  Checked out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 4096> chunk{};
  while (std::fgets(chunk.data(), chunk.size(), pipe) != nullptr) out.output += chunk.data();
  const int raw = ::pclose(pipe);
  out.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  out.summary = nlohmann::json::parse(out.output.substr(0, out.output.find('\n')), nullptr, false);
  return out;
}

}  // namespace etwrt::testing
