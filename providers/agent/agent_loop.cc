#include "agent.h"
#include "etwh/build_platform.h"
#include "platform.h"

#include <iostream>
#include <string>

namespace etwh::agent {

void run_agent_loop(Agent& agent, LineWriter& out) {
  out.write({{"event", "ready"}, {"pid", current_pid()}, {"platform", etwh::build_platform()}});
  std::string line;
  while (std::getline(std::cin, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    int exit_code = 0;
    switch (agent.handle_line(line, exit_code)) {
      case Agent::Next::kContinue: break;
      case Agent::Next::kExit: exit_now(exit_code);
      case Agent::Next::kCrash: crash_now();
    }
  }
  exit_now(0);
}

}  // namespace etwh::agent
