// The oracle's part of the sessions, enables and callbacks family: Model's replay of its ops
// (oracle_model.h).
#include "harness/conformance/oracle_model.h"
#include "harness/model/rules.h"
#include "harness/conformance/families/sessions/sessions_ops.h"
#include "win32_text.h"

#include <evntprov.h>
#include <evntrace.h>

#include <algorithm>

namespace etwh::oracle::detail {

std::string Model::key(const std::string& provider) const {
  return format_guid(case_.providers.at(provider).guid);
}

std::vector<SessionEnable> Model::settings_of(const SessionMap& m) const {
  std::vector<SessionEnable> v;
  for (const auto& [label, en] : m) v.push_back(en.settings);
  return v;
}

bool Model::any_filter(const SessionMap& m) {
  return std::any_of(m.begin(), m.end(), [](const auto& kv) { return kv.second.has_filter; });
}

// Registrations that receive callbacks for `guid_key`, by label.
std::vector<const ProviderDef*> Model::listeners(const std::string& guid_key) const {
  std::vector<const ProviderDef*> out;
  for (const auto& [label, def] : case_.providers) {
    if (registered_.count(label) && def.has_callback && format_guid(def.guid) == guid_key) {
      out.push_back(&def);
    }
  }
  return out;
}

// Appends the callbacks every listener gets after a change of `guid_key`'s sessions.
void Model::notify_change(const std::string& guid_key, StepExpectation& e,
                          const std::string& is_enabled_rule, const std::string& cause,
                          const GUID& source, const std::string& source_rule) {
  for (const ProviderDef* p : listeners(guid_key)) {
    push_callback(*p, effective(p->label), e, is_enabled_rule, cause, source, source_rule);
  }
}

// The callback `p` gets when the sessions enabling it become `m`.
void Model::push_callback(const ProviderDef& provider, const SessionMap& m, StepExpectation& e,
                          const std::string& is_enabled_rule, const std::string& cause,
                          const GUID& source, const std::string& source_rule) {
  const std::vector<SessionEnable> s = settings_of(m);
  const Aggregate agg = aggregate(s);
  {
    const ProviderDef* p = &provider;
    ExpectedCallback cb;
    cb.provider = p->label;
    cb.context = p->context;
    cb.cause = cause;
    cb.is_enabled =
        agg.enabled ? EVENT_CONTROL_CODE_ENABLE_PROVIDER : EVENT_CONTROL_CODE_DISABLE_PROVIDER;
    cb.is_enabled_rule = agg.enabled ? is_enabled_rule : rules::kCbDisableLast;
    cb.values = agg;
    cb.judge_values = agg.enabled;  // the values sent with a disable are not documented
    cb.source_id = source;
    cb.source_rule = source_rule;
    if (agg.enabled) {
      cb.filter = any_filter(m) ? FilterExpect::kPresent : FilterExpect::kAbsent;
      cb.filter_rule = rules::kCbFilterPerSession;
    }
    e.callbacks.push_back(cb);
  }
}

// CB-TIMEOUT: what the return of a controller call must look like given the callbacks' delays.
void Model::timing(const Step& step, StepExpectation& e) {
  const ControlStep& call = step_body<ControlStep>(step);
  if (e.callbacks.empty()) return;
  std::uint32_t slowest = 0;
  for (const ExpectedCallback& cb : e.callbacks) {
    slowest = std::max(slowest, case_.providers.at(cb.provider).delay_ms);
  }
  if (call.timeout_ms == 0) {
    // Only a clearly slow callback makes "returned before it ended" observable.
    if (slowest >= 100) {
      e.timing = TimingExpect::kReturnsBeforeCallbackEnds;
      e.status_rule = rules::kCbTimeout;
    }
    return;
  }
  // Generous margins both ways: the verdict must not depend on scheduling noise.
  if (std::uint64_t{slowest} * 4 <= call.timeout_ms) {
    e.timing = TimingExpect::kReturnsAfterCallbackEnds;
    e.status = ERROR_SUCCESS;
    e.status_rule = rules::kCbTimeout;
  } else if (slowest >= std::uint64_t{call.timeout_ms} * 4 && slowest - call.timeout_ms >= 200) {
    e.status = ERROR_TIMEOUT;
    e.status_rule = rules::kCbTimeout;
  } else {
    e.status.reset();
  }
}

void Model::start(const Step& step, StepExpectation& e) {
  const SessionStep& ss = step_body<SessionStep>(step);
  if (started_.count(ss.session) || stopped_.count(ss.session)) return;  // not judged
  if (refused_append(ss.session, e)) return;
  started_.insert(ss.session);
  e.status = ERROR_SUCCESS;
}

void Model::stop(const Step& step, StepExpectation& e) {
  const SessionStep& ss = step_body<SessionStep>(step);
  if (!started_.count(ss.session)) return;
  started_.erase(ss.session);
  keep_appended(ss.session);
  data_.erase(ss.session);
  stopped_.insert(ss.session);
  e.status = ERROR_SUCCESS;
  // Every registration the session enabled, directly or through a group, hears of it.
  const auto before = snapshot();
  for (auto& [guid_key, m] : enables_) m.erase(ss.session);
  for (auto& [group, m] : group_enables_) m.erase(ss.session);
  disallow_.erase(ss.session);
  // CB-SOURCEID-NULL-STOPPING is observed only: the SourceId is recorded, not judged.
  notify_diff(before, e, rules::kCbRecompute, "stop of session " + ss.session, kNullGuid, "");
}

// The SourceId a callback must carry for a controller call, and the rule behind it.
std::pair<GUID, std::string> Model::expected_source(const Step& step) {
  const ControlStep& call = step_body<ControlStep>(step);
  if (call.api == "EnableTrace") return {kNullGuid, rules::kCbSourceidNullLegacy};
  if (call.source_id) return {*call.source_id, rules::kCbSourceid};
  return {kNullGuid, ""};  // NULL EnableParameters: the runtime picks one, not judged
}

void Model::enable(const Step& step, StepExpectation& e) {
  const ControlStep& call = step_body<ControlStep>(step);
  if (!started_.count(call.session)) return;
  if (call.group) {
    group_enable(step, e);
    return;
  }
  const std::string guid_key = key(call.provider);
  SessionMap& m = enables_[guid_key];
  if (!m.count(call.session) && m.size() >= 8) {
    e.status = ERROR_NO_SYSTEM_RESOURCES;
    e.status_rule = rules::kSesMax8;
    return;
  }
  if (m.count(call.session)) replaced_.insert(call.session + "\n" + guid_key);
  Enable& en = m[call.session];
  en.settings = SessionEnable{call.level, call.match_any, call.match_all, call.enable_property};
  en.has_filter = std::any_of(call.filters.begin(), call.filters.end(), provider_bound);
  en.event_ids = event_id_filter(call.filters);
  e.status = ERROR_SUCCESS;
  // An enable by the 8th session or fewer succeeding is what SES-MAX-8 asks; in a case about
  // something else it only prepares the case (a failure is a setup failure).
  if (m.size() <= 8 && case_has(rules::kSesMax8)) e.status_rule = rules::kSesMax8;
  const auto [source, source_rule] = expected_source(step);
  notify_change(guid_key, e, rules::kCbRecompute, "enable by session " + call.session, source,
                source_rule);
  if (call.api == "EnableTrace") {
    // The legacy call has 32-bit flags and no MatchAll: only IsEnabled and SourceId judged.
    for (ExpectedCallback& cb : e.callbacks) cb.judge_values = false;
  }
  timing(step, e);
}

void Model::disable(const Step& step, StepExpectation& e) {
  const ControlStep& call = step_body<ControlStep>(step);
  if (call.group) {
    if (started_.count(call.session)) group_enable(step, e);
    return;
  }
  const std::string guid_key = key(call.provider);
  SessionMap& m = enables_[guid_key];
  if (!started_.count(call.session) || m.erase(call.session) == 0) return;
  e.status = ERROR_SUCCESS;
  notify_change(guid_key, e, rules::kCbEnabledStays, "disable by session " + call.session,
                kNullGuid, "");
  timing(step, e);
}

void Model::capture_state(const Step& step, StepExpectation& e) {
  const ControlStep& call = step_body<ControlStep>(step);
  const std::string guid_key = key(call.provider);
  const SessionMap& m = enables_[guid_key];
  if (!started_.count(call.session) || !m.count(call.session)) return;
  e.status = ERROR_SUCCESS;
  for (const ProviderDef* p : listeners(guid_key)) {
    ExpectedCallback cb;
    cb.provider = p->label;
    cb.context = p->context;
    cb.cause = "capture state by session " + call.session;
    cb.is_enabled = EVENT_CONTROL_CODE_CAPTURE_STATE;
    cb.is_enabled_rule = rules::kCbCaptureState;
    cb.values = Aggregate{true, call.level, call.match_any, call.match_all};
    e.callbacks.push_back(cb);
  }
  timing(step, e);
}

void Model::flush(const Step& step, StepExpectation& e) {
  if (started_.count(step_session(step))) e.status = ERROR_SUCCESS;
}

}  // namespace etwh::oracle::detail
