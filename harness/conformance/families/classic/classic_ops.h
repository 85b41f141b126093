// The ops of the classic providers family (harness/conformance/families/classic/classic_steps.h):
// register_classic, unregister_classic, trace_event, trace_message.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <string>
#include <string_view>

namespace etwh {

// The ops' names, as in scenario files (Step::op; the registrations are keyed by them).
namespace ops {
inline constexpr std::string_view kRegisterClassic = "register_classic";
inline constexpr std::string_view kUnregisterClassic = "unregister_classic";
inline constexpr std::string_view kTraceEvent = "trace_event";
inline constexpr std::string_view kTraceMessage = "trace_message";
// Every op of the family: one parser and one runner serve them all.
inline constexpr std::array<std::string_view, 4> kClassicOps = {
    kRegisterClassic, kUnregisterClassic, kTraceEvent, kTraceMessage};
}  // namespace ops

struct ClassicStep {
  std::string provider;
  // The agent request's fields, validated by classic::parse_step.
  nlohmann::json request = nlohmann::json::object();
};

}  // namespace etwh
