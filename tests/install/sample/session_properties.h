// The samples' realtime session: an EVENT_TRACE_PROPERTIES with room for the session name after
// it (StartTrace writes the name back there), zero-filled as the StartTrace page asks.
#pragma once

#include <windows.h>
#include <evntrace.h>

#include <vector>

struct Properties {
  // client_context: Wnode.ClientContext, the session's clock (0, the default, is QPC).
  explicit Properties(ULONG client_context = 0) : bytes(sizeof(EVENT_TRACE_PROPERTIES) + 256, 0) {
    auto* p = get();
    p->Wnode.BufferSize = static_cast<ULONG>(bytes.size());
    p->Wnode.Flags = WNODE_FLAG_TRACED_GUID;
    p->Wnode.ClientContext = client_context;
    p->LogFileMode = EVENT_TRACE_REAL_TIME_MODE;
    p->LoggerNameOffset = sizeof(EVENT_TRACE_PROPERTIES);
  }
  EVENT_TRACE_PROPERTIES* get() { return reinterpret_cast<EVENT_TRACE_PROPERTIES*>(bytes.data()); }
  std::vector<char> bytes;
};
