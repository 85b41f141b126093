// Example.Greeter, written as a TraceLogging provider is: its ID hashed from its name, its
// traits (the name) set once after registering, each event's metadata (TraceLogging's
// encoding: size, tags, event name, then each field's name and InType) passed as a typed data
// descriptor before the fields. Its callback keeps the level and keywords sessions asked for,
// and it writes only what they want (EventProviderEnabled).
// EXAMPLE_PLANTED_DEFECT compiles three defects in (the provider check must name each rule):
// it writes its detail event whatever the level, ignores DISABLE, and sets its traits twice.
#include "greeter.h"

#include <windows.h>
#include <evntprov.h>
#include <evntrace.h>

#include <atomic>
#include <cstdint>
#include <vector>

namespace {

REGHANDLE g_handle = 0;
std::atomic<bool> g_enabled{false};  // set by the callback, on the platform's thread

std::vector<std::uint8_t> text_bytes(const char* text) {
  std::vector<std::uint8_t> out;
  for (const char* p = text; *p != '\0'; ++p) out.push_back(static_cast<std::uint8_t>(*p));
  out.push_back(0);
  return out;
}

// Provider traits: UINT16 size, the name.
std::vector<std::uint8_t> traits() {
  std::vector<std::uint8_t> t(2, 0);
  for (std::uint8_t b : text_bytes("Example.Greeter")) t.push_back(b);
  t[0] = static_cast<std::uint8_t>(t.size());
  return t;
}

// Event metadata: UINT16 size, UINT8 tags (none), the name, then (field name, InType) pairs.
std::vector<std::uint8_t> metadata(const char* event, bool with_count) {
  std::vector<std::uint8_t> m(3, 0);
  for (std::uint8_t b : text_bytes(event)) m.push_back(b);
  for (std::uint8_t b : text_bytes("Name")) m.push_back(b);
  m.push_back(2);  // TlgInANSISTRING
  if (with_count) {
    for (std::uint8_t b : text_bytes("Count")) m.push_back(b);
    m.push_back(8);  // TlgInUINT32
  }
  m[0] = static_cast<std::uint8_t>(m.size());
  m[1] = static_cast<std::uint8_t>(m.size() >> 8);
  return m;
}

void WINAPI on_enable(LPCGUID, ULONG code, UCHAR, ULONGLONG, ULONGLONG, PEVENT_FILTER_DESCRIPTOR,
                      PVOID) {
  if (code == EVENT_CONTROL_CODE_ENABLE_PROVIDER) g_enabled = true;
#ifndef EXAMPLE_PLANTED_DEFECT
  if (code == EVENT_CONTROL_CODE_DISABLE_PROVIDER) g_enabled = false;
#endif
}

void write(const char* event, UCHAR level, ULONGLONG keyword, const std::string& name,
           const unsigned* count) {
#ifdef EXAMPLE_PLANTED_DEFECT
  const bool wanted = g_enabled;  // whatever level and keywords the sessions asked for
#else
  const bool wanted = g_enabled && EventProviderEnabled(g_handle, level, keyword);
#endif
  if (!wanted) return;
  const std::vector<std::uint8_t> t = traits();
  const std::vector<std::uint8_t> m = metadata(event, count != nullptr);
  EVENT_DATA_DESCRIPTOR data[4];
  EventDataDescCreate(&data[0], t.data(), static_cast<ULONG>(t.size()));
  // Type is the low byte of Reserved (a union in the Windows SDK; mingw-w64 10 names only
  // Reserved), so this sets Type on either header.
  data[0].Reserved = EVENT_DATA_DESCRIPTOR_TYPE_PROVIDER_METADATA;
  EventDataDescCreate(&data[1], m.data(), static_cast<ULONG>(m.size()));
  data[1].Reserved = EVENT_DATA_DESCRIPTOR_TYPE_EVENT_METADATA;
  EventDataDescCreate(&data[2], name.c_str(), static_cast<ULONG>(name.size() + 1));
  ULONG fields = 3;
  if (count != nullptr) EventDataDescCreate(&data[fields++], count, sizeof *count);
  const EVENT_DESCRIPTOR d = {0, 0, 11, level, 0, 0, keyword};  // channel 11: TraceLogging
  EventWriteTransfer(g_handle, &d, nullptr, nullptr, fields, data);
}

// {538aec88-824f-5b89-d045-eb96b55a0f51}: Example.Greeter's ID from the ETW name hash (the
// tests find the provider by its name, etwh::testing::provider_id_from_name).
GUID greeter_id() {
  return {0x538aec88, 0x824f, 0x5b89, {0xd0, 0x45, 0xeb, 0x96, 0xb5, 0x5a, 0x0f, 0x51}};
}

}  // namespace

void greeter_register() {
  const GUID id = greeter_id();
  EventRegister(&id, &on_enable, nullptr, &g_handle);
  std::vector<std::uint8_t> t = traits();
  EventSetInformation(g_handle, EventProviderSetTraits, t.data(), static_cast<ULONG>(t.size()));
#ifdef EXAMPLE_PLANTED_DEFECT
  EventSetInformation(g_handle, EventProviderSetTraits, t.data(), static_cast<ULONG>(t.size()));
#endif
}

void greeter_unregister() {
  EventUnregister(g_handle);
  g_handle = 0;
  g_enabled = false;
}

void greet(const std::string& name, unsigned count) {
  write("Greeting", TRACE_LEVEL_INFORMATION, 0x1, name, &count);
  write("GreetingDetail", TRACE_LEVEL_VERBOSE, 0x2, name, nullptr);
}
