// The driver's side of the provider agent: spawns `etwh-agent` as a child process
// (etwh::ChildProcess: it dies with the driver and holds no other agent's pipes), sends
// JSON-line requests (providers/PROTOCOL.md), matches replies by id, and collects the agent's
// asynchronous events (enable callbacks) as they arrive.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace etwh {

// Why talking to an agent failed. None of these is a platform verdict: the driver maps
// kTimeout to TIMEOUT, kCrashed to CRASH and kProtocol/kSpawn to HARNESS_ERROR.
class AgentError : public std::runtime_error {
 public:
  enum class Kind { kSpawn, kTimeout, kCrashed, kProtocol };
  AgentError(Kind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

// How the agent process ended, once it has.
struct AgentExit {
  int exit_code = 0;      // valid when !signaled
  bool signaled = false;  // killed by a signal (Linux) / abnormal termination (Windows)
  int signal = 0;
};

class AgentProcess {
 public:
  // Starts `exe` with `args`, the current environment plus `env` (which overrides), and waits
  // for its "ready" event. `name` labels the agent in error messages.
  // Throws AgentError(kSpawn) if it cannot start or is not ready within `ready_timeout`.
  static std::unique_ptr<AgentProcess> spawn(
      const std::filesystem::path& exe, const std::string& name,
      const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
      std::chrono::milliseconds ready_timeout = std::chrono::seconds(10));

  // Ends the agent: asks it to exit, then kills it if it has not after a short grace period.
  ~AgentProcess();

  AgentProcess(const AgentProcess&) = delete;
  AgentProcess& operator=(const AgentProcess&) = delete;

  const std::string& name() const;
  int pid() const;

  // Sends `request` (an object with "op"; "id" is added) and returns the reply object.
  // Throws AgentError: kTimeout when no reply within `timeout`, kCrashed when the agent
  // died first (with its exit status in the message), kProtocol when the reply has
  // "ok": false (the message carries the agent's "error"). Throws etwh::StopRequested when
  // SIGINT/SIGTERM asked the driver to stop meanwhile (etwh/stop_signals.h).
  nlohmann::json call(nlohmann::json request, std::chrono::milliseconds timeout);

  // Sends a request without waiting for a reply (for "crash" and "exit").
  void send(nlohmann::json request);

  // The asynchronous events received so far (objects with "event"), in arrival order; the
  // first is the agent's "ready".
  std::vector<nlohmann::json> events() const;

  // Waits until at least `count` events whose "event" field equals `kind` have arrived, or the
  // timeout passes, or the agent dies. Returns true when the count was reached. Throws
  // etwh::StopRequested when a stop was requested meanwhile.
  bool wait_for_events(const std::string& kind, std::size_t count,
                       std::chrono::milliseconds timeout);

  // Waits for the process to end (up to `timeout`); nullopt if it is still running.
  std::optional<AgentExit> wait_exit(std::chrono::milliseconds timeout);

  // Whatever the agent wrote to stderr so far (for diagnostics in results).
  std::string stderr_text() const;

  // Kills the process now (SIGKILL / TerminateProcess).
  void kill();

 private:
  struct Impl;
  explicit AgentProcess(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace etwh
