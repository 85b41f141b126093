// Provider groups (GRP-*): group enables per session and the enables derived from them.
#include "broker_state.h"

#include "wire.h"
#if defined(ETWRT_MUTANTS)
#include "etwrt_mutant.h"
#endif

#include <evntprov.h>
#include <evntrace.h>

#include <algorithm>
#include <cstdio>

namespace etwrt::broker {

using json = nlohmann::json;

// A group enable is kept per session by group GUID; sync_groups() derives from it one enable
// per member provider GUID (a registration whose traits named the group), as if the session
// had enabled that provider directly, unless the session enables it directly or disallows it.
// Membership is by provider GUID: a registration of a member's GUID is reached too (etwrt
// choice; the documents do not say how registrations of one GUID with different traits mix).

std::optional<json> BrokerState::on_group_enable(PeerId peer, const EnableRequest& request,
                                                 const json& id, Session& session,
                                                 const GUID& source) {
  // GRP-NO-PRIVATE. No document names the status: etwrt returns ERROR_NOT_SUPPORTED.
  if ((session.log_file_mode & EVENT_TRACE_PRIVATE_LOGGER_MODE) != 0) {
    return json{{"status", ERROR_NOT_SUPPORTED}};
  }
  const std::string gkey = guid_key(request.provider);  // The group's GUID.
  const ULONG code = request.code;
  if (code > EVENT_CONTROL_CODE_CAPTURE_STATE) return json{{"status", ERROR_INVALID_PARAMETER}};
  const std::uint64_t wait_id = begin_wait(request.wait, peer, id);
  int sent = 0;
  if (code == EVENT_CONTROL_CODE_ENABLE_PROVIDER) {
    Enable e = enable_from(request, source);
    // GRP-NO-ID-FILTERS (observed): event ID, event name and payload filters do not apply to
    // groups; scope filters (PID) do.
    std::erase_if(e.system_filters, [](const FilterBlob& b) {
      return b.type == EVENT_FILTER_TYPE_EVENT_ID || b.type == EVENT_FILTER_TYPE_EVENT_NAME ||
             b.type == EVENT_FILTER_TYPE_PAYLOAD;
    });
    session.group_enables[gkey] = std::move(e);
    sent = sync_groups(source, wait_id);
  } else if (code == EVENT_CONTROL_CODE_DISABLE_PROVIDER) {
    if (session.group_enables.erase(gkey) > 0) sent = sync_groups(source, wait_id);
  } else {  // EVENT_CONTROL_CODE_CAPTURE_STATE
    std::set<std::string> keys;
    for (const Registration& r : registrations_) {
      if (r.group && guid_key(*r.group) == gkey) keys.insert(guid_key(r.guid));
    }
    for (const std::string& key : keys) {
      sent += notify(key, source, 2, request.level, request.any, request.all, nullptr, wait_id);
    }
  }
  return end_wait(wait_id, sent);
}

json BrokerState::on_disallow(const DisallowRequest& request) {
  Session* s = find_session(request.handle, "");
  if (s == nullptr) return {{"status", ERROR_INVALID_HANDLE}};
  std::set<std::string> keys;
  for (const GUID& guid : request.guids) keys.insert(guid_key(guid));
  // The list replaces the previous one and applies to what is enabled already (GRP-DISALLOW).
  s->disallow = std::move(keys);
  sync_groups(s->guid, 0);
  return {{"status", ERROR_SUCCESS}};
}

int BrokerState::sync_groups(const GUID& source, std::uint64_t wait_id) {
  std::map<std::string, std::set<std::string>> member_groups;  // provider key -> group keys
  for (const Registration& r : registrations_) {
    if (r.group) member_groups[guid_key(r.guid)].insert(guid_key(*r.group));
  }
  std::map<std::string, GUID> changed;  // provider key -> SourceId of its notification
  for (auto& [handle, s] : sessions_) {
    std::map<std::string, std::pair<std::string, const Enable*>> want;  // key -> (group, enable)
    for (const auto& [key, groups] : member_groups) {
#if defined(ETWRT_MUTANTS)
      // Mutant: the session's disallow list is ignored.
      if (!etwrt::mutant::active("disallow-ignored"))
#endif
        if (s.disallow.contains(key)) continue;
      for (const std::string& g : groups) {
        auto it = s.group_enables.find(g);
        if (it == s.group_enables.end()) continue;
        want[key] = {g, &it->second};
        break;
      }
    }
    std::vector<std::string> gone;
    for (auto& [key, e] : s.enables) {
      if (e.via_group.empty()) continue;
      auto w = want.find(key);
      if (w == want.end()) {
        gone.push_back(key);
        continue;
      }
      const Enable& g = *w->second.second;
      if (e.via_group != w->second.first || e.filter.level != g.filter.level ||
          e.filter.match_any != g.filter.match_any || e.filter.match_all != g.filter.match_all ||
          e.filter.enable_property != g.filter.enable_property) {
        e = g;
        e.via_group = w->second.first;
        changed.emplace(key, g.source);
      }
    }
    for (const std::string& key : gone) {
      s.enables.erase(key);
      auto& slots = slots_[key];
      std::replace(slots.begin(), slots.end(), handle, std::uint64_t{0});
      changed.emplace(key, source);
    }
    for (const auto& [key, w] : want) {
      if (s.enables.contains(key)) continue;  // Enabled directly, or derived already.
      auto& slots = slots_[key];
      auto free = std::find(slots.begin(), slots.end(), std::uint64_t{0});
      if (free == slots.end()) {
        std::fprintf(stderr,
                     "etwrt-broker: session %s: group enable of a provider that already "
                     "has %zu sessions not applied\n",
                     s.name.c_str(), kMaxSessionsPerProvider);
        continue;
      }
      *free = handle;
      Enable e = *w.second;
      e.via_group = w.first;
      s.enables[key] = std::move(e);
      changed.emplace(key, w.second->source);
    }
  }
  int sent = 0;
  for (const auto& [key, src] : changed) sent += notify_aggregate(key, src, wait_id);
  return sent;
}

}  // namespace etwrt::broker
