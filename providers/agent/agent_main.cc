// etwh-agent: the provider agent of providers/PROTOCOL.md. Reads JSON-line requests on stdin
// until "exit", "crash" or end of input (the driver is gone: do not linger).
#include "agent.h"
#include "platform.h"

int main() {
  etwh::agent::prepare_stdio();
  etwh::agent::LineWriter out(stdout);
  etwh::agent::Agent agent(out);
  etwh::agent::run_agent_loop(agent, out);
}
