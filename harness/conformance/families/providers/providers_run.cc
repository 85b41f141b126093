// Providers and agents: register, unregister, query_enabled (EventProviderEnabled judged
// against the oracle), and an agent's exit or kill (nothing to judge).
#include "harness/conformance/families/driver_families.h"
#include "harness/conformance/families/providers/providers_ops.h"

#include "win32_text.h"

#include <fmt/format.h>

namespace etwh {

using nlohmann::json;
using std::chrono::milliseconds;

std::optional<StepReply> CaseRun::register_provider(const Step& step,
                                                    const oracle::StepExpectation&) {
  const ProviderStep& ps = step_body<ProviderStep>(step);
  const ProviderDef& p = case_.providers.at(ps.provider);
  if (p.subject) return StepReply{register_subject(p)};
  json req = {{"op", "register"},
              {"provider", p.label},
              {"guid", format_guid(p.guid)},
              {"context", format_hex(p.context)},
              {"callback", p.has_callback ? "record" : "none"}};
  if (p.delay_ms) req["behavior"] = {{"delay_ms", p.delay_ms}};
  return StepReply{agent(p.agent).call(req, kReplySlack)};
}

std::optional<StepReply> CaseRun::unregister_provider(const Step& step,
                                                      const oracle::StepExpectation&) {
  const ProviderStep& ps = step_body<ProviderStep>(step);
  const ProviderDef& p = case_.providers.at(ps.provider);
  return StepReply{agent(p.agent).call(p.subject
                                           ? json{{"op", "subject_unregister"}}
                                           : json{{"op", "unregister"}, {"provider", ps.provider}},
                                       kReplySlack)};
}

std::optional<StepReply> CaseRun::query_enabled(const Step& step,
                                                const oracle::StepExpectation& e) {
  const QueryEnabledStep& q = step_body<QueryEnabledStep>(step);
  json reply = agent(case_.providers.at(q.provider).agent)
                   .call({{"op", "query_enabled"},
                          {"provider", q.provider},
                          {"level", q.level},
                          {"keyword", format_hex(q.keyword)}},
                         kReplySlack);
  if (e.provider_enabled) {
    if (!reply.contains("provider_enabled") || !reply["provider_enabled"].is_boolean()) {
      throw HarnessFault("query_enabled reply without a boolean provider_enabled");
    }
    const bool observed = reply["provider_enabled"].get<bool>();
    if (observed != *e.provider_enabled) {
      fail(failed_check(
          e.provider_enabled_rule, "EventProviderEnabled",
          fmt::format("EventProviderEnabled(level {}, keyword {}) expected {}, observed {}",
                      q.level, format_hex(q.keyword), *e.provider_enabled, observed),
          fmt::format("{}", *e.provider_enabled), fmt::format("{}", observed)));
    }
  }
  return StepReply{std::move(reply), false};
}

std::optional<StepReply> CaseRun::exit_agent(const Step& step, const oracle::StepExpectation&) {
  const AgentStep& gone = step_body<AgentStep>(step);
  AgentProcess& a = agent(gone.agent);
  gone_.insert(gone.agent);
  a.call({{"op", "exit"}, {"code", 0}}, kReplySlack);
  if (!a.wait_exit(kReplySlack)) throw HarnessFault("agent \"" + gone.agent + "\" did not exit");
  return std::nullopt;
}

std::optional<StepReply> CaseRun::kill_agent(const Step& step, const oracle::StepExpectation&) {
  const AgentStep& gone = step_body<AgentStep>(step);
  AgentProcess& a = agent(gone.agent);
  gone_.insert(gone.agent);
  a.kill();
  a.wait_exit(kReplySlack);
  return std::nullopt;
}

// The family's driver registration: each op's runner (families/driver_families.h).
std::vector<DriverOp> providers_driver_ops() {
  return {
      {ops::kRegister, run_part<&CaseRun::register_provider>},
      {ops::kUnregister, run_part<&CaseRun::unregister_provider>},
      {ops::kQueryEnabled, run_part<&CaseRun::query_enabled>},
      {ops::kExitAgent, run_part<&CaseRun::exit_agent>},
      {ops::kKillAgent, run_part<&CaseRun::kill_agent>},
  };
}

}  // namespace etwh
