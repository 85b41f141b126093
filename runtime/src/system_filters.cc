#include "system_filters.h"

#include "wire.h"

#include <windows.h>
#include <evntprov.h>

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace etwrt {

bool SystemFilter::accepts_id(std::uint16_t id) const {
  if (!has_ids) return true;
  return std::binary_search(ids.begin(), ids.end(), id) == filter_in;
}

std::unique_ptr<SystemFilter> parse_system_filters(const nlohmann::json& list,
                                                   std::uint32_t process_id) {
  if (!list.is_array() || list.empty()) return nullptr;
  auto out = std::make_unique<SystemFilter>();
  bool any = false;
  for (const nlohmann::json& entry : list) {
    if (!entry.is_array() || entry.size() != 2 || !entry[0].is_number_unsigned() ||
        !entry[1].is_string()) {
      continue;
    }
    const auto type = entry[0].get<std::uint32_t>();
    std::vector<std::uint8_t> data;
    if (!hex_to_bytes(entry[1].get<std::string>(), data)) continue;
    if (type == EVENT_FILTER_TYPE_PID) {
      bool listed = false;
      for (std::size_t at = 0; at + sizeof(ULONG) <= data.size(); at += sizeof(ULONG)) {
        ULONG pid;
        std::memcpy(&pid, data.data() + at, sizeof pid);
        listed = listed || pid == process_id;
      }
      out->process_excluded = !listed;
      any = true;
    } else if (type == EVENT_FILTER_TYPE_EVENT_ID) {
      const std::size_t head = offsetof(EVENT_FILTER_EVENT_ID, Events);
      if (data.size() < head) continue;
      EVENT_FILTER_EVENT_ID header;
      std::memcpy(&header, data.data(), head);
      if (data.size() < head + std::size_t{header.Count} * sizeof(USHORT)) continue;
      out->has_ids = true;
      out->filter_in = header.FilterIn != FALSE;
      out->ids.resize(header.Count);
      std::memcpy(out->ids.data(), data.data() + head, header.Count * sizeof(USHORT));
      std::sort(out->ids.begin(), out->ids.end());
      any = true;
    }
  }
  return any ? std::move(out) : nullptr;
}

}  // namespace etwrt
