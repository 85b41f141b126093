// The JSON forms of the protocol (providers/PROTOCOL.md) that more than one side writes: a
// callback's arguments (the agent's and the provider-under-test adapter's lines) and an event
// descriptor (those lines, the consumer's records and the driver's requests), written once so
// that they cannot drift apart.
#pragma once

#include <windows.h>
#include <evntprov.h>

#include <nlohmann/json.hpp>

namespace etwh {

// The arguments of one PENABLECALLBACK invocation: source_id, is_enabled, level, match_any,
// match_all, filter (with its bytes, copied now: FilterData is only valid during the callback)
// and context. The caller adds who was called and when.
nlohmann::json callback_arguments_json(LPCGUID source_id, ULONG is_enabled, UCHAR level,
                                       ULONGLONG match_any, ULONGLONG match_all,
                                       const EVENT_FILTER_DESCRIPTOR* filter, PVOID context);

// id, version, channel, level, opcode, task and keyword (as "0x..." hex).
nlohmann::json descriptor_json(const EVENT_DESCRIPTOR& d);

}  // namespace etwh
