#include "harness/observe/filter_judge.h"

#include "harness/model/rules.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace etwh::observe {
namespace {

using nlohmann::json;

// The session's own filter (seed 004's test), as the platform must apply it before the IDs.
bool takes(const Action& a, std::uint8_t level, std::uint64_t keyword) {
  if (level != 0 && level > a.level) return false;
  if (keyword == 0 || a.match_any == 0) return true;
  return (keyword & a.match_any) != 0 && (keyword & a.match_all) == a.match_all;
}

struct Filtered {
  const Action* enable = nullptr;  // the first enable with the filter
  std::vector<std::size_t> steps;  // the steps that enable the session with it
  bool mixed = false;              // some enable of the session has no or another filter
};

std::map<std::size_t, Filtered> filtered_sessions(const Schedule& s) {
  std::map<std::size_t, Filtered> out;
  for (std::size_t i = 0; i < s.steps.size(); ++i) {
    for (const Action& a : s.steps[i].actions) {
      if (a.op == ActionOp::kEnable && a.event_ids) {
        Filtered& f = out[a.session];
        if (f.enable == nullptr) f.enable = &a;
        f.mixed |= !(*a.event_ids == *f.enable->event_ids);
        f.steps.push_back(i);
      }
    }
  }
  for (const Step& step : s.steps) {
    for (const Action& a : step.actions) {
      auto it = out.find(a.session);
      if (a.op == ActionOp::kEnable && !a.event_ids && it != out.end()) it->second.mixed = true;
    }
  }
  return out;
}

// Writes during the filter's steps (from a filter step's mark to the provider's next mark) of
// events the filter excludes and the session's level and keywords take.
std::uint64_t exercised(const FilterJudgeInput& in, const Filtered& f) {
  std::uint64_t n = 0;
  const std::vector<StepMark>& marks = *in.marks;
  for (std::size_t k = 0; k < marks.size(); ++k) {
    if (std::find(f.steps.begin(), f.steps.end(), marks[k].step) == f.steps.end()) continue;
    std::size_t end = in.records->size();
    for (std::size_t j = k + 1; j < marks.size(); ++j) {
      if (marks[j].handle == marks[k].handle) {
        end = marks[j].record;
        break;
      }
    }
    for (std::size_t r = marks[k].record; r < end && r < in.records->size(); ++r) {
      const json& w = (*in.records)[r];
      if (w.value("kind", "") != "write" || w.value("handle", std::uint64_t{0}) != marks[k].handle)
        continue;
      const auto id = static_cast<std::uint16_t>(w.value("id", 0u));
      n += f.enable->event_ids->excludes(id) &&
           takes(*f.enable, static_cast<std::uint8_t>(w.value("level", 0u)),
                 w.value("keyword", std::uint64_t{0}));
    }
  }
  return n;
}

Finding not_judged(std::size_t session, const char* why, std::string text) {
  Finding f;
  f.rule = rules::kFltPerSession;
  f.check = kNotJudgedCheck;
  f.severity = Severity::kNote;
  f.observed = why;
  f.text = fmt::format("not judged: session {}: {}", session, text);
  return f;
}

// One session's finding: a failure when an excluded event reached it.
Finding judge_session(const FilterJudgeInput& in, std::size_t session, const Filtered& f) {
  if (f.mixed) {
    return not_judged(session, kNotObservable,
                      "the schedule enables it with and without (or with another) event ID "
                      "filter: what it received cannot be told apart per step");
  }
  const SessionAccount* account = nullptr;
  for (const SessionAccount& a : *in.accounts) {
    if (a.index == session) account = &a;
  }
  if (account == nullptr) {
    return not_judged(session, kStepNotReached, "the session was never started");
  }
  const std::uint64_t written = exercised(in, f);
  if (written == 0) {
    return not_judged(session, kNoWrite,
                      "the program wrote no event the filter excludes while it applied");
  }
  std::uint64_t reached = 0;
  std::string which;
  for (const auto& [id, count] : account->delivered_ids) {
    if (!f.enable->event_ids->excludes(id)) continue;
    reached += count;
    which += fmt::format("{}{} x{}", which.empty() ? "" : ", ", id, count);
  }
  Finding out;
  out.rule = rules::kFltPerSession;
  out.check = "event_id_filter";
  out.expected = "0";
  out.observed = std::to_string(reached);
  out.evidence = account->name;
  if (reached > 0) {
    out.text = fmt::format(
        "session {} ({}): {} events of IDs its event ID filter excludes "
        "reached it (ID x count: {})",
        session, account->name, reached, which);
  } else {
    out.severity = Severity::kNote;
    out.text = fmt::format(
        "session {} ({}): none of the {} writes its event ID filter excludes "
        "reached it",
        session, account->name, written);
  }
  return out;
}

}  // namespace

std::optional<CaseResult> judge_event_id_filters(const FilterJudgeInput& in) {
  const std::map<std::size_t, Filtered> sessions = filtered_sessions(*in.schedule);
  if (sessions.empty()) return std::nullopt;
  CaseResult c;
  c.id = "observe/event-id-filter";
  c.rules = {rules::kFltPerSession};
  c.file = in.schedule_file;
  bool judged = false;
  for (const auto& [session, f] : sessions) {
    c.findings.push_back(judge_session(in, session, f));
    judged |= c.findings.back().check != kNotJudgedCheck;
    c.findings.back().step.file = in.schedule_file;
    c.findings.back().step.index = f.steps.front();
    c.findings.back().step.op = in.schedule->steps[f.steps.front()].name;
    c.findings.back().step.pointer = "/steps/" + std::to_string(f.steps.front());
    c.findings.back().step.case_id = c.id;
  }
  c.status = judged ? Status::kPass : Status::kUnsupported;
  for (const Finding& f : c.findings) {
    if (f.severity == Severity::kFailure) c.status = Status::kFail;
  }
  c.as_expected = c.status != Status::kFail;
  c.message = summarize(c.findings, "");
  return c;
}

}  // namespace etwh::observe
