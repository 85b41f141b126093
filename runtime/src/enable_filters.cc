#include "enable_filters.h"

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <set>

namespace etwrt {
namespace {

FilterCheck fail(std::string reason) {
  FilterCheck check;
  check.status = ERROR_INVALID_PARAMETER;
  check.reason = std::move(reason);
  return check;
}

std::string hex(ULONG v) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", v);
  return text;
}

// The largest Size each system filter type may have (documented limits in evntprov.h).
std::optional<ULONG> system_limit(ULONG type) {
  switch (type) {
    case EVENT_FILTER_TYPE_PID: return MAX_EVENT_FILTER_PID_COUNT * sizeof(ULONG);
    case EVENT_FILTER_TYPE_PAYLOAD: return MAX_EVENT_FILTER_PAYLOAD_SIZE;
    case EVENT_FILTER_TYPE_EVENT_NAME: return MAX_EVENT_FILTER_EVENT_NAME_SIZE;
    case EVENT_FILTER_TYPE_EVENT_ID:
    case EVENT_FILTER_TYPE_STACKWALK:
    case EVENT_FILTER_TYPE_EXECUTABLE_NAME:
    case EVENT_FILTER_TYPE_PACKAGE_ID:
    case EVENT_FILTER_TYPE_PACKAGE_APP_ID:
    case EVENT_FILTER_TYPE_STACKWALK_NAME:
    case EVENT_FILTER_TYPE_STACKWALK_LEVEL_KW:
    case EVENT_FILTER_TYPE_CONTAINER:
    case EVENT_FILTER_TYPE_SYSTEM_FLAGS:
    case EVENT_FILTER_TYPE_TRACEHANDLE: return MAX_EVENT_FILTER_DATA_SIZE;
    default: return std::nullopt;
  }
}

}  // namespace

FilterCheck check_filters(const EVENT_FILTER_DESCRIPTOR* descriptors, ULONG count) {
  FilterCheck out;
  if (count == 0) return out;
  if (descriptors == nullptr) return fail("FilterDescCount > 0 with NULL EnableFilterDesc");
  if (count > MAX_EVENT_FILTERS_COUNT) {
    return fail("more than MAX_EVENT_FILTERS_COUNT (" + std::to_string(MAX_EVENT_FILTERS_COUNT) +
                ") filter descriptors");
  }
  std::set<ULONG> seen;
  for (ULONG i = 0; i < count; ++i) {
    const EVENT_FILTER_DESCRIPTOR& d = descriptors[i];
    const std::string where = "filter " + std::to_string(i) + " (type " + hex(d.Type) + "): ";
    if (!seen.insert(d.Type).second) return fail(where + "type given twice");
    if (d.Size > 0 && d.Ptr == 0) return fail(where + "Size > 0 with a NULL Ptr");
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(static_cast<std::uintptr_t>(d.Ptr));
    FilterBlob blob;
    blob.type = d.Type;
    if (d.Size > 0) blob.data.assign(bytes, bytes + d.Size);

    if (d.Type == EVENT_FILTER_TYPE_SCHEMATIZED) {
      if (d.Size < sizeof(EVENT_FILTER_HEADER) || d.Size > MAX_EVENT_FILTER_DATA_SIZE) {
        return fail(where + "Size " + std::to_string(d.Size) +
                    " outside [sizeof(EVENT_FILTER_HEADER), MAX_EVENT_FILTER_DATA_SIZE]");
      }
      EVENT_FILTER_HEADER header;
      std::memcpy(&header, blob.data.data(), sizeof header);
      if (header.Size != d.Size) {
        return fail(where + "EVENT_FILTER_HEADER.Size " + std::to_string(header.Size) +
                    " differs from the descriptor Size " + std::to_string(d.Size));
      }
      // The session, not the controller, owns these two fields (ETW sets them per session).
      header.InstanceId = 0;
      header.NextOffset = 0;
      std::memcpy(blob.data.data(), &header, sizeof header);
    } else if ((d.Type & 0x80000000u) != 0) {
      const auto limit = system_limit(d.Type);
      if (!limit) return fail(where + "unknown system filter type");
      if (d.Size == 0 || d.Size > *limit) {
        return fail(where + "Size " + std::to_string(d.Size) + " outside [1, " +
                    std::to_string(*limit) + "]");
      }
      if (d.Type == EVENT_FILTER_TYPE_PID && d.Size % sizeof(ULONG) != 0) {
        return fail(where + "Size is not a whole number of PIDs");
      }
      if (d.Type == EVENT_FILTER_TYPE_EVENT_ID) {
        const std::size_t head = offsetof(EVENT_FILTER_EVENT_ID, Events);
        if (d.Size < head) return fail(where + "shorter than EVENT_FILTER_EVENT_ID");
        EVENT_FILTER_EVENT_ID ids;
        std::memcpy(&ids, bytes, head);
        if (ids.Count == 0 || ids.Count > MAX_EVENT_FILTER_EVENT_ID_COUNT) {
          return fail(where + "Count " + std::to_string(ids.Count) + " outside [1, " +
                      std::to_string(MAX_EVENT_FILTER_EVENT_ID_COUNT) + "]");
        }
        if (d.Size < head + ids.Count * sizeof(USHORT)) {
          return fail(where + "Size too small for Count event IDs");
        }
      }
      out.filters.system.push_back(std::move(blob));
      continue;
    } else if (d.Size > MAX_EVENT_FILTER_DATA_SIZE) {
      return fail(where + "Size " + std::to_string(d.Size) + " > MAX_EVENT_FILTER_DATA_SIZE");
    }
    if (out.filters.provider_bound) {
      return fail(where + "a second provider-bound filter (one per session)");
    }
    out.filters.provider_bound = std::move(blob);
  }
  return out;
}

}  // namespace etwrt
