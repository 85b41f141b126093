// EventActivityIdControl: the calling thread's activity ID, which EventWrite and
// EventWriteEx give an event by default (api.cc).
#include "api_shared.h"
#include "replies.h"

#include <windows.h>
#include <evntprov.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <random>
#include <utility>

namespace {

// Unique in this process by the counter, across processes by the random half.
GUID new_activity_id() {
  static const std::uint64_t base = [] {
    std::random_device device;
    return (std::uint64_t{device()} << 32) ^ device();
  }();
  static std::atomic<std::uint64_t> counter{1};
  const std::uint64_t serial = counter.fetch_add(1, std::memory_order_relaxed);
  GUID g;
  std::memcpy(&g, &serial, 8);
  std::memcpy(reinterpret_cast<char*>(&g) + 8, &base, 8);
  return g;
}

}  // namespace

extern "C" {

ULONG EVNTAPI EventActivityIdControl(ULONG ControlCode, LPGUID ActivityId) {
  return etwrt::guarded("EventActivityIdControl", [&]() -> ULONG {
    if (ActivityId == nullptr) return ERROR_INVALID_PARAMETER;
    switch (ControlCode) {
      case EVENT_ACTIVITY_CTRL_GET_ID: *ActivityId = etwrt::t_activity_id; return ERROR_SUCCESS;
      case EVENT_ACTIVITY_CTRL_SET_ID: etwrt::t_activity_id = *ActivityId; return ERROR_SUCCESS;
      case EVENT_ACTIVITY_CTRL_CREATE_ID: *ActivityId = new_activity_id(); return ERROR_SUCCESS;
      case EVENT_ACTIVITY_CTRL_GET_SET_ID:
        std::swap(*ActivityId, etwrt::t_activity_id);
        return ERROR_SUCCESS;
      case EVENT_ACTIVITY_CTRL_CREATE_SET_ID:
        *ActivityId = std::exchange(etwrt::t_activity_id, new_activity_id());
        return ERROR_SUCCESS;
      default: return ERROR_INVALID_PARAMETER;
    }
  });
}

}  // extern "C"
