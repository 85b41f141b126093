// Fuzz target: the provider agent's request handling (Agent::handle_line: the JSON line, the
// dispatch on "op" and every op's fields through RequestFields), over the recording fake of
// the Win32 API (providers/testing/fake_etw), so that no session or broker is touched. The
// input is a sequence of request lines, handled in order by one agent as the driver would send
// them. Bad input must get a reply {"ok": false, "error": "<field>: reason"}; a reply marked
// "internal": true (an exception other than BadRequest) is a finding.
#include "fuzz_target.h"

#include "agent.h"
#include "fake_etw.h"

#include <cstdio>
#include <sstream>

namespace {

using nlohmann::json;

// Requests that wait on purpose (sleep, a callback's delay) or loop a billion times (write's
// count) would only time the fuzzer out: they are not handed to the agent.
bool waits_on_purpose(const json& request) {
  if (!request.is_object()) return false;
  if (request.contains("behavior")) return true;
  if (auto op = request.find("op"); op != request.end() && *op == "sleep") return true;
  auto count = request.find("count");
  return count != request.end() && count->is_number() && *count > 1000;
}

// Every label the input registered, so that they can be unregistered before the agent goes:
// callback slots are process-wide (agent.cc), and must not point into a destroyed agent.
std::vector<std::string> registered_labels(const std::vector<json>& requests) {
  std::vector<std::string> labels;
  for (const json& r : requests) {
    if (r.is_object() && r.value("op", json()) == "register" && r.contains("provider") &&
        r["provider"].is_string()) {
      labels.push_back(r["provider"]);
    }
  }
  return labels;
}

void check_replies(const std::string& output) {
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    const json reply = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (reply.is_discarded()) etwh::fuzz::finding("the agent wrote a line that is not JSON");
    if (!reply.is_object() || reply.value("internal", json()) != true) continue;
    etwh::fuzz::finding("the agent hit an internal error: " + reply.value("error", json()).dump());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream input(etwh::fuzz::as_text(data, size));
  std::vector<std::string> lines;
  std::vector<json> requests;
  for (std::string line; std::getline(input, line);) {
    json request = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (waits_on_purpose(request)) continue;
    lines.push_back(std::move(line));
    requests.push_back(std::move(request));
  }
  char* output = nullptr;
  std::size_t output_size = 0;
  std::FILE* stream = open_memstream(&output, &output_size);
  if (stream == nullptr) etwh::fuzz::finding("open_memstream failed");
  {
    etwh::agent::LineWriter out(stream);
    etwh::agent::Agent agent(out);
    int exit_code = 0;
    for (const std::string& line : lines) {
      // "exit" and "crash" end the agent's loop (agent_loop.cc), not handle_line.
      if (agent.handle_line(line, exit_code) != etwh::agent::Agent::Next::kContinue) break;
    }
    for (const std::string& label : registered_labels(requests)) {
      agent.handle_line(json{{"id", 0}, {"op", "unregister"}, {"provider", label}}.dump(),
                        exit_code);
    }
  }
  std::fclose(stream);
  const std::string text(output, output_size);
  std::free(output);
  etwh::fake_etw::reset();
  check_replies(text);
  return 0;
}
