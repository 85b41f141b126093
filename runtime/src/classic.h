// etwrt: classic (MOF) providers, the RegisterTraceGuids family (seed 002, EVENT_TRACE_HEADER).
// A classic registration rides on an ordinary etwrt Registration whose enable callback turns
// notifications into ControlCallback requests (WMI_ENABLE_EVENTS / WMI_DISABLE_EVENTS); the
// broker knows it is classic and keeps at most one enabling session for its control GUID.
// TraceEvent and TraceMessage write into the logger's session through the EventWrite path.
#pragma once

#include "client.h"

#include <etwrt/dataplane.h>

#include <windows.h>
#include <evntrace.h>

#include <cstdint>
#include <span>
#include <vector>

namespace etwrt {

// EventWrite's per-thread writer for `pool` (api.cc): the event is copied into the session.
ULONG write_to_pool(SessionPool* pool, const dataplane::EventInput& in);

// What TraceEvent decided about a header, before any write: the status (ERROR_SUCCESS when
// the event may be written) and, when it may, the event's class GUID, descriptor and data.
struct ClassicEvent {
  ULONG status = ERROR_SUCCESS;
  GUID guid{};
  EVENT_DESCRIPTOR descriptor{};
  std::vector<EVENT_DATA_DESCRIPTOR> data;
};

// TraceEvent's checks of an EVENT_TRACE_HEADER against a session buffer of `buffer_bytes`:
// - Flags without WNODE_FLAG_TRACED_GUID: ERROR_INVALID_FLAG_NUMBER;
// - Size below sizeof(EVENT_TRACE_HEADER), GuidPtr 0 with USE_GUID_PTR, or with USE_MOF_PTR
//   a MOF_FIELD array that is not whole or longer than MAX_MOF_FIELDS: ERROR_INVALID_PARAMETER;
// - Size not below buffer_bytes - 72 (seed 002), or header plus MOF data that large:
//   ERROR_MORE_DATA.
// The descriptor: Id 0, Opcode = Class.Type, Level = Class.Level, Version = the low byte of
// Class.Version (EVENT_DESCRIPTOR.Version has one byte). Pure, for the unit tests.
ClassicEvent decode_trace_event(const EVENT_TRACE_HEADER& header, std::uint32_t buffer_bytes);

// TraceEvent's limit on Size: "less than the session's buffer size minus 72 (0x48)".
inline constexpr std::uint32_t kClassicBufferOverhead = 72;

}  // namespace etwrt
