// The ops of the classic providers family (harness/conformance/families/classic/classic_steps.h):
// register_classic, unregister_classic, trace_event, trace_message.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace etwh {

// The ops' names, as in scenario files (Step::op; the registrations are keyed by them).
namespace ops {
inline constexpr std::string_view kRegisterClassic = "register_classic";
inline constexpr std::string_view kUnregisterClassic = "unregister_classic";
inline constexpr std::string_view kTraceEvent = "trace_event";
inline constexpr std::string_view kTraceMessage = "trace_message";
}  // namespace ops

struct ClassicStep {
  std::string provider;
  // The agent request's fields, validated by classic::parse_step.
  nlohmann::json request = nlohmann::json::object();
};

}  // namespace etwh
