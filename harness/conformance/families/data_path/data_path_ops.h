// The ops of the data path and consumers family (scenarios/README.md): consume, write, collect,
// last_error.
#pragma once

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

// An EVENT_DATA_DESCRIPTOR with a Type (EVENT_DATA_DESCRIPTOR page), written after the payload.
struct TypedData {
  std::uint8_t type = 0;  // 1 event metadata (TraceLogging), 2 provider metadata (traits)
  std::vector<std::uint8_t> data;
};

// One entry of a write step's event set: a descriptor, written `count` times in a row.
struct EventDef {
  std::uint16_t id = 0;
  std::uint8_t version = 0;
  std::uint8_t channel = 0;
  std::uint8_t level = 0;
  std::uint8_t opcode = 0;
  std::uint16_t task = 0;
  std::uint64_t keyword = 0;
  std::uint32_t count = 1;
  std::vector<std::uint8_t> payload;  // after the 8-byte sequence number the driver prepends
  std::vector<TypedData> typed;       // descriptors with a Type, after the payload's
};

// consume: a realtime consumer `consumer` of `session` in `agent`.
struct ConsumeStep {
  std::string consumer;
  std::string session;
  std::string agent;
  bool event_record_mode = true;  // "event_record" (EVENT_RECORD) or "event_trace" (classic)
  std::uint64_t context = 0;      // EVENT_TRACE_LOGFILE.Context
  std::uint32_t delay_us = 0;     // the consumer's callback spins this long per record
  // An instrumentation manifest (absolute path) the consumer loads with TdhLoadManifest to
  // decode the events of its provider; empty: TraceLogging events only are decoded.
  std::string manifest;
  // OpenTrace's EVENT_TRACE_LOGFILE is overwritten (decoy callbacks, another session's name)
  // after OpenTrace returns and before ProcessTrace (CON-LOGFILE-COPY).
  bool overwrite_logfile = false;
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
