// Test support: an EVENT_TRACE_PROPERTIES buffer for a realtime session, with room for the
// session name after it (where StartTrace/ControlTrace write it back).
#pragma once

#include <windows.h>
#include <evntrace.h>

#include <cstddef>
#include <string>
#include <vector>

namespace etwrt::testing {

struct TraceProperties {
  explicit TraceProperties(std::size_t name_room = 1024)
      : bytes(sizeof(EVENT_TRACE_PROPERTIES) + name_room) {
    get()->Wnode.BufferSize = static_cast<ULONG>(bytes.size());
    get()->Wnode.Flags = WNODE_FLAG_TRACED_GUID;
    get()->LoggerNameOffset = sizeof(EVENT_TRACE_PROPERTIES);
    get()->LogFileMode = EVENT_TRACE_REAL_TIME_MODE;
  }
  EVENT_TRACE_PROPERTIES* get() { return reinterpret_cast<EVENT_TRACE_PROPERTIES*>(bytes.data()); }
  std::string logger_name() { return bytes.data() + get()->LoggerNameOffset; }
  std::vector<char> bytes;
};

}  // namespace etwrt::testing
