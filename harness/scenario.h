// The scenario model and its loader: conformance cases as data (scenarios/README.md describes
// the JSON format). Loading checks everything it can before anything runs, and reports bad
// input as InputError "<file>:<line>:<col>: <JSON pointer>: reason".
#pragma once

#include "input_error.h"

#include <windows.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace etwh {

struct ProviderDef {
  std::string label;
  std::string agent;
  GUID guid{};
  std::uint64_t context = 0;
  bool has_callback = true;  // false: EventRegister with a NULL callback
  std::uint32_t delay_ms = 0;
  // A provider under test (its agent is a subject): registered by the user's code, its GUID
  // is the subject's own (`guid` only stands in for it in the case).
  bool subject = false;
  std::uint32_t callback_budget_ms = 0;  // CB-FAST: each callback must be quicker (0: unjudged)
};

struct SessionDef {
  std::string label;
  // Extra StartTraceA settings, passed as-is to start_session (buffer_size_kb, ...).
  nlohmann::json settings = nlohmann::json::object();
};

struct FilterDef {
  std::uint32_t type = 0;
  std::vector<std::uint8_t> data;
};

enum class StepOp {
  kStart,
  kStop,
  kRegister,
  kUnregister,
  kEnable,
  kDisable,
  kCaptureState,
  kSetTraits,
  kQueryEnabled,
  kExitAgent,
  kKillAgent,
  kConsume,
  kWrite,
  kFlush,
  kCollect,
  kDisallow,
  kSubjectWrite,    // a provider under test writes its test (or state) events
  kInjectCallback,  // the subject's callback is called directly with chosen arguments
  // Classic providers (harness/classic_steps.h).
  kRegisterClassic,
  kUnregisterClassic,
  kTraceEvent,
  kTraceMessage,
};

// The name used in scenario files ("start", "enable", ...).
const char* step_op_name(StepOp op);

// A status the step must return, when the oracle cannot know it.
struct ExplicitStatus {
  bool nonzero = false;      // any failure status
  std::uint32_t value = 0;   // the exact status, when !nonzero
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
};

struct Step {
  StepOp op = StepOp::kStart;
  std::string pointer;  // JSON pointer of the step in its file, for messages
  std::string session;
  std::string provider;
  std::string agent;    // exit_agent / kill_agent
  std::string via;      // controller steps: run in this agent instead of the driver
  // enable, disable, capture_state
  std::uint8_t level = 0;
  std::uint64_t match_any = 0;
  std::uint64_t match_all = 0;
  std::optional<GUID> source_id;
  std::uint32_t enable_property = 0;
  std::vector<FilterDef> filters;
  bool has_parameters = false;       // ENABLE_TRACE_PARAMETERS given (else NULL)
  std::string api = "EnableTraceEx2";
  std::uint32_t timeout_ms = 0;
  // set_traits: either structured (built into a blob by the driver) or a raw blob
  bool traits_raw = false;
  std::vector<std::uint8_t> traits_blob;  // raw form, possibly malformed on purpose
  std::string traits_name;                // structured form
  std::optional<GUID> traits_group;
  std::vector<FilterDef> traits_custom;   // {type, data} of each custom trait
  // query_enabled
  std::uint64_t keyword = 0;
  // consume: a realtime consumer `consumer` of `session` in `agent`
  std::string consumer;
  bool event_record_mode = true;     // "event_record" (EVENT_RECORD) or "event_trace" (classic)
  std::uint64_t context = 0;         // EVENT_TRACE_LOGFILE.Context
  std::uint32_t delay_us = 0;        // the consumer's callback spins this long per record
  // write: the event set of `provider`
  std::vector<EventDef> events;
  bool lossy = false;                // loss is expected (CON-SLOW): judged by exact accounting
  std::optional<ExplicitStatus> expect_status;
  // enable / disable / capture_state of a provider group (EVENT_ENABLE_PROPERTY_PROVIDER_GROUP)
  // instead of `provider`; disallow: the providers of TraceSetDisallowList (labels).
  std::optional<GUID> group;
  std::vector<std::string> disallow;
  // register_classic, unregister_classic, trace_event, trace_message: the agent request's
  // fields, validated by classic::parse_step.
  nlohmann::json classic = nlohmann::json::object();
  // subject_write: its state events instead of its test events; inject_callback: IsEnabled
  // (Level and keywords in level / match_any / match_all).
  bool state_events = false;
  std::uint32_t is_enabled = 0;
};

struct Case {
  std::string id;
  std::string file;
  std::string pointer;
  std::vector<std::string> rules;
  std::string description;
  std::vector<std::string> agents;  // labels, in file order
  std::set<std::string> subject_agents;  // agents that run the provider under test
  std::map<std::string, ProviderDef> providers;
  std::map<std::string, SessionDef> sessions;
  std::vector<Step> steps;
  // Lint rules that must fire on this case's steps, and no other (harness/lint.h); unset: lint
  // findings do not judge the case.
  std::optional<std::vector<std::string>> expect_lint;
};

// Loads one scenario file. `known_rules` is the catalog's ID set. Throws InputError.
std::vector<Case> load_scenario_file(const std::filesystem::path& file,
                                     const std::set<std::string>& known_rules);

// Same, from text already in memory (`file` only names it in messages).
std::vector<Case> load_scenario_text(const std::string& text, const std::string& file,
                                     const std::set<std::string>& known_rules);

// Loads several files (directories expand to their *.json, sorted) and rejects a case id used
// twice across them. Throws InputError on the first problem.
std::vector<Case> load_scenarios(const std::vector<std::filesystem::path>& paths,
                                 const std::set<std::string>& known_rules);

}  // namespace etwh
