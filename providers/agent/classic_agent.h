// The agent's classic (MOF) providers (providers/PROTOCOL.md, "Classic providers"): a real
// ControlCallback per registration that keeps the logger handle, level and flags it reads with
// GetTraceLoggerHandle / GetTraceEnableLevel / GetTraceEnableFlags and reports each request
// as a "classic_callback" event; TraceEvent and TraceMessage on command.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace etwh::agent {

class LineWriter;
struct ClassicState;

class ClassicProviders {
 public:
  explicit ClassicProviders(LineWriter& out);
  ~ClassicProviders();

  // True when `op` is one of the classic ops; `reply` then holds the reply fields.
  bool handle(const std::string& op, const nlohmann::json& request, nlohmann::json& reply);

 private:
  nlohmann::json do_register(const nlohmann::json& request);
  nlohmann::json do_unregister(const nlohmann::json& request);
  nlohmann::json do_trace_event(const nlohmann::json& request);
  nlohmann::json do_trace_message(const nlohmann::json& request);
  ClassicState& state(const std::string& label);

  LineWriter& out_;
  // States live until the process ends: a late ControlCallback must still find its own.
  std::map<std::string, std::unique_ptr<ClassicState>> states_;
  std::vector<std::unique_ptr<ClassicState>> retired_;  // of labels registered again
};

}  // namespace etwh::agent
