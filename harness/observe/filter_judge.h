// `etwh observe`'s judgement of the schedule's event ID filters (FilterData,
// EVENT_FILTER_TYPE_EVENT_ID): an event the filter of session S excludes never reaches S
// (FLT-PER-SESSION: each session's own filter decides). From what each session's consumer
// received (by event ID) and the observation's write records (pure: no platform call).
#pragma once

#include "harness/observe/judge.h"
#include "harness/observe/schedule.h"
#include "harness/observe/sessions.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace etwh::observe {

struct FilterJudgeInput {
  const Schedule* schedule = nullptr;
  std::string schedule_file;
  const std::vector<SessionAccount>* accounts = nullptr;
  const std::vector<nlohmann::json>* records = nullptr;
  const std::vector<StepMark>* marks = nullptr;
};

// The case "observe/event-id-filter" (FLT-PER-SESSION), or none when the schedule has no event
// ID filter. Judged per filtered session only when every enable of that session carries the same
// filter (what it received cannot be told apart per step otherwise) and the program wrote, while
// the filter applied, an event the filter excludes and the session's level and keywords take;
// else NOT JUDGED with the reason as data (judge.h).
std::optional<CaseResult> judge_event_id_filters(const FilterJudgeInput& in);

}  // namespace etwh::observe
