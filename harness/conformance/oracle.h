// The oracle: what the documents say a conforming platform does, as pure functions. Aggregation
// of session enables (seed 000), per-session acceptance of an event (seed 004 and the
// EnableTraceEx2 page), the provider-side predicate, the traits blob format (seed 001), and a
// replay of a scenario case that yields, step by step, the statuses and callbacks to expect.
#pragma once

#include "harness/conformance/families/classic/classic_steps.h"
#include "harness/conformance/scenario.h"
#include "harness/conformance/families/data_path/event_def.h"

#include <windows.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace etwh::oracle {

// EVENT_ENABLE_PROPERTY_IGNORE_KEYWORD_0 (evntrace.h); some mingw-w64 headers lack the name.
inline constexpr std::uint32_t kEnablePropertyIgnoreKeyword0 = 0x10;

// One session's enable of one provider.
struct SessionEnable {
  std::uint8_t level = 0;
  std::uint64_t match_any = 0;
  std::uint64_t match_all = 0;
  std::uint32_t enable_property = 0;
};

// What the enable callback reports for a set of sessions (CB-LEVEL-MAX, CB-ANY-OR, CB-ALL-AND).
struct Aggregate {
  bool enabled = false;
  std::uint8_t level = 0;
  std::uint64_t match_any = 0;
  std::uint64_t match_all = 0;
  bool operator==(const Aggregate&) const = default;
};

// Level max, MatchAny OR, MatchAll AND over `sessions`; all zero (and !enabled) when empty.
Aggregate aggregate(std::span<const SessionEnable> sessions);

struct EventLevelKeyword {
  std::uint8_t level = 0;
  std::uint64_t keyword = 0;
};

// Whether a session takes an event: FLT-LEVEL (level 0 bypasses), FLT-KEYWORD,
// FLT-KEYWORD0-BYPASS, FLT-IGNORE-KEYWORD0, FLT-ANY-ZERO.
bool session_accepts(const SessionEnable& session, const EventLevelKeyword& event);

// True when at least one of `sessions` takes the event (FLT-PER-SESSION).
bool any_session_accepts(std::span<const SessionEnable> sessions, const EventLevelKeyword& event);

// PROV-EVENT-ENABLED, literally: Enabled && Level_e <= Level &&
// (Keyword_e == 0 || ((Keyword_e & Any) != 0 && (Keyword_e & All) == All)).
bool provider_event_enabled(const Aggregate& state, const EventLevelKeyword& event);

// TR-FORMAT: nullopt when `blob` is a well-formed traits blob, else why it is not.
std::optional<std::string> traits_blob_error(std::span<const std::uint8_t> blob);

// --- Replay of a case --------------------------------------------------------------------

enum class FilterExpect { kAbsent, kPresent, kUnjudged };

// One callback a registration must see. A rule string names the catalog rule that a mismatch
// of that field violates; an empty rule means the field is only recorded, not judged.
struct ExpectedCallback {
  std::string provider;  // label
  std::uint32_t is_enabled = 0;
  std::string is_enabled_rule;
  Aggregate values;           // level / any / all expected
  bool judge_values = false;  // level/any/all judged (rules CB-LEVEL-MAX, CB-ANY-OR, CB-ALL-AND)
  GUID source_id{};
  std::string source_rule;
  FilterExpect filter = FilterExpect::kUnjudged;
  std::string filter_rule;
  std::uint64_t context = 0;  // always judged (CB-CONTEXT)
  std::string cause;          // a short human description for messages
};

enum class TimingExpect {
  kNone,
  kReturnsBeforeCallbackEnds,  // Timeout 0 with a slow callback
  kReturnsAfterCallbackEnds,   // Timeout > 0 with a fast callback
};

// One event a consumer must receive. The driver numbers events in the order the oracle gives.
struct ExpectedEvent {
  std::uint64_t seq = 0;
  std::string provider;  // label
  EventDef def;
  bool traits = false;  // carries the provider's traits blob (TR-IN-EVENTS)
  // EVENT_DATA_DESCRIPTOR.Type was honoured when it was written (traits set, or
  // EventProviderUseDescriptorType TRUE): what def.typed becomes (TL-* rules).
  bool type_honoured = false;
  bool lossy = false;  // may be lost, if the loss is reported (CON-SLOW)
  std::string rule;    // the rule its delivery checks
  // EVENT_HEADER_FLAG_* bits the EVENT_RECORD must carry (classic: CLASSIC_HEADER or
  // TRACE_MESSAGE), and the rule their absence violates.
  std::uint16_t flags = 0;
  std::string flags_rule;
};

// Why an event written while the consumer existed (or before) is not its own.
struct Exclusion {
  std::string rule;
  std::string reason;
};

// What one consumer (as its consume step gave it) must have received when `collect` ends it.
struct ConsumerExpectation : ConsumerDef {
  std::vector<ExpectedEvent> events;            // in this order (seq order)
  std::map<std::uint64_t, Exclusion> excluded;  // seq -> why it must not arrive
  bool lossy = false;                           // some events may be lost, with exact accounting
  // The rule its events' delivery checks before any other: a consumer opened before its
  // session started (CON-OPEN-BEFORE-START), one whose EVENT_TRACE_LOGFILE was overwritten
  // (CON-LOGFILE-COPY), when the case is about it; else empty.
  std::string rule;
};

// read_file: what the log file of a file session must hold once the step stopped the session
// (families/trace_files/).
struct FileExpectation {
  std::string session;
  std::vector<std::uint64_t> written;  // the sequence numbers the session took, in write order
  std::uint32_t log_file_mode = 0;     // as given to StartTrace
  std::uint32_t maximum_file_size = 0;
  std::uint32_t buffer_size_kb = 0;  // 0: the platform's choice, not judged
  bool raw_timestamp = false;        // read a second time with PROCESS_TRACE_MODE_RAW_TIMESTAMP
  std::vector<std::string> rules;    // the rules its checks judge
};

struct StepExpectation {
  std::optional<std::uint32_t> status;      // exact status to expect
  bool status_nonzero = false;              // any failure status
  std::string status_rule;                  // the rule a wrong status violates ("" = setup)
  std::vector<ExpectedCallback> callbacks;  // in order, per provider label
  std::optional<bool> provider_enabled;     // query_enabled: EventProviderEnabled
  std::string provider_enabled_rule;
  TimingExpect timing = TimingExpect::kNone;
  // write: the first sequence number of each entry, and whether EventEnabled must say the
  // entry's descriptor is enabled (nullopt: not judged).
  std::vector<std::uint64_t> first_seq;
  std::vector<std::optional<bool>> event_enabled;
  std::string event_enabled_rule;
  // Per entry, the rule a wrong EventEnabled answer violates (event_enabled_rule when absent).
  std::vector<std::string> event_enabled_rules;
  // collect: the sessions to stop (in this order) and the consumers to judge.
  std::vector<std::string> collect_sessions;
  std::vector<ConsumerExpectation> consumers;
  // Classic providers (classic_steps.h): ControlCallbacks and trace steps.
  classic::StepExpectation classic;
  std::optional<FileExpectation> file;
};

// Replays the steps of `c` and returns one expectation per step. Pure: no I/O.
std::vector<StepExpectation> expect_case(const Case& c);

// The rules whose checks `e` places in its step (each non-empty rule field; CB-LEVEL-MAX,
// CB-ANY-OR and CB-ALL-AND for judged callback values; CB-CONTEXT for any callback). Rules
// checked outside the oracle's expectations are not in it.
std::set<std::string> rules_judged(const StepExpectation& e);

}  // namespace etwh::oracle
