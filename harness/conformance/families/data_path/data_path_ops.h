// The ops of the data path and consumers family (scenarios/README.md): consume, write, collect,
// last_error.
#pragma once

#include "harness/conformance/families/data_path/event_def.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace etwh {

// The ops' names, as in scenario files (Step::op; the registrations are keyed by them).
namespace ops {
inline constexpr std::string_view kConsume = "consume";
inline constexpr std::string_view kWrite = "write";
inline constexpr std::string_view kCollect = "collect";
inline constexpr std::string_view kLastError = "last_error";
}  // namespace ops

// consume: a realtime consumer `consumer` of `session` in `agent` (ConsumerDef, event_def.h).
struct ConsumeStep : ConsumerDef {
  // An instrumentation manifest (absolute path) the consumer loads with TdhLoadManifest to
  // decode the events of its provider; empty: TraceLogging events only are decoded.
  std::string manifest;
};

// last_error: in `agent`, SetLastError(ERROR_SUCCESS), then a call of `api` that must fail
// (OpenTrace of a NULL Logfile; GetTraceLoggerHandle, GetTraceEnableLevel or GetTraceEnableFlags
// of a handle of no session), then GetLastError.
struct LastErrorStep {
  std::string api;
  std::string agent;
};

// write: the event set of `provider`.
struct WriteStep {
  std::string provider;
  std::vector<EventDef> events;
  bool lossy = false;  // loss is expected (CON-SLOW): judged by exact accounting
  // EventSetInformation(EventProviderUseDescriptorType) with this value before the writes.
  std::optional<bool> use_descriptor_type;
};

// collect: no arguments.
struct CollectStep {};

}  // namespace etwh
