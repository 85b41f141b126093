// `etwh observe`'s verdicts, from the records the observed program's libetwrt sent (pure: no
// platform call). One CaseResult per provider that registered: each EventWrite* judged against
// what the provider's last completed enable callback told it (PROV-RECORD after a DISABLE,
// PROV-EVENT-ENABLED otherwise) and against the sessions (the record's `wanted`); callbacks
// (CB-FAST: duration, session-control calls inside); traits attempts (TR-SET-ONCE, TR-SIZE-256);
// each event kind's descriptor (DESC-*, lint.h). What cannot be judged is named in notes.
#pragma once

#include "catalog.h"
#include "result.h"
#include "schedule.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace etwh::observe {

// Where a schedule step began: the number of records received when its actions were applied.
struct StepMark {
  std::uint64_t handle = 0;  // the provider walked through the schedule
  std::size_t step = 0;      // index in Schedule::steps
  std::size_t record = 0;
};

struct JudgeInput {
  const std::vector<nlohmann::json>* records = nullptr;
  const std::vector<StepMark>* marks = nullptr;
  const Schedule* schedule = nullptr;
  std::string schedule_file;
  const Catalog* catalog = nullptr;
};

std::vector<CaseResult> judge_providers(const JudgeInput& in);

// A write is blamed only when the provider wrote at least this many unwanted events after the
// same callback: one write racing with the callback that changed its state is not a defect.
inline constexpr std::size_t kRaceTolerance = 1;

}  // namespace etwh::observe
