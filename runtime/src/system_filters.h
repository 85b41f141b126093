// etwrt: the system filters a session gives with EnableTraceEx2 that the event path applies
// per session (EVENT_FILTER_TYPE_PID, EVENT_FILTER_TYPE_EVENT_ID). Built by the client when a
// notification names the session; immutable afterwards, so EventWrite reads it without a lock.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

namespace etwrt {

struct SystemFilter {
  // EVENT_FILTER_TYPE_PID given and this process is not in it: the session takes nothing
  // from this process.
  bool process_excluded = false;
  // EVENT_FILTER_TYPE_EVENT_ID: FilterIn TRUE keeps only `ids`, FALSE drops them.
  bool has_ids = false;
  bool filter_in = true;
  std::vector<std::uint16_t> ids;  // sorted

  // Whether the session takes an event of this ID from this process (PID aside: a process
  // the session excludes is not given the session's pool at all).
  bool accepts_id(std::uint16_t id) const;
};

// Parses the broker's [[type, hex data], ...] for `process_id`; nullptr when the list holds
// nothing the event path applies. Malformed entries are ignored: the broker checked them.
std::unique_ptr<SystemFilter> parse_system_filters(const nlohmann::json& list,
                                                   std::uint32_t process_id);

}  // namespace etwrt
