#include "harness/conformance/oracle.h"

#include "harness/conformance/oracle_model.h"
#include "harness/model/rules.h"
#include "win32_text.h"

#include <evntprov.h>
#include <evntrace.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace etwh::oracle {

Aggregate aggregate(std::span<const SessionEnable> sessions) {
  Aggregate result;
  if (sessions.empty()) return result;
  result.enabled = true;
  result.match_all = ~std::uint64_t{0};
  for (const SessionEnable& s : sessions) {
    result.level = std::max(result.level, s.level);
    result.match_any |= s.match_any;
    result.match_all &= s.match_all;
  }
  return result;
}

bool session_accepts(const SessionEnable& session, const EventLevelKeyword& event) {
  if (event.level != 0 && event.level > session.level) return false;
  if (event.keyword == 0) {
    return (session.enable_property & kEnablePropertyIgnoreKeyword0) == 0;
  }
  // FLT-ANY-ZERO: no MatchAny means every event, and MatchAll is then not consulted.
  if (session.match_any == 0) return true;
  return (event.keyword & session.match_any) != 0 &&
         (event.keyword & session.match_all) == session.match_all;
}

bool any_session_accepts(std::span<const SessionEnable> sessions, const EventLevelKeyword& event) {
  return std::any_of(sessions.begin(), sessions.end(),
                     [&](const SessionEnable& s) { return session_accepts(s, event); });
}

bool provider_event_enabled(const Aggregate& state, const EventLevelKeyword& event) {
  return state.enabled && event.level <= state.level &&
         (event.keyword == 0 || ((event.keyword & state.match_any) != 0 &&
                                 (event.keyword & state.match_all) == state.match_all));
}

std::optional<std::string> traits_blob_error(std::span<const std::uint8_t> blob) {
  auto u16 = [&](std::size_t at) {
    return static_cast<std::size_t>(blob[at] | (blob[at + 1] << 8));
  };
  if (blob.size() < 3) return "shorter than a size and an empty name (3 bytes)";
  const std::size_t total = u16(0);
  if (total != blob.size()) {
    return "TraitsSize " + std::to_string(total) + " differs from the blob's " +
           std::to_string(blob.size()) + " bytes";
  }
  std::size_t at = 2;
  while (at < blob.size() && blob[at] != 0) ++at;
  if (at == blob.size()) return "provider name is not NUL-terminated";
  ++at;
  while (at < blob.size()) {
    if (blob.size() - at < 3) return "trait at offset " + std::to_string(at) + " is truncated";
    const std::size_t size = u16(at);
    if (size < 3) return "trait at offset " + std::to_string(at) + " has size below 3";
    if (size > blob.size() - at) {
      return "trait at offset " + std::to_string(at) + " overruns the blob";
    }
    at += size;
  }
  return std::nullopt;
}

namespace detail {

bool same_enable(const Enable& a, const Enable& b) {
  return a.settings.level == b.settings.level && a.settings.match_any == b.settings.match_any &&
         a.settings.match_all == b.settings.match_all &&
         a.settings.enable_property == b.settings.enable_property && a.has_filter == b.has_filter;
}

bool provider_bound(const FilterDef& f) {
  return (f.type & 0x80000000u) == 0 || f.type == EVENT_FILTER_TYPE_SCHEMATIZED;
}

std::optional<std::pair<bool, std::set<std::uint16_t>>> event_id_filter(
    const std::vector<FilterDef>& filters) {
  for (const FilterDef& f : filters) {
    if (f.type != EVENT_FILTER_TYPE_EVENT_ID || f.data.size() < 4) continue;
    const std::size_t count = f.data[2] | (f.data[3] << 8);
    std::set<std::uint16_t> ids;
    for (std::size_t i = 0; i < count && 4 + 2 * i + 1 < f.data.size(); ++i) {
      ids.insert(static_cast<std::uint16_t>(f.data[4 + 2 * i] | (f.data[5 + 2 * i] << 8)));
    }
    return std::make_pair(f.data[0] != 0, ids);
  }
  return std::nullopt;
}

StepExpectation Model::apply(const Step& step) {
  StepExpectation e;
  switch (step.op) {
    case StepOp::kStart: start(step, e); break;
    case StepOp::kStop: stop(step, e); break;
    case StepOp::kRegister: do_register(step, e); break;
    case StepOp::kUnregister: unregister(step, e); break;
    case StepOp::kEnable: enable(step, e); break;
    case StepOp::kDisable: disable(step, e); break;
    case StepOp::kCaptureState: capture_state(step, e); break;
    case StepOp::kSetTraits: set_traits(step, e); break;
    case StepOp::kQueryEnabled: query_enabled(step, e); break;
    case StepOp::kExitAgent:
    case StepOp::kKillAgent: agent_gone(step); break;
    case StepOp::kConsume: consume(step, e); break;
    case StepOp::kWrite: write(step, e); break;
    case StepOp::kFlush:
      if (started_.count(step_session(step))) e.status = ERROR_SUCCESS;
      break;
    case StepOp::kCollect: collect(step, e); break;
    case StepOp::kLastError: last_error(step, e); break;
    case StepOp::kDisallow: disallow(step, e); break;
    case StepOp::kRegisterClassic:
    case StepOp::kUnregisterClassic:
    case StepOp::kTraceEvent:
    case StepOp::kTraceMessage: break;  // classic::expect adds these (classic_steps.cc).
    case StepOp::kSubjectWrite:
    case StepOp::kInjectCallback:
      break;  // the provider's side: harness/subject_oracle.* judges what it writes
  }
  if (step.expect_status) {
    e.status_nonzero = step.expect_status->nonzero;
    e.status =
        step.expect_status->nonzero ? std::nullopt : std::optional(step.expect_status->value);
  }
  return e;
}

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
  started_.insert(ss.session);
  e.status = ERROR_SUCCESS;
}

