// etwrt-broker: EnumerateTraceGuidsEx's answers (TraceGuidQueryList, TraceGuidQueryInfo): the
// providers registered or enabled, and for one GUID each registration with the sessions that
// enable it, with which level, keywords and properties.
#include "broker_state.h"
#include "wire.h"

#include <cstring>
#include <set>
#include <string>

namespace etwrt::broker {

using json = nlohmann::json;

json BrokerState::on_providers(PeerId peer_id, const ProvidersRequest& request) const {
  if (!request.guid) {
    // Registered GUIDs (only the asking process's for TraceGuidQueryProcess), and for
    // TraceGuidQueryList GUIDs a session enables before any registration (etwrt choice:
    // TraceGuidQueryInfo reports those as TRACE_PROVIDER_FLAG_PRE_ENABLE instances).
    // Keys are the GUIDs' raw bytes (guid_key); the reply carries them in wire form.
    std::set<std::string> keys;
    for (const Registration& r : registrations_) {
      if (!request.this_process || r.peer == peer_id) keys.insert(guid_key(r.guid));
    }
    for (const auto& [handle, s] : sessions_) {
      if (request.this_process) break;
      for (const auto& [key, enable] : s.enables) keys.insert(key);
    }
    json guids = json::array();
    for (const std::string& key : keys) {
      GUID g;
      std::memcpy(&g, key.data(), sizeof g);
      guids.push_back(guid_to_wire(g));
    }
    return {{"status", ERROR_SUCCESS}, {"guids", std::move(guids)}};
  }
  const std::string key = guid_key(*request.guid);
  json enables = json::array();
  for (const auto& [handle, s] : sessions_) {
    const auto it = s.enables.find(key);
    if (it == s.enables.end()) continue;
    const SessionFilter& f = it->second.filter;
    enables.push_back({{"logger", handle},
                       {"level", f.level},
                       {"any", f.match_any},
                       {"all", f.match_all},
                       {"property", f.enable_property}});
  }
  json instances = json::array();
  for (const Registration& r : registrations_) {
    if (guid_key(r.guid) != key) continue;
    const auto peer = peers_.find(r.peer);
    instances.push_back({{"pid", peer != peers_.end() ? peer->second.pid : 0},
                         {"legacy", r.classic},
                         {"pre_enable", false},
                         {"enables", enables}});
  }
  if (instances.empty() && !enables.empty()) {
    instances.push_back(
        {{"pid", 0}, {"legacy", false}, {"pre_enable", true}, {"enables", enables}});
  }
  // A GUID nobody registered or enabled (etwrt choice of code: WMI's "GUID not found").
  if (instances.empty()) return {{"status", ERROR_WMI_GUID_NOT_FOUND}};
  return {{"status", ERROR_SUCCESS}, {"instances", std::move(instances)}};
}

// The session limit always; the session's disallow list when `request.handle` names one
// (a handle of no session: ERROR_WMI_INSTANCE_NOT_FOUND with the limit still given).
json BrokerState::on_session_info(const SessionInfoRequest& request) {
  json reply = {{"status", ERROR_SUCCESS}, {"max_sessions", max_sessions_}};
  const Session* s = request.handle != 0 ? find_session(request.handle, "") : nullptr;
  if (s == nullptr) {
    reply["status"] = ERROR_WMI_INSTANCE_NOT_FOUND;
    return reply;
  }
  json disallow = json::array();
  for (const std::string& key : s->disallow) {
    GUID g;
    std::memcpy(&g, key.data(), sizeof g);
    disallow.push_back(guid_to_wire(g));
  }
  reply["disallow"] = std::move(disallow);
  return reply;
}

}  // namespace etwrt::broker
