// A recording stand-in for the Win32 ETW API, linked only into tests of providers/: it keeps
// the arguments of every controller call (a copy of the EVENT_TRACE_PROPERTIES bytes, the
// ENABLE_TRACE_PARAMETERS and filter bytes) so that tests can check exactly what win32_ops and
// the agent hand to Win32, with or without a real runtime. Its provider side delivers an
// EnableTraceEx2 / EnableTraceEx call straight to the callbacks of the matching registrations
// of this process, with the arguments as given: no aggregation, no conformance of any kind.
#pragma once

#include <windows.h>
#include <evntrace.h>

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace etwh::fake_etw {

struct StartCall {
  bool handle_null = false;
  std::optional<std::string> name;       // nullopt: InstanceName was NULL
  std::vector<std::uint8_t> properties;  // Wnode.BufferSize bytes; empty: Properties was NULL
};

struct ControlCall {
  TRACEHANDLE handle = 0;
  std::optional<std::string> name;
  ULONG code = 0;
  std::vector<std::uint8_t> properties;
};

struct Filter {
  ULONG type = 0;
  std::vector<std::uint8_t> data;
};

struct EnableCall {
  std::string api;
  TRACEHANDLE handle = 0;
  GUID provider{};
  ULONG control_code = 0;
  UCHAR level = 0;
  ULONGLONG match_any = 0;
  ULONGLONG match_all = 0;
  ULONG timeout = 0;
  bool has_parameters = false;
  ENABLE_TRACE_PARAMETERS parameters{};  // EnableFilterDesc points nowhere after the call
  std::optional<GUID> source_id;         // EnableTraceEx's SourceId; nullopt when NULL
  ULONG enable_property = 0;             // EnableTraceEx's EnableProperty
  std::vector<Filter> filters;
};

struct Log {
  std::vector<StartCall> starts;
  std::vector<ControlCall> controls;
  std::vector<EnableCall> enables;
  // What ControlTraceA writes into the counters it reports.
  ULONG control_fill = 0;
};

// The shared log; lock `mutex()` around reads when a callback may run concurrently.
Log& log();
std::mutex& mutex();
void reset();

}  // namespace etwh::fake_etw
