// A stand-in for etwh-agent that speaks the protocol (providers/PROTOCOL.md) but makes no Win32
// call: on "register" it reports a scripted enable callback, or misbehaves as
// ETWH_SCRIPTED_AGENT_MODE says. It lets the tests prove that the driver turns each kind of
// platform or agent fault into the right verdict (FAIL, CRASH, TIMEOUT, HARNESS_ERROR).
#include <nlohmann/json.hpp>


#include <cstdlib>
#include <iostream>
#include <string>

namespace {

using nlohmann::json;

void emit(const json& j) { std::cout << j.dump() << "\n" << std::flush; }

// What a conforming platform delivers at registration for tests/data/driver_selftest.json:
// a pre-enabled provider, level 3, MatchAny 0x1, SourceId GUID_NULL, no filter.
json good_callback(int n) {
  return {{"event", "callback"}, {"provider", "p"}, {"n", n},
          {"source_id", "{00000000-0000-0000-0000-000000000000}"},
          {"is_enabled", 1}, {"level", 3}, {"match_any", "0x1"}, {"match_all", "0x0"},
          {"filter", nullptr}, {"context", "0x5"}, {"t_ns", 0}, {"duration_ns", 0}};
}

}  // namespace

int main() {
  const char* env = std::getenv("ETWH_SCRIPTED_AGENT_MODE");
  const std::string mode = env ? env : "good";
  emit({{"event", "ready"}, {"pid", 0}, {"platform", "scripted"}});
  std::string line;
  while (std::getline(std::cin, line)) {
    const json req = json::parse(line, nullptr, false);
    if (req.is_discarded()) return 3;
    const std::string op = req.value("op", "");
    json reply = {{"id", req.value("id", 0)}, {"ok", true}, {"status", 0}, {"handle", "0x1"}};
    if (op == "register") {
      if (mode == "crash") std::abort();
      if (mode == "hang") continue;
      if (mode == "protocol") {
        emit({{"id", req.value("id", 0)}, {"ok", false}, {"error", "scripted protocol fault"}});
        continue;
      }
      json cb = good_callback(1);
      if (mode == "wrong_level") cb["level"] = 2;
      if (mode == "wrong_source") cb["source_id"] = "{5a5a0001-1111-4111-8111-111111111111}";
      if (mode == "filter") cb["filter"] = {{"type", 1}, {"size", 1}, {"data", "01"}};
      if (mode != "no_callback") emit(cb);
      if (mode == "extra_callback") emit(good_callback(2));
    }
    emit(reply);
    if (op == "exit") return 0;
  }
  return 0;
}
