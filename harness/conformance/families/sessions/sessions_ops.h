// The ops of the sessions, enables and callbacks family, as the scenario loader gives them
// (scenarios/README.md): start, stop, flush, enable, disable, capture_state.
#pragma once

#include "harness/conformance/families/sessions/filter_def.h"

#include <windows.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace etwh {

// The ops' names, as in scenario files (Step::op; the registrations are keyed by them).
namespace ops {
inline constexpr std::string_view kStart = "start";
inline constexpr std::string_view kStop = "stop";
inline constexpr std::string_view kEnable = "enable";
inline constexpr std::string_view kDisable = "disable";
inline constexpr std::string_view kCaptureState = "capture_state";
inline constexpr std::string_view kFlush = "flush";
}  // namespace ops

// start, stop, flush: one session.
struct SessionStep {
  std::string session;
};

// enable, disable, capture_state: the controller call's arguments.
struct ControlStep {
  std::string session;
  std::string provider;       // empty when `group` is given
  std::optional<GUID> group;  // a provider group (EVENT_ENABLE_PROPERTY_PROVIDER_GROUP)
  std::uint8_t level = 0;
  std::uint64_t match_any = 0;
  std::uint64_t match_all = 0;
  std::optional<GUID> source_id;
  std::uint32_t enable_property = 0;
  std::vector<FilterDef> filters;
  bool has_parameters = false;  // ENABLE_TRACE_PARAMETERS given (else NULL)
  std::string api = "EnableTraceEx2";
  std::uint32_t timeout_ms = 0;
};

}  // namespace etwh
