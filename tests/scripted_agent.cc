// A stand-in for etwh-agent that speaks the protocol (providers/PROTOCOL.md) but makes no Win32
// call: on "register" it reports a scripted enable callback, or misbehaves as
// ETWH_SCRIPTED_AGENT_MODE says. It lets the tests prove that the driver turns each kind of
// platform or agent fault into the right verdict (FAIL, CRASH, TIMEOUT, HARNESS_ERROR).
// The "data_*" modes play a consumer for tests/data/driver_selftest_data.json: they remember
// the writes and, at consume_stop, report what a conforming platform delivers, or that with
// one fault (a missing, extra or reordered event, a wrong UserContext); data_extra_decoded is
// data_extra with each event as TDH would decode it (`decoded`).
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <csignal>

#include <cstdint>
#include <utility>
#include <vector>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

namespace {

using nlohmann::json;

void emit(const json& j) { std::cout << j.dump() << "\n" << std::flush; }

// What a conforming platform delivers at registration for tests/data/driver_selftest.json:
// a pre-enabled provider, level 3, MatchAny 0x1, SourceId GUID_NULL, no filter.
json good_callback(int n) {
  return {{"event", "callback"},
          {"provider", "p"},
          {"n", n},
          {"source_id", "{00000000-0000-0000-0000-000000000000}"},
          {"is_enabled", 1},
          {"level", 3},
          {"match_any", "0x1"},
          {"match_all", "0x0"},
          {"filter", nullptr},
          {"context", "0x5"},
          {"t_ns", 0},
          {"duration_ns", 0}};
}

// A session enabled at level 3 takes, of the writes seen, those of level 3 or less.
json delivered_records(const std::string& mode, const std::vector<json>& writes,
                       const std::string& context) {
  json records = json::array();
  records.push_back({{"kind", "header"},
                     {"provider", "{68fdd900-4a3e-11d1-84f4-0000f80464e3}"},
                     {"id", 0},
                     {"version", 0},
                     {"channel", 0},
                     {"level", 0},
                     {"opcode", 0},
                     {"task", 0},
                     {"keyword", "0x0"},
                     {"ts", 1},
                     {"pid", getpid()},
                     {"tid", 1},
                     {"context", context},
                     // Room for a TRACE_LOGFILE_HEADER (272 bytes on 64-bit), zeroed.
                     {"payload", std::string(2 * 300, '0')},
                     {"seq", nullptr}});
  std::int64_t ts = 10;
  for (const json& w : writes) {
    const json& d = w["descriptor"];
    const bool wanted = d.value("level", 0) <= 3;
    const bool extra = mode == "data_extra" || mode == "data_extra_decoded";
    if (!wanted && !extra) continue;
    for (std::uint64_t i = 0; i < w.value("count", 1u); ++i) {
      const std::uint64_t seq = w.value("sequence", std::uint64_t{0}) + i;
      std::string payload;
      for (int b = 0; b < 8; ++b) {
        static const char* hex = "0123456789abcdef";
        const unsigned byte = (seq >> (8 * b)) & 0xFF;
        payload += hex[byte >> 4];
        payload += hex[byte & 0xF];
      }
      payload += w.value("payload", "");
      records.push_back({{"kind", "event"},
                         {"provider", "{e7c0fe01-0000-4000-8000-000000000001}"},
                         {"id", d.value("id", 0)},
                         {"version", d.value("version", 0)},
                         {"channel", d.value("channel", 0)},
                         {"level", d.value("level", 0)},
                         {"opcode", d.value("opcode", 0)},
                         {"task", d.value("task", 0)},
                         {"keyword", d.value("keyword", "0x0")},
                         {"ts", ts++},
                         {"pid", getpid()},
                         {"tid", 1},
                         {"context", mode == "data_context" ? "0x99" : context},
                         {"payload", payload},
                         {"seq", seq}});
      if (mode == "data_extra_decoded") {  // as the agent's TDH decoding gives it
        records.back()["decoded"] = {
            {"name", "Scripted.Event"},
            {"fields", {{{"name", "level"}, {"value", std::to_string(d.value("level", 0))}}}}};
      }
    }
  }
  if (mode == "data_missing") records.erase(records.begin() + 2);
  if (mode == "data_order") std::swap(records[1], records[2]);
  return records;
}

}  // namespace

// "flaky": "good" and "wrong_level" in turn, one per agent started, counted in the file that
// ETWH_SCRIPTED_AGENT_COUNTER names (for `etwh run --repeat`).
std::string flaky_mode() {
  const char* path = std::getenv("ETWH_SCRIPTED_AGENT_COUNTER");
  if (path == nullptr) return "good";
  long count = 0;
  std::ifstream(path) >> count;
  std::ofstream(path) << count + 1;
  return count % 2 == 0 ? "good" : "wrong_level";
}

int main() {
  const char* env = std::getenv("ETWH_SCRIPTED_AGENT_MODE");
  std::string mode = env ? env : "good";
  if (mode == "flaky") mode = flaky_mode();
  emit({{"event", "ready"}, {"pid", 0}, {"platform", "scripted"}});
  const bool data_mode = mode.rfind("data_", 0) == 0;
  std::vector<json> writes;
  std::string consumer_context = "0x0";
  std::string line;
  while (std::getline(std::cin, line)) {
    const json req = json::parse(line, nullptr, false);
    if (req.is_discarded()) return 3;
    const std::string op = req.value("op", "");
    json reply = {{"id", req.value("id", 0)}, {"ok", true}, {"status", 0}, {"handle", "0x1"}};
    if (op == "write") {
      writes.push_back(req);
      reply["failed"] = 0;
    }
    if (op == "query_enabled") {
      const bool on = req.value("level", 0) <= 3;
      reply = {{"id", req.value("id", 0)},
               {"ok", true},
               {"provider_enabled", on},
               {"event_enabled", on}};
    }
    if (op == "consume_start") {
      consumer_context = req.value("context", "0x0");
      reply["attached"] = true;
    }
    if (op == "consume_stop") {
      // The session was stopped: the provider's callback says so, as a platform's would.
      json cb = good_callback(2);
      cb["is_enabled"] = 0;
      cb["level"] = 0;
      cb["match_any"] = "0x0";
      emit(cb);
      reply = {{"id", req.value("id", 0)},
               {"ok", true},
               {"process_status", 0},
               {"returned_by_itself", true},
               {"records", delivered_records(mode, writes, consumer_context)}};
    }
    if (op == "register" && data_mode) {
      emit(good_callback(1));
    } else if (op == "register") {
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
      if (mode != "no_callback" && mode != "stopped") emit(cb);
      if (mode == "extra_callback") emit(good_callback(2));
    }
    emit(reply);
    if (op == "exit") return 0;
    // Stopped (as by SIGSTOP) once registered: its callback never comes, nor any reply.
    if (op == "register" && mode == "stopped") ::raise(SIGSTOP);
  }
  return 0;
}
