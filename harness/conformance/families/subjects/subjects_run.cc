// Providers under test (subject agents, providers/adapter/): their registration, subject_write
// and inject_callback, CB-FAST budgets, and what their consumers received against
// subject_oracle.h.
#include "harness/conformance/families/driver_families.h"

#include "harness/model/rules.h"
#include "harness/conformance/families/subjects/subjects_ops.h"
#include "win32_text.h"

#include <evntprov.h>
#include <fmt/format.h>

namespace etwh {

using nlohmann::json;
using std::chrono::milliseconds;

std::optional<StepReply> CaseRun::subject(const Step& step, const oracle::StepExpectation& e) {
  subject_step(step);
  check_callbacks(e);
  check_callback_budgets();
  return std::nullopt;
}

// The GUID a controller call names: a subject's own, else the case's.
std::string CaseRun::wire_guid(const std::string& provider) const {
  auto it = subject_guids_.find(provider);
  return it != subject_guids_.end() ? it->second : format_guid(case_.providers.at(provider).guid);
}

json CaseRun::register_subject(const ProviderDef& p) {
  json reply =
      agent(p.agent).call({{"op", "subject_register"}, {"provider", p.label}}, kReplySlack);
  if (reply.value("status", 1) == 0) {
    if (!reply.contains("guid") || !reply["guid"].is_string() ||
        !parse_guid(reply["guid"].get<std::string>())) {
      throw HarnessFault("subject " + p.agent +
                         " registered no provider with a callback: " + reply.dump());
    }
    try {
      subject_descriptions_[p.label] = subject::parse_description(reply);
    } catch (const std::exception& e) {
      throw HarnessFault("subject " + p.agent + ": subject_register reply: " + e.what());
    }
    subject_guids_[p.label] = format_guid(*parse_guid(reply["guid"].get<std::string>()));
  }
  return reply;
}

void CaseRun::subject_step(const Step& step) {
  const ProviderDef& p = case_.providers.at(step_provider(step));
  if (!subject_descriptions_.count(p.label)) {
    throw HarnessFault("provider \"" + p.label + "\" is used before its register step");
  }
  if (const SubjectWriteStep* w = step.body.get_if<SubjectWriteStep>()) {
    agent(p.agent).call({{"op", "subject_write"}, {"which", w->state_events ? "state" : "test"}},
                        kReplySlack);
    return;
  }
  const InjectCallbackStep& inject = step_body<InjectCallbackStep>(step);
  const json req = {{"op", "subject_inject"},
                    {"is_enabled", inject.is_enabled},
                    {"level", inject.level},
                    {"match_any", format_hex(inject.match_any)},
                    {"match_all", format_hex(inject.match_all)}};
  const bool unknown = inject.is_enabled > EVENT_CONTROL_CODE_CAPTURE_STATE;
  try {
    const json r = agent(p.agent).call(req, kReplySlack);
    check_budget(p, fmt::format("injected callback (IsEnabled {})", inject.is_enabled),
                 r.value("duration_ns", std::int64_t{0}));
  } catch (const AgentError& e) {
    if (e.kind() != AgentError::Kind::kCrashed || !unknown) throw;
    // The provider died of a control code it should have ignored: the rule's verdict.
    gone_.insert(p.agent);
    fail(failed_check(rules::kCbUnknownCode, "survives",
                      fmt::format("{}: the provider crashed when its callback got IsEnabled "
                                  "{}: {}",
                                  p.label, inject.is_enabled, e.what()),
                      "ignored", "crashed"));
  }
}

// CB-FAST: a callback slower than the scenario's budget for that provider.
void CaseRun::check_budget(const ProviderDef& p, const std::string& which,
                           std::int64_t duration_ns) {
  if (p.callback_budget_ms == 0) return;
  if (duration_ns > std::int64_t{p.callback_budget_ms} * 1'000'000) {
    const double ms = static_cast<double>(duration_ns) / 1e6;
    fail(failed_check(rules::kCbFast, "duration",
                      fmt::format("{}: {} took {:.1f} ms, over the scenario's budget of {} ms",
                                  p.label, which, ms, p.callback_budget_ms),
                      fmt::format("<= {} ms", p.callback_budget_ms), fmt::format("{:.1f} ms", ms)));
  }
}

void CaseRun::check_callback_budgets() {
  for (const auto& [label, p] : case_.providers) {
    if (!p.subject || p.callback_budget_ms == 0 || !agents_.count(p.agent)) continue;
    std::size_t& checked = budget_checked_[label];
    std::size_t seen = 0;
    for (const json& ev : agents_.at(p.agent)->events()) {
      if (ev.value("event", "") != "callback" || ev.value("provider", "") != label) continue;
      if (++seen <= checked) continue;
      check_budget(
          p,
          fmt::format("callback #{} (IsEnabled {})", ev.value("n", 0), ev.value("is_enabled", 0u)),
          ev.value("duration_ns", std::int64_t{0}));
    }
    checked = seen;
  }
}

// Sets aside a record of a provider under test (judged by judge_subjects); true if it was one.
bool CaseRun::subject_record(const std::string& consumer, const json& r) {
  for (const auto& [label, guid] : subject_guids_) {
    if (r.value("provider", "") == guid) {
      subject_records_[consumer][label].push_back(r);
      return true;
    }
  }
  return false;
}

// What the providers under test wrote, from one consumer each (several consumers of one
// provider received copies of the same events).
std::vector<SubjectEvent> CaseRun::subject_events() const {
  std::vector<SubjectEvent> out;
  std::set<std::string> done;
  for (const auto& [consumer, by_provider] : subject_records_) {
    for (const auto& [label, records] : by_provider) {
      if (records.empty() || !done.insert(label).second) continue;
      for (const json& r : records) {
        if (r.value("kind", "") != "event") continue;
        lint::Descriptor d;
        d.id = r.value("id", 0u);
        d.version = r.value("version", 0u);
        d.channel = r.value("channel", 0u);
        d.level = r.value("level", 0u);
        d.opcode = r.value("opcode", 0u);
        d.keyword = std::stoull(r.value("keyword", std::string("0x0")), nullptr, 16);
        d.payload_size = r.value("payload", std::string()).size() / 2;
        out.push_back({label, d});
      }
    }
  }
  return out;
}

// What each consumer received from each provider under test, against subject_oracle.
void CaseRun::judge_subjects(const oracle::StepExpectation& e) {
  const std::vector<oracle::StepExpectation> base = oracle::expect_case(case_);
  for (const auto& [label, description] : subject_descriptions_) {
    const auto expected = subject::expect_subject_events(case_, base, label, description);
    for (const oracle::ConsumerExpectation& c : e.consumers) {
      auto segments = expected.find(c.consumer);
      const std::vector<json>& records = subject_records_[c.consumer][label];
      const auto findings = subject::judge_records(
          segments != expected.end() ? segments->second : std::vector<subject::Segment>{}, records,
          case_.rules);
      for (Finding f : findings) {
        f.text = fmt::format("consumer {} of session {}, provider {}: {}", c.consumer, c.session,
                             label, f.text);
        fail(std::move(f));
      }
      if (findings.empty()) {
        note(
            fmt::format("consumer {}: {} events of provider under test {} as "
                        "expected",
                        c.consumer, records.size(), label));
      }
    }
  }
}

// The family's driver registration: each op's runner (families/driver_families.h).
std::vector<DriverOp> subjects_driver_ops() {
  return {
      {ops::kSubjectWrite, run_part<&CaseRun::subject>},
      {ops::kInjectCallback, run_part<&CaseRun::subject>},
  };
}

}  // namespace etwh
