// A program with a provider of its own, as `etwh observe` meets them: it registers, keeps what
// its enable callback says (seed 000's formula), sets its traits once and writes events of every
// level for a while, then unregisters and exits. It knows nothing of etwh. Each
// OBSERVE_DEFECT_* definition compiles one defect in (providers/examples/CMakeLists.txt); the
// clean target defines none.
//   etwh-observe-example [MILLISECONDS]   (how long it writes; default 2500)
#include <windows.h>
#include <evntprov.h>
#include <evntrace.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

// {5f0b8a3e-2c71-4d96-8e4b-13a7c9d2e6f0}
constexpr GUID kProviderId = {
    0x5f0b8a3e, 0x2c71, 0x4d96, {0x8e, 0x4b, 0x13, 0xa7, 0xc9, 0xd2, 0xe6, 0xf0}};

#if defined(OBSERVE_DEFECT_RESERVED_CHANNEL)  // Defect: events in reserved channel 5.
constexpr UCHAR kChannel = 5;
#else
constexpr UCHAR kChannel = 0;
#endif

constexpr EVENT_DESCRIPTOR event(USHORT id, UCHAR level, ULONGLONG keyword) {
  return EVENT_DESCRIPTOR{id, 0, kChannel, level, 0, 1, keyword};
}
constexpr EVENT_DESCRIPTOR kEvents[] = {event(1, 1, 0x1), event(2, 2, 0x2), event(3, 3, 0x3),
                                        event(4, 4, 0x1), event(5, 5, 0x2)};

// One self-describing event besides (TraceLogging's encoding, channel 11, Id 0), so that the
// report can show an event by name and fields: "Heartbeat" with a UINT32 field "Count".
constexpr EVENT_DESCRIPTOR kHeartbeat = {0, 0, 11, 4, 0, 0, 0x1};

// UINT16 its own size, UINT8 tags (none), the name (NUL), then per field its name (NUL) and
// InType (8: UINT32).
std::vector<unsigned char> heartbeat_metadata() {
  std::vector<unsigned char> m = {0, 0, 0};
  for (const char* text : {"Heartbeat", "Count"})
    m.insert(m.end(), text, text + std::strlen(text) + 1);
  m.push_back(8);
  m[0] = static_cast<unsigned char>(m.size());
  return m;
}

struct State {
  std::atomic<bool> enabled{false};
  std::atomic<UCHAR> level{0};
  std::atomic<ULONGLONG> any{0}, all{0};
};
State g_state;

void NTAPI on_enable(LPCGUID, ULONG is_enabled, UCHAR level, ULONGLONG any, ULONGLONG all,
                     PEVENT_FILTER_DESCRIPTOR, PVOID) {
#if defined(OBSERVE_DEFECT_CONTROL_IN_CALLBACK)
  // Defect: asks about a session from inside the callback (seed 000: it can deadlock).
  std::vector<unsigned char> buffer(sizeof(EVENT_TRACE_PROPERTIES) + 1024);
  auto* properties = reinterpret_cast<EVENT_TRACE_PROPERTIES*>(buffer.data());
  properties->Wnode.BufferSize = static_cast<ULONG>(buffer.size());
  properties->LoggerNameOffset = sizeof(EVENT_TRACE_PROPERTIES);
  (void)ControlTraceA(0, "etwh-observe-example", properties, EVENT_TRACE_CONTROL_QUERY);
#endif
  if (is_enabled == EVENT_CONTROL_CODE_ENABLE_PROVIDER) {
    g_state.level = level;
    g_state.any = any;
    g_state.all = all;
    g_state.enabled = true;
  } else if (is_enabled == EVENT_CONTROL_CODE_DISABLE_PROVIDER) {
#if !defined(OBSERVE_DEFECT_IGNORES_DISABLE)  // Defect: keeps writing after DISABLE.
    g_state.enabled = false;
#endif
  }
}

// Seed 000's test, on what the callback said.
bool wanted(const EVENT_DESCRIPTOR& d) {
  if (!g_state.enabled) return false;
#if !defined(OBSERVE_DEFECT_ABOVE_LEVEL)  // Defect: the level is not looked at.
  if (d.Level != 0 && d.Level > g_state.level) return false;
#endif
  const ULONGLONG any = g_state.any, all = g_state.all;
  return d.Keyword == 0 || any == 0 || ((d.Keyword & any) != 0 && (d.Keyword & all) == all);
}

// Traits: UINT16 size, the name, no trait (seed 001).
void set_traits(REGHANDLE handle) {
  static const char kName[] = "Etwh.ObserveExample";
  unsigned char blob[2 + sizeof kName];
  const auto size = static_cast<unsigned short>(sizeof blob);
  std::memcpy(blob, &size, 2);
  std::memcpy(blob + 2, kName, sizeof kName);
  (void)EventSetInformation(handle, EventProviderSetTraits, blob, sizeof blob);
#if defined(OBSERVE_DEFECT_TRAITS_TWICE)  // Defect: traits set a second time.
  (void)EventSetInformation(handle, EventProviderSetTraits, blob, sizeof blob);
#endif
}

}  // namespace

int main(int argc, char** argv) {
  const long ms = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 2500;
  REGHANDLE handle = 0;
  if (ULONG st = EventRegister(&kProviderId, on_enable, nullptr, &handle); st != ERROR_SUCCESS) {
    std::fprintf(stderr, "EventRegister failed: %lu\n", static_cast<unsigned long>(st));
    return 1;
  }
  set_traits(handle);
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  unsigned long written = 0;
  const std::vector<unsigned char> metadata = heartbeat_metadata();
  for (unsigned n = 0; std::chrono::steady_clock::now() < end; ++n) {
    const EVENT_DESCRIPTOR& d = kEvents[n % (sizeof kEvents / sizeof kEvents[0])];
    if (wanted(d)) {
      EVENT_DATA_DESCRIPTOR data;
      EventDataDescCreate(&data, &n, sizeof n);
      written += EventWrite(handle, &d, 1, &data) == ERROR_SUCCESS;
    }
    if (n % 10 == 0 && wanted(kHeartbeat)) {
      // Type through Reserved (its low byte): the traits set above make etwrt honour it.
      EVENT_DATA_DESCRIPTOR data[2];
      EventDataDescCreate(&data[0], metadata.data(), static_cast<ULONG>(metadata.size()));
      data[0].Reserved = EVENT_DATA_DESCRIPTOR_TYPE_EVENT_METADATA;
      EventDataDescCreate(&data[1], &n, sizeof n);
      written += EventWrite(handle, &kHeartbeat, 2, data) == ERROR_SUCCESS;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EventUnregister(handle);
  std::printf("observe example: %lu events written\n", written);
  return 0;
}
