// The per-provider aggregates, the FilterData chain and the notifications that carry them.
#include "broker_state.h"

#include "wire.h"
#if defined(ETWRT_MUTANTS)
#include "etwrt_mutant.h"
#endif

#include <evntprov.h>
#include <evntrace.h>

#include <algorithm>
#include <cstring>

namespace etwrt::broker {

using json = nlohmann::json;

std::vector<std::pair<int, const Enable*>> BrokerState::enables_of(const std::string& key) const {
  std::vector<std::pair<int, const Enable*>> out;
  auto slots = slots_.find(key);
  if (slots == slots_.end()) return out;
  for (int slot = 0; slot < static_cast<int>(kMaxSessionsPerProvider); ++slot) {
    const std::uint64_t handle = slots->second[slot];
    if (handle == 0) continue;
    const Session& s = sessions_.at(handle);
    out.emplace_back(slot, &s.enables.at(key));
  }
  return out;
}

json BrokerState::sessions_json(const std::string& key) const {
  json list = json::array();
  for (const auto& [slot, e] : enables_of(key)) {
    const Session& s = sessions_.at(slots_.at(key)[slot]);
    // The system filters the event path applies for this session (system_filters.h).
    json system = json::array();
    for (const FilterBlob& f : e->system_filters) {
      if (f.type == EVENT_FILTER_TYPE_PID || f.type == EVENT_FILTER_TYPE_EVENT_ID) {
        system.push_back({f.type, bytes_to_hex(f.data.data(), f.data.size())});
      }
    }
    list.push_back({e->filter.level, e->filter.match_any, e->filter.match_all,
                    e->filter.enable_property, s.pool_id, slot, system});
  }
  return list;
}

// Level = max, MatchAny = OR, MatchAll = AND over the enabling sessions; all 0 with none.
json BrokerState::aggregate_json(const std::string& key, ULONG is_enabled) const {
  UCHAR level = 0;
  std::uint64_t any = 0;
  std::uint64_t all = 0;
  bool first = true;
  for (const auto& [slot, e] : enables_of(key)) {
    level = std::max(level, e->filter.level);
    any |= e->filter.match_any;
    all = first ? e->filter.match_all : (all & e->filter.match_all);
    first = false;
  }
#if defined(ETWRT_MUTANTS)
  // Mutants: Level min instead of max, MatchAll OR instead of AND, MatchAny AND instead of OR.
  bool mutant_first = true;
  for (const auto& [slot, e] : enables_of(key)) {
    const auto& f = e->filter;
    if (etwrt::mutant::active("level-min"))
      level = mutant_first ? f.level : std::min(level, f.level);
    if (etwrt::mutant::active("all-or")) all = mutant_first ? f.match_all : (all | f.match_all);
    if (etwrt::mutant::active("any-and")) any = mutant_first ? f.match_any : (any & f.match_any);
    mutant_first = false;
  }
#endif
  return {{"is_enabled", first ? 0u : is_enabled},
          {"level", level},
          {"any", any},
          {"all", all},
          {"sessions", sessions_json(key)}};
}

// One SCHEMATIZED descriptor whose data chains one EVENT_FILTER_HEADER block per enabling
// session that gave a provider-bound filter (seed 000: one filter from each such session),
// InstanceId = 1 << slot, NextOffset = distance to the next block (0 on the last). A
// provider-defined filter (no high bit) gets a header etwrt synthesizes: Id 0, Version 0,
// Size = header + data, its bytes after the header (etwrt choice: the documents name no other
// way to carry several sessions' filters in one descriptor). Blocks start on 8-byte boundaries
// so providers can read headers in place.
json BrokerState::filter_chain(const std::string& key) const {
  std::vector<std::uint8_t> chain;
  std::size_t last_header = 0;
  bool any = false;
  for (const auto& [slot, e] : enables_of(key)) {
    if (!e->provider_filter) continue;
    const FilterBlob& blob = *e->provider_filter;
    while (chain.size() % 8 != 0) chain.push_back(0);
    const std::size_t at = chain.size();
    if (any) {
      EVENT_FILTER_HEADER previous;
      std::memcpy(&previous, chain.data() + last_header, sizeof previous);
      previous.NextOffset = static_cast<ULONG>(at - last_header);
      std::memcpy(chain.data() + last_header, &previous, sizeof previous);
    }
    EVENT_FILTER_HEADER header{};
    if (blob.type == EVENT_FILTER_TYPE_SCHEMATIZED) {
      chain.insert(chain.end(), blob.data.begin(), blob.data.end());
      std::memcpy(&header, chain.data() + at, sizeof header);
    } else {
      header.Size = static_cast<ULONG>(sizeof header + blob.data.size());
      chain.resize(at + sizeof header);
      chain.insert(chain.end(), blob.data.begin(), blob.data.end());
    }
    header.InstanceId = 1ull << slot;
    header.NextOffset = 0;
    std::memcpy(chain.data() + at, &header, sizeof header);
    last_header = at;
    any = true;
  }
  if (!any) return nullptr;
  return {{"type", EVENT_FILTER_TYPE_SCHEMATIZED},
          {"data", bytes_to_hex(chain.data(), chain.size())}};
}

int BrokerState::notify(const std::string& key, const GUID& source, ULONG is_enabled, UCHAR level,
                        std::uint64_t any, std::uint64_t all, const json& filter,
                        std::uint64_t wait_id) {
  json message = {{"op", "notify"},
                  {"source", guid_to_wire(source)},
                  {"is_enabled", is_enabled},
                  {"level", level},
                  {"any", any},
                  {"all", all},
                  {"filter", filter},
                  {"sessions", sessions_json(key)},
                  {"wait", wait_id}};
  int sent = 0;
  for (const Registration& r : registrations_) {
    if (guid_key(r.guid) != key) continue;
    message["token"] = r.token;
    send_pools(r.peer, key);  // Before the notification that names them.
    send(r.peer, message);
    // A peer that cannot be reached is disconnected after this request; that finishes its part.
    if (wait_id != 0) peers_.at(r.peer).pending_waits.push_back(wait_id);
    ++sent;
  }
  return sent;
}

int BrokerState::notify_aggregate(const std::string& key, const GUID& source,
                                  std::uint64_t wait_id) {
  const json agg = aggregate_json(key, 1);
  const json filter = agg["is_enabled"] != 0u ? filter_chain(key) : json(nullptr);
  return notify(key, source, agg["is_enabled"], agg["level"], agg["any"], agg["all"], filter,
                wait_id);
}

void BrokerState::finish_wait(std::uint64_t wait_id) {
  auto it = waits_.find(wait_id);
  if (it == waits_.end()) return;
  if (--it->second.remaining > 0) return;
  if (it->second.controller >= 0) {
    send(it->second.controller, {{"id", it->second.request_id}, {"status", ERROR_SUCCESS}});
  }
  waits_.erase(it);
}

void BrokerState::take_over_classic(const std::string& key) {
  const bool classic =
      std::any_of(registrations_.begin(), registrations_.end(),
                  [&](const Registration& r) { return r.classic && guid_key(r.guid) == key; });
  if (!classic) return;
  for (std::uint64_t& handle : slots_[key]) {
    if (handle == 0) continue;
    sessions_.at(handle).enables.erase(key);
    handle = 0;
  }
}

}  // namespace etwrt::broker
