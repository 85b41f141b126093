#include "event_json.h"

#include "win32_text.h"

#include <cstdint>

namespace etwh {

using nlohmann::json;

namespace {

json filter_json(const EVENT_FILTER_DESCRIPTOR* filter) {
  if (filter == nullptr) return nullptr;
  json out = {{"type", filter->Type}, {"size", filter->Size}, {"data", nullptr}};
  if (filter->Ptr != 0) {
    out["data"] = bytes_to_hex(reinterpret_cast<const void*>(filter->Ptr), filter->Size);
  }
  return out;
}

}  // namespace

json callback_arguments_json(LPCGUID source_id, ULONG is_enabled, UCHAR level, ULONGLONG match_any,
                             ULONGLONG match_all, const EVENT_FILTER_DESCRIPTOR* filter,
                             PVOID context) {
  return {{"source_id", source_id != nullptr ? json(format_guid(*source_id)) : json(nullptr)},
          {"is_enabled", is_enabled},
          {"level", level},
          {"match_any", format_hex(match_any)},
          {"match_all", format_hex(match_all)},
          {"filter", filter_json(filter)},
          {"context", format_hex(reinterpret_cast<std::uintptr_t>(context))}};
}

json descriptor_json(const EVENT_DESCRIPTOR& d) {
  return {{"id", d.Id},
          {"version", d.Version},
          {"channel", d.Channel},
          {"level", d.Level},
          {"opcode", d.Opcode},
          {"task", d.Task},
          {"keyword", format_hex(d.Keyword)}};
}

}  // namespace etwh
