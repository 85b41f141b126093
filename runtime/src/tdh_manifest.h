// tdh.h for events of loaded manifests (TdhLoadManifest): tdh.cc asks here when an event has
// no TraceLogging schema item.
#pragma once

#include <windows.h>
#include <tdh.h>

#include <cstddef>
#include <span>
#include <string>

namespace etwrt::tdh {

// UTF-8 to UTF-16 units (tdh.cc).
std::u16string utf16(const std::string& text);

// A TDH structure's answer (tdh.cc): its fixed part, then the UTF-16 strings its offsets point
// at, into the caller's buffer of *size bytes. *size says the size needed; a buffer too small
// (or none) is ERROR_INSUFFICIENT_BUFFER, and nothing is written.
ULONG copy_out(std::span<const std::byte> fixed, std::span<const char16_t> strings, void* buffer,
               ULONG* size);

// ERROR_NOT_FOUND when no loaded manifest defines the event (provider, Id, Version).
ULONG manifest_event_information(const EVENT_RECORD* e, TRACE_EVENT_INFO* buffer, ULONG* size);

// The bytes of the property `d` names (count descriptors: a field, or a struct and a member).
ULONG manifest_property(const EVENT_RECORD* e, ULONG count, const PROPERTY_DATA_DESCRIPTOR* d,
                        std::span<const std::byte>& out);

// TdhGetEventMapInformation for events of loaded manifests; ERROR_NOT_FOUND for no such map.
ULONG manifest_map_information(const EVENT_RECORD* e, const std::u16string& name,
                               EVENT_MAP_INFO* buffer, ULONG* size);

}  // namespace etwrt::tdh
