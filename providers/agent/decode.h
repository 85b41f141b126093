// An event as TDH decodes it (the platform's tdh.h: Windows' TDH, etwrt's subset), for the
// consumer's records: the event's name and each top-level property as text, so that the driver
// can show what an event held instead of its bytes (PROTOCOL.md, `decoded`).
#pragma once

#include <windows.h>
#include <evntcons.h>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace etwh::agent {

// {"name": event name (or "" when TDH gives none), "fields": [{"name", "value"}]}, or
// {"status": N} when TdhGetEventInformation fails. `skip` bytes at the start of the event data
// are left out (the driver's own sequence number, which no schema describes).
nlohmann::json decode_event(const EVENT_RECORD& record, std::size_t skip);

// TdhGetEventInformation's TRACE_EVENT_INFO for the record, in a buffer of the size TDH asks
// for; `status` is TDH's (the buffer is empty or partial unless it is ERROR_SUCCESS).
std::vector<std::uint8_t> event_information(const EVENT_RECORD& record, ULONG& status);

// One value's bytes as decode_event shows them, by the property's TDH InType; bytes in another
// size than the type's as hex. For decoders that read a payload in place (etwh::testing's).
std::string value_text(USHORT in_type, const std::uint8_t* bytes, std::size_t size);

// decode_event shows this many bytes of a field's text at most, then "...".
inline constexpr std::size_t kMaxValueText = 256;

// The descriptor's fields, into a struct that names them as the readers of records do (a
// recorded trace's event kinds, etwh::testing's events): id, version, channel, level, opcode,
// task, keyword.
template <class Fields>
void copy_descriptor(const EVENT_DESCRIPTOR& d, Fields& out) {
  out.id = d.Id;
  out.version = d.Version;
  out.channel = d.Channel;
  out.level = d.Level;
  out.opcode = d.Opcode;
  out.task = d.Task;
  out.keyword = d.Keyword;
}

}  // namespace etwh::agent
