// Win32 ETW calls driven by JSON: the controller operations (StartTraceA, EnableTraceEx2 /
// EnableTraceEx / EnableTrace, ControlTraceA) with the same request and reply fields as the
// agent protocol (providers/PROTOCOL.md), so that the driver can run them in-process and the
// agent in a child process, with one implementation. Also builds provider-traits blobs.
#pragma once

#include <windows.h>
#include <evntprov.h>
#include <evntrace.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace etwh {

// A request whose fields are missing or of the wrong type. Never a platform result.
class BadRequest : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class RequestFields;

// Sessions started through one Controller, by label, so that later requests can name them.
class Controller {
 public:
  // op "start_session": returns {"status", "handle"}.
  nlohmann::json start_session(const nlohmann::json& request);
  // op "enable": returns {"status"}.
  nlohmann::json enable(const nlohmann::json& request);
  // op "control": returns {"status", "properties"}.
  nlohmann::json control(const nlohmann::json& request);

  // The handle of a session this controller started (nullopt if unknown label).
  std::optional<TRACEHANDLE> handle_of(const std::string& label) const;

 private:
  struct Session {
    std::string name;
    TRACEHANDLE handle;
  };
  // The session a request names: its label's handle (the request fails if none was started
  // here), else its explicit handle, else 0.
  TRACEHANDLE requested_handle(const RequestFields& f, const std::optional<std::string>& label,
                               std::optional<std::uint64_t> explicit_handle) const;

  std::map<std::string, Session> sessions_;
};

// One provider trait: {type, data bytes}.
struct Trait {
  std::uint8_t type;
  std::vector<std::uint8_t> data;
};

// The EventProviderSetTraits blob of seed 001: UINT16 total size, NUL-terminated UTF-8 name,
// then each trait as {UINT16 size, UINT8 type, data}. Throws BadRequest when it cannot fit
// in 65535 bytes.
std::vector<std::uint8_t> build_traits_blob(const std::string& provider_name,
                                            const std::vector<Trait>& traits);

// A group trait (type 1, EtwProviderTraitTypeGroup) carrying the group GUID.
Trait group_trait(const GUID& group);

}  // namespace etwh
