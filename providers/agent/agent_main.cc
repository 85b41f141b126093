// etwh-agent: the provider agent of providers/PROTOCOL.md. Reads JSON-line requests on stdin
// until "exit", "crash" or end of input (the driver is gone: do not linger).
#include "agent.h"
#include "platform.h"

#include <iostream>
#include <string>

int main() {
  etwh::agent::prepare_stdio();
  etwh::agent::LineWriter out(stdout);
  etwh::agent::Agent agent(out);
  out.write({{"event", "ready"},
             {"pid", etwh::agent::current_pid()},
             {"platform", etwh::agent::platform_name()}});
  std::string line;
  while (std::getline(std::cin, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    int exit_code = 0;
    switch (agent.handle_line(line, exit_code)) {
      case etwh::agent::Agent::Next::kContinue:
        break;
      case etwh::agent::Agent::Next::kExit:
        etwh::agent::exit_now(exit_code);
      case etwh::agent::Agent::Next::kCrash:
        etwh::agent::crash_now();
    }
  }
  etwh::agent::exit_now(0);
}
