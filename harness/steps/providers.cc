// Providers and agents: register, unregister, query_enabled (EventProviderEnabled judged
// against the oracle), and an agent's exit or kill (nothing to judge).
#include "case_run.h"

#include "win32_text.h"

#include <fmt/format.h>

namespace etwh {

using nlohmann::json;
using std::chrono::milliseconds;

std::optional<StepReply> CaseRun::register_provider(const Step& step,
                                                    const oracle::StepExpectation&) {
  const ProviderDef& p = case_.providers.at(step.provider);
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
  const ProviderDef& p = case_.providers.at(step.provider);
  return StepReply{agent(p.agent).call(
      p.subject ? json{{"op", "subject_unregister"}}
                : json{{"op", "unregister"}, {"provider", step.provider}},
      kReplySlack)};
}

std::optional<StepReply> CaseRun::query_enabled(const Step& step,
                                                const oracle::StepExpectation& e) {
  json reply = agent(case_.providers.at(step.provider).agent)
                   .call({{"op", "query_enabled"},
                          {"provider", step.provider},
                          {"level", step.level},
                          {"keyword", format_hex(step.keyword)}},
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
                      step.level, format_hex(step.keyword), *e.provider_enabled, observed),
          fmt::format("{}", *e.provider_enabled), fmt::format("{}", observed)));
    }
  }
  return StepReply{std::move(reply), false};
}

std::optional<StepReply> CaseRun::exit_agent(const Step& step, const oracle::StepExpectation&) {
  AgentProcess& a = agent(step.agent);
  gone_.insert(step.agent);
  a.call({{"op", "exit"}, {"code", 0}}, kReplySlack);
  if (!a.wait_exit(kReplySlack)) throw HarnessFault("agent \"" + step.agent + "\" did not exit");
  return std::nullopt;
}

std::optional<StepReply> CaseRun::kill_agent(const Step& step, const oracle::StepExpectation&) {
  AgentProcess& a = agent(step.agent);
  gone_.insert(step.agent);
  a.kill();
  a.wait_exit(kReplySlack);
  return std::nullopt;
}

}  // namespace etwh
