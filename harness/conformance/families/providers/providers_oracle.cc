// The oracle's part of the providers and agents family: Model's replay of its ops (oracle_model.h).
#include "harness/conformance/oracle_model.h"
#include "harness/model/rules.h"
#include "harness/conformance/families/providers/providers_ops.h"
#include "win32_text.h"

#include <evntprov.h>
#include <evntrace.h>

#include <algorithm>

namespace etwh::oracle::detail {

void Model::do_register(const Step& step, StepExpectation& e) {
  const ProviderStep& ps = step_body<ProviderStep>(step);
  if (registered_.count(ps.provider)) return;
  registered_.insert(ps.provider);
  traits_attempted_.erase(ps.provider);
  traits_set_.erase(ps.provider);
  use_descriptor_type_.erase(ps.provider);
  e.status = ERROR_SUCCESS;
  const ProviderDef& p = case_.providers.at(ps.provider);
  const SessionMap m = effective(ps.provider);
  if (m.empty() || !p.has_callback) return;
  ExpectedCallback cb;
  cb.provider = p.label;
  cb.context = p.context;
  cb.cause = "registration of a provider enabled beforehand";
  cb.is_enabled = EVENT_CONTROL_CODE_ENABLE_PROVIDER;
  cb.is_enabled_rule = rules::kCbSourceidNullPreenabled;
  cb.values = aggregate(settings_of(m));
  cb.judge_values = true;
  cb.source_id = kNullGuid;
  cb.source_rule = rules::kCbSourceidNullPreenabled;
  cb.filter = FilterExpect::kAbsent;
  cb.filter_rule = rules::kCbSourceidNullPreenabled;
  e.callbacks.push_back(cb);
}

void Model::unregister(const Step& step, StepExpectation& e) {
  const ProviderStep& ps = step_body<ProviderStep>(step);
  if (registered_.erase(ps.provider) == 0) return;
  member_group_.erase(ps.provider);
  e.status = ERROR_SUCCESS;
}

void Model::query_enabled(const Step& step, StepExpectation& e) {
  const QueryEnabledStep& q = step_body<QueryEnabledStep>(step);
  if (!registered_.count(q.provider)) return;
  const std::vector<SessionEnable> s = settings_of(effective(q.provider));
  // MatchAny 0 on the enabling side is where runtimes differ in practice: not judged here.
  if (std::any_of(s.begin(), s.end(), [](const SessionEnable& x) { return x.match_any == 0; })) {
    return;
  }
  e.provider_enabled = any_session_accepts(s, EventLevelKeyword{q.level, q.keyword});
  // EventProviderEnabled checks RT-WRITE-DISABLED's predicate; after a session ends it also
  // checks SES-PERSIST (what the ended session enabled is gone): blamed on that when the case
  // is about it.
  e.provider_enabled_rule =
      case_has(rules::kSesPersist) ? rules::kSesPersist : rules::kRtWriteDisabled;
}

void Model::agent_gone(const Step& step, StepExpectation&) {
  const AgentStep& a = step_body<AgentStep>(step);
  for (const auto& [label, def] : case_.providers) {
    if (def.agent == a.agent) registered_.erase(label);
  }
}

}  // namespace etwh::oracle::detail
