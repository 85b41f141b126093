// `etwh observe`'s verdicts, from the records the observed program's libetwrt sent (pure: no
// platform call). One CaseResult per provider that registered: each EventWrite* judged against
// what the provider's last completed enable callback told it (PROV-RECORD after a DISABLE,
// PROV-EVENT-ENABLED otherwise) and against the sessions (the record's `wanted`); callbacks
// (CB-FAST: duration, session-control calls inside); traits attempts (TR-SET-ONCE, TR-SIZE-256);
// each event kind's descriptor (DESC-*, lint.h). A rule the observation could not judge for a
// provider (the schedule never reached the step that tests it, the program wrote nothing then,
// or the observation cannot see it) is its own case, NOT JUDGED: UNSUPPORTED, as expected, with
// the reason as data (a `not_judged` finding).
#pragma once

#include "harness/model/catalog.h"
#include "harness/model/result.h"
#include "harness/observe/schedule.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace etwh::observe {

// Where a schedule step began: the number of records received when its actions were applied.
// A mark with step == Schedule::steps.size() says the whole schedule ran (its last step lasted
// its step_ms) while the provider was registered.
struct StepMark {
  std::uint64_t handle = 0;  // the provider walked through the schedule
  std::size_t step = 0;      // index in Schedule::steps
  std::size_t record = 0;
};

// Why a rule was not judged (the `observed` of a `not_judged` finding).
inline constexpr char kNotJudgedCheck[] = "not_judged";
inline constexpr char kStepNotReached[] = "step_not_reached";  // the step is the finding's step
inline constexpr char kNoCallback[] = "no_callback";           // no enable callback reached it
inline constexpr char kEndedTooSoon[] = "ended_too_soon";      // unregistered within the step
inline constexpr char kNoWrite[] = "no_write";                 // it wrote no event then
inline constexpr char kNoTraits[] = "no_traits";               // it set no traits
inline constexpr char kNotObservable[] = "not_observable";     // the observation cannot see it

// How an event kind is named across the observation records and the consumers: the provider's
// GUID (8-4-4-4-12, lower case, no braces) and the descriptor's fields.
std::string event_kind_key(const std::string& guid, unsigned id, unsigned version, unsigned channel,
                           unsigned level, unsigned opcode, unsigned task, std::uint64_t keyword);

// What the observer's consumers made of the first event of each kind (event_kind_key) through
// TDH: {"name", "fields": [{"name", "value"}]}, or {"status": N} when TDH could not decode it.
using DecodedKinds = std::map<std::string, nlohmann::json>;

struct JudgeInput {
  const std::vector<nlohmann::json>* records = nullptr;
  const std::vector<StepMark>* marks = nullptr;
  const Schedule* schedule = nullptr;
  std::string schedule_file;
  const Catalog* catalog = nullptr;
  const DecodedKinds* decoded = nullptr;  // may be null: nothing decoded
};

std::vector<CaseResult> judge_providers(const JudgeInput& in);

// A write is blamed only when the provider wrote at least this many unwanted events after the
// same callback: one write racing with the callback that changed its state is not a defect.
inline constexpr std::size_t kRaceTolerance = 1;

}  // namespace etwh::observe
