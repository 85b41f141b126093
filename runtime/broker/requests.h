// etwrt-broker: the requests a peer may send, as typed values, and their decoding from a frame's
// JSON. Decoding checks the whole shape before anything uses it (the body is an object, `op` a
// string, each field the op reads present with its type and range), so a malformed frame gets
// an error reply naming the field and the broker state is never touched by it.
#pragma once

#include "enable_filters.h"

#include <windows.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace etwrt::broker {

struct HelloRequest {};

// EventRegister / RegisterTraceGuidsA (`classic`).
struct RegisterRequest {
  std::uint64_t token = 0;
  GUID guid{};
  bool classic = false;
};

struct UnregisterRequest {
  std::uint64_t token = 0;
};

// EventSetInformation(EventProviderSetTraits): the parsed name and the group trait, if any.
struct SetTraitsRequest {
  std::uint64_t token = 0;
  std::string name;
  std::optional<GUID> group;
};

// A session's settings as StartTraceA gives them (EVENT_TRACE_PROPERTIES); the broker's Session
// keeps them, its buffers clamped (plan_buffers) and clock 0 made 1.
struct SessionSettings {
  std::string name;
  GUID guid{};
  std::string log_file;
  ULONG buffer_size_kb = 0;
  ULONG minimum_buffers = 0;
  ULONG maximum_buffers = 0;
  ULONG maximum_file_size = 0;
  ULONG log_file_mode = 0;
  ULONG flush_timer = 0;
  ULONG enable_flags = 0;
  ULONG client_context = 0;  // Wnode.ClientContext, the clock: 1 QPC (also 0), 2 system, 3 cycles.
};

// StartTraceA, with the caller's EVENT_TRACE_PROPERTIES fields (not yet clamped).
struct StartRequest : SessionSettings {};

// ControlTraceA: the session by handle, else (handle 0) by name. The UPDATE fields are 0 when
// absent (0 means "keep").
struct ControlRequest {
  std::uint64_t handle = 0;
  std::string name;
  ULONG code = 0;
  ULONG flush_timer = 0;
  ULONG maximum_buffers = 0;
  ULONG enable_flags = 0;
  ULONG log_file_mode = 0;
  std::string log_file;  // UPDATE: the log file to switch to (absolute); empty: none
};

// EnableTraceEx2. `source` is empty when the caller gave no EnableParameters.
struct EnableRequest {
  std::uint64_t handle = 0;
  GUID provider{};
  std::optional<GUID> source;
  ULONG code = 0;
  UCHAR level = 0;
  std::uint64_t any = 0;
  std::uint64_t all = 0;
  bool wait = false;
  ULONG property = 0;
  std::optional<FilterBlob> provider_filter;
  std::vector<FilterBlob> system_filters;
};

// TraceSetInformation(TraceSetDisallowList).
struct DisallowRequest {
  std::uint64_t handle = 0;
  std::vector<GUID> guids;
};

// QueryAllTracesA: every session but private ones, in the order they started.
struct EnumerateRequest {};

// EnumerateTraceGuidsEx: without a GUID the providers' GUIDs (TraceGuidQueryList, or with
// `this_process` those the asking process registered: TraceGuidQueryProcess), with one that
// provider's instances and the sessions enabling it (TraceGuidQueryInfo).
struct ProvidersRequest {
  std::optional<GUID> guid;
  bool this_process = false;
};

// TraceQueryInformation (and EnumerateTraceGuidsEx's TraceMaxLoggersQuery): what the broker
// keeps of a session that a controller may read back, and the session limit.
struct SessionInfoRequest {
  std::uint64_t handle = 0;
};

// OpenTraceA: the realtime session by name.
struct OpenRequest {
  std::string name;
};

// The acknowledgement of a notification that carried a wait id (callbacks done).
struct AckRequest {
  std::uint64_t wait = 0;
};

using RequestBody =
    std::variant<HelloRequest, RegisterRequest, UnregisterRequest, SetTraitsRequest, StartRequest,
                 ControlRequest, EnableRequest, DisallowRequest, EnumerateRequest, OpenRequest,
                 AckRequest, ProvidersRequest, SessionInfoRequest>;

struct Request {
  nlohmann::json id;  // Echoed in the reply, whatever it is (null when absent).
  RequestBody body;
};

// A frame that is not a request the broker can act on.
struct DecodeError {
  nlohmann::json id;                       // The frame's id when it had one, else null.
  ULONG status = ERROR_INVALID_PARAMETER;  // ERROR_NOT_SUPPORTED for an unknown op.
  std::string reason;                      // "<op>: /<field>: <what is wrong>".
};

using Decoded = std::variant<Request, DecodeError>;

// Decodes one frame body. Never throws for any JSON value.
//   Decoded d = decode_request(nlohmann::json::parse(R"({"op":"hello","id":1})"));
//   std::get<Request>(d).body holds a HelloRequest.
Decoded decode_request(const nlohmann::json& frame);

}  // namespace etwrt::broker
