// Classic (MOF) providers in scenarios: the steps register_classic, unregister_classic,
// trace_event and trace_message (scenarios/README.md), what the documents say they must give
// (seed 002 and the EnableTraceEx2 page: one enabling session at a time, ControlCallback
// level and flags, TraceEvent's header checks, identity in Opcode, WPP marking), and the
// driver's part: the agent requests and the check of "classic_callback" events.
#pragma once

#include "harness/model/result.h"
#include "harness/conformance/families/classic/classic_ops.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace etwh {

struct Case;
struct Step;
class AgentProcess;

namespace oracle {
struct StepExpectation;
}

namespace classic {

// One ControlCallback a classic registration must see.
struct ExpectedControl {
  std::string provider;     // label
  std::uint32_t code = 0;   // WMI_ENABLE_EVENTS (4) or WMI_DISABLE_EVENTS (5)
  std::uint8_t level = 0;   // judged for ENABLE (GetTraceEnableLevel)
  std::uint32_t flags = 0;  // judged for ENABLE (GetTraceEnableFlags)
  std::string session;      // the session whose logger handle it carries
  std::string cause;
  // An enable by a session while another had the provider: its level and flags being the new
  // session's own is what SES-CLASSIC-ONE's takeover says (HDR-CLASSIC-LEVEL otherwise).
  bool takeover = false;
};

// The classic part of one step's expectation.
struct StepExpectation {
  std::vector<ExpectedControl> callbacks;
  std::uint64_t first_seq = 0;  // trace_event / trace_message: the first sequence number
  std::uint64_t skipped = 0;    // trace_event with only_enabled: events the provider skips
};

// Classic events are numbered from here, in step order, apart from `write` events.
inline constexpr std::uint64_t kFirstSequence = std::uint64_t{1} << 32;

// Whether `op` (a scenario op name) is a classic step.
bool is_classic_op(const std::string& op);

// Validates a classic step's JSON `v` at `pointer` of `file` and sets `s.body` to its
// ClassicStep (families/classic/classic_ops.h: the provider and the request fields for the agent).
// `providers` are the case's labels. Throws InputError.
void parse_step(const nlohmann::json& v, const std::string& file, const std::string& pointer,
                const std::set<std::string>& providers, Step& s);

// Adds to `out` (one per step of `c`, from the main oracle) what classic providers must do:
// statuses of classic steps, ControlCallbacks after every step, and the consumers' classic
// events at each collect. Pure.
void expect(const Case& c, std::vector<oracle::StepExpectation>& out);

// What the driver lends the classic part.
struct DriverHooks {
  std::function<AgentProcess&(const std::string& agent)> agent;
  std::function<void(Finding failed)> fail;
  std::function<void(const std::string& what)> note;
  // How long to wait for expected ControlCallbacks, and telling the driver some never came
  // (it then shortens later waits of the case).
  std::function<std::chrono::milliseconds()> callback_wait;
  std::function<void()> callback_missed;
};

// The driver's state for classic providers during one case.
class Run {
 public:
  // Sends a classic step to its agent; returns the reply (the caller checks its status).
  nlohmann::json run_step(const Case& c, const Step& step, const oracle::StepExpectation& e,
                          const DriverHooks& hooks);
  // Waits for the ControlCallbacks `e` expects and compares them (SES-CLASSIC-ONE,
  // HDR-CLASSIC-LEVEL); any other classic callback that arrived is reported.
  void check_callbacks(const Case& c, const oracle::StepExpectation& e, const DriverHooks& hooks);

 private:
  // One ControlCallback `ev` of provider `label` against the expected `w`.
  void compare(const std::string& label, const ExpectedControl& w, const nlohmann::json& ev,
               const DriverHooks& hooks);

  std::map<std::string, std::size_t> consumed_;  // provider -> classic callbacks matched
  // provider -> session -> the logger handle its callbacks carried (hex)
  std::map<std::string, std::map<std::string, std::string>> loggers_;
};

}  // namespace classic
}  // namespace etwh