void Model::stop(const Step& step, StepExpectation& e) {
  const SessionStep& ss = step_body<SessionStep>(step);
  if (!started_.count(ss.session)) return;
  started_.erase(ss.session);
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

void Model::set_traits(const Step& step, StepExpectation& e) {
  const TraitsStep& t = step_body<TraitsStep>(step);
  if (!registered_.count(t.provider)) return;
  const bool attempted_before = traits_attempted_.count(t.provider) > 0;
  traits_attempted_.insert(t.provider);
  // A structured blob is well-formed by construction (the loader bounds its size).
  if (t.raw && traits_blob_error(t.blob)) {
    e.status_nonzero = true;
    e.status_rule = rules::kTrFormat;
  } else if (traits_set_.count(t.provider)) {
    e.status_nonzero = true;
    e.status_rule = rules::kTrSetOnce;
  } else if (!attempted_before) {
    // Whether a rejected malformed blob used up the one chance is not documented.
    e.status = ERROR_SUCCESS;
    e.status_rule = t.raw ? rules::kTrFormat : rules::kTrSetOnce;
    traits_set_.insert(t.provider);
    if (!t.raw && t.group) {
      // Joining a group some session enabled enables the registration (GRP-ENABLE).
      const auto before = snapshot();
      member_group_[t.provider] = format_guid(*t.group);
      notify_diff(before, e, rules::kGrpEnable, "traits naming group " + member_group_[t.provider],
                  kNullGuid, "");
    }
  }
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

void Model::agent_gone(const Step& step) {
  const AgentStep& a = step_body<AgentStep>(step);
  for (const auto& [label, def] : case_.providers) {
    if (def.agent == a.agent) registered_.erase(label);
  }
}

bool Model::case_has(const std::string& rule) const {
  return std::find(case_.rules.begin(), case_.rules.end(), rule) != case_.rules.end();
}

}  // namespace detail

std::vector<StepExpectation> expect_case(const Case& c) {
  detail::Model model(c);
  std::vector<StepExpectation> out;
  out.reserve(c.steps.size());
  for (const Step& step : c.steps) out.push_back(model.apply(step));
  classic::expect(c, out);
  return out;
}

std::set<std::string> rules_judged(const StepExpectation& e) {
  std::set<std::string> out;
  const auto add = [&](const std::string& rule) {
    if (!rule.empty()) out.insert(rule);
  };
  add(e.status_rule);
  add(e.provider_enabled_rule);
  add(e.event_enabled_rule);
  for (const std::string& rule : e.event_enabled_rules) add(rule);
  for (const ExpectedCallback& cb : e.callbacks) {
    add(cb.is_enabled_rule);
    add(cb.source_rule);
    add(cb.filter_rule);
    add(rules::kCbContext);
    if (cb.judge_values) {
      for (const char* rule : {rules::kCbLevelMax, rules::kCbAnyOr, rules::kCbAllAnd}) add(rule);
    }
  }
  if (e.timing != TimingExpect::kNone) add(rules::kCbTimeout);
  for (const classic::ExpectedControl& cb : e.classic.callbacks) {
    add(rules::kSesClassicOne);
    if (cb.code == WMI_ENABLE_EVENTS && !cb.takeover) add(rules::kHdrClassicLevel);
  }
  for (const ConsumerExpectation& c : e.consumers) {
    if (c.overwrite_logfile) add(rules::kConLogfileCopy);
    for (const ExpectedEvent& ev : c.events) {
      add(ev.rule);
      add(ev.flags_rule);
    }
    for (const auto& [seq, why] : c.excluded) add(why.rule);
  }
  return out;
}

}  // namespace etwh::oracle
