// The provider agent's request handling (providers/PROTOCOL.md): a registry of provider
// registrations by label, each with a real PENABLECALLBACK that records its every invocation
// and reports it as a "callback" event line, plus the controller operations of win32_ops.
// Requests come from one thread; callbacks come from whatever threads the platform uses.
#pragma once

#include "classic_agent.h"
#include "consumer.h"
#include "win32_ops.h"

#include <windows.h>
#include <evntprov.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace etwh::agent {

// Serializes whole lines onto a stream shared by the request thread and callback threads, and
// flushes each one, so the driver sees every line as soon as it is complete.
class LineWriter {
 public:
  explicit LineWriter(std::FILE* stream) : stream_(stream) {}
  void write(const nlohmann::json& line);

 private:
  std::mutex mutex_;
  std::FILE* stream_;
};

// What a registration's callback needs; lives until the process ends, so that a late callback
// (a platform bug the driver should see) still finds it.
struct CallbackState {
  std::string label;
  std::uint32_t delay_ms = 0;
  std::atomic<std::uint64_t> invocations{0};
  LineWriter* out = nullptr;
};

// Extra ops that a program built on the agent adds (providers/adapter/: a provider under
// test). Consulted before the built-in ops, on the request thread.
class AgentExtension {
 public:
  virtual ~AgentExtension() = default;
  // The reply fields of `op`, or nullopt when `op` is not one of the extension's. Throws
  // BadRequest for a malformed request, as the built-in ops do.
  virtual std::optional<nlohmann::json> handle(const std::string& op,
                                               const nlohmann::json& request) = 0;
};

class Agent {
 public:
  // `out` receives replies and events, and must outlive every callback (the process).
  explicit Agent(LineWriter& out);

  // What the request loop should do after a request was handled.
  enum class Next { kContinue, kExit, kCrash };

  // Handles one request line: writes its reply (if the op has one) and says what comes next.
  // `exit_code` receives the code of an "exit" request.
  Next handle_line(const std::string& line, int& exit_code);

  // Adds `extension`'s ops; it must outlive the agent.
  void set_extension(AgentExtension* extension) { extension_ = extension; }

 private:
  struct Registration {
    REGHANDLE handle = 0;
    int slot = -1;  // callback slot, -1 for a NULL callback
    CallbackState* state = nullptr;
  };

  nlohmann::json dispatch(const std::string& op, const nlohmann::json& request, Next& next,
                          int& exit_code);
  nlohmann::json do_register(const nlohmann::json& request);
  nlohmann::json do_unregister(const nlohmann::json& request);
  nlohmann::json do_set_information(const nlohmann::json& request);
  nlohmann::json do_query_enabled(const nlohmann::json& request);
  nlohmann::json do_write(const nlohmann::json& request);
  nlohmann::json do_consume_start(const nlohmann::json& request);
  nlohmann::json do_consume_stop(const nlohmann::json& request);
  nlohmann::json do_consume_process(const nlohmann::json& request);
  // The consumer a request's "consumer" names, and its "wait_ms" (default 5 s).
  std::map<std::string, std::unique_ptr<Consumer>>::iterator named_consumer(
      const nlohmann::json& request, std::chrono::milliseconds& wait);
  Registration& registration(const std::string& label);

  LineWriter& out_;
  Controller controller_;
  std::map<std::string, Registration> registrations_;
  std::vector<std::unique_ptr<CallbackState>> states_;
  std::map<std::string, std::unique_ptr<Consumer>> consumers_;  // by label
  ClassicProviders classic_{out_};  // register_classic, trace_event, ...
  AgentExtension* extension_ = nullptr;
};

// Prints "ready", then handles request lines from stdin until "exit", "crash" or the end of
// input (the driver is gone: do not linger). Never returns.
[[noreturn]] void run_agent_loop(Agent& agent, LineWriter& out);

}  // namespace etwh::agent
