// etwrt: validation of the filter descriptors that EnableTraceEx2 / EnableTraceEx receive,
// against the documented limits, and their split into the one provider-bound filter (handed
// to the enable callback) and the system filters (kept by the session for the event path).
#pragma once

#include <windows.h>
#include <evntrace.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace etwrt {

struct FilterBlob {
  ULONG type = 0;
  std::vector<std::uint8_t> data;
};

struct EnableFilters {
  // EVENT_FILTER_TYPE_SCHEMATIZED (its EVENT_FILTER_HEADER with InstanceId and NextOffset
  // cleared) or a provider-defined type (no high bit), copied as given.
  std::optional<FilterBlob> provider_bound;
  std::vector<FilterBlob> system;
};

struct FilterCheck {
  ULONG status = ERROR_SUCCESS;
  std::string reason;
  EnableFilters filters;
};

// Checks `count` descriptors at `descriptors`: at most MAX_EVENT_FILTERS_COUNT, one of each
// type, each within its type's documented limits, a non-NULL Ptr whenever Size > 0, and at
// most one provider-bound filter (etwrt choice: a session hands the provider one filter).
// Any violation -> ERROR_INVALID_PARAMETER and nothing kept.
FilterCheck check_filters(const EVENT_FILTER_DESCRIPTOR* descriptors, ULONG count);

}  // namespace etwrt
