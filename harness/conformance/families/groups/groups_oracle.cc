// The oracle's provider groups (GRP-*): a provider's effective sessions through its group,
// disallow lists, and the callbacks a group enable or a disallow list causes.
#include "harness/conformance/oracle_model.h"
#include "harness/model/rules.h"
#include "harness/conformance/families/groups/groups_ops.h"
#include "harness/conformance/families/sessions/sessions_ops.h"
#include "win32_text.h"

#include <evntprov.h>
#include <evntrace.h>

#include <algorithm>

namespace etwh::oracle::detail {

// The sessions enabling registration `label`: its GUID's own enables, plus the group enable
// of each session that enabled the group its traits named, unless that session enables the
// GUID directly or disallows it (GRP-ENABLE, GRP-DISALLOW). Event ID filters given with a
// group enable do not apply (GRP-NO-ID-FILTERS).
Model::SessionMap Model::effective(const std::string& label) const {
  const std::string guid_key = key(label);
  auto direct = enables_.find(guid_key);
  SessionMap m = direct == enables_.end() ? SessionMap{} : direct->second;
  auto member = member_group_.find(label);
  if (member == member_group_.end()) return m;
  auto groups = group_enables_.find(member->second);
  if (groups == group_enables_.end()) return m;
  for (const auto& [session, en] : groups->second) {
    if (m.count(session)) continue;
    auto dis = disallow_.find(session);
    if (dis != disallow_.end() && dis->second.count(guid_key)) continue;
    Enable derived = en;
    derived.via_group = true;
    derived.ids_ignored = en.event_ids.has_value();
    derived.event_ids.reset();
    m[session] = derived;
  }
  return m;
}

bool Model::disallowed_group(const std::string& session, const std::string& label) const {
  auto member = member_group_.find(label);
  auto dis = disallow_.find(session);
  if (member == member_group_.end() || dis == disallow_.end()) return false;
  auto groups = group_enables_.find(member->second);
  return groups != group_enables_.end() && groups->second.count(session) &&
         dis->second.count(key(label));
}

// The sessions enabling each registered provider with a callback, to compare after a change.
std::map<std::string, Model::SessionMap> Model::snapshot() const {
  std::map<std::string, SessionMap> out;
  for (const auto& [label, def] : case_.providers) {
    if (registered_.count(label) && def.has_callback) out[label] = effective(label);
  }
  return out;
}

// One callback to every registration whose enabling sessions changed since `before`.
void Model::notify_diff(const std::map<std::string, SessionMap>& before, StepExpectation& e,
                        const std::string& is_enabled_rule, const std::string& cause,
                        const GUID& source, const std::string& source_rule) {
  for (const auto& [label, old] : before) {
    const SessionMap now = effective(label);
    bool same = now.size() == old.size();
    for (auto a = now.begin(), b = old.begin(); same && a != now.end(); ++a, ++b) {
      same = a->first == b->first && same_enable(a->second, b->second);
    }
    if (same) continue;
    push_callback(case_.providers.at(label), now, e, is_enabled_rule, cause, source, source_rule);
  }
}

bool Model::is_private(const std::string& session) const {
  const nlohmann::json& settings = case_.sessions.at(session).settings;
  return settings.contains("log_file_mode") && settings["log_file_mode"].is_number_unsigned() &&
         (settings["log_file_mode"].get<std::uint32_t>() & EVENT_TRACE_PRIVATE_LOGGER_MODE) != 0;
}

// enable / disable of a provider group (EVENT_ENABLE_PROPERTY_PROVIDER_GROUP).
void Model::group_enable(const Step& step, StepExpectation& e) {
  const ControlStep& call = step_body<ControlStep>(step);
  if (is_private(call.session)) {
    e.status_nonzero = true;
    e.status_rule = rules::kGrpNoPrivate;
    return;
  }
  const std::string group = format_guid(*call.group);
  const auto before = snapshot();
  if (step.op == ops::kEnable) {
    Enable& en = group_enables_[group][call.session];
    en.settings = SessionEnable{call.level, call.match_any, call.match_all, call.enable_property};
    en.has_filter = std::any_of(call.filters.begin(), call.filters.end(), provider_bound);
    en.event_ids = event_id_filter(call.filters);
  } else if (group_enables_[group].erase(call.session) == 0) {
    e.status = ERROR_SUCCESS;
    return;
  }
  e.status = ERROR_SUCCESS;
  e.status_rule = rules::kGrpEnable;
  const auto [source, source_rule] = expected_source(step);
  notify_diff(before, e, rules::kGrpEnable,
              std::string(step.op == ops::kEnable ? "enable" : "disable") + " of group " + group +
                  " by session " + call.session,
              source, source_rule);
  timing(step, e);
}

// disallow: TraceSetInformation(TraceSetDisallowList) replaces the session's list; what it
// enabled through groups follows at once (GRP-DISALLOW).
void Model::disallow(const Step& step, StepExpectation& e) {
  const DisallowStep& d = step_body<DisallowStep>(step);
  if (!started_.count(d.session)) return;
  const auto before = snapshot();
  std::set<std::string> keys;
  for (const std::string& label : d.providers) keys.insert(key(label));
  disallow_[d.session] = keys;
  e.status = ERROR_SUCCESS;
  e.status_rule = rules::kGrpDisallow;
  notify_diff(before, e, rules::kGrpDisallow, "disallow list of session " + d.session, kNullGuid,
              "");
}

}  // namespace etwh::oracle::detail
