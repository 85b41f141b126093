// A provider and a controller in one program, written only against the documented Win32 ETW
// API: one EventRegister with a callback, three StartTraceA sessions enabling it with different
// levels and keywords, ControlTraceA STOP of each, EventSetInformation twice. Prints each check;
// exits 0 only if all hold.
#include <windows.h>
#include <evntprov.h>
#include <evntrace.h>

#include "session_properties.h"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

namespace {

// {5b0b5e2f-3c71-4f0e-9d5e-6a4b8c2d1e0f}
const GUID kProvider = {
    0x5b0b5e2f, 0x3c71, 0x4f0e, {0x9d, 0x5e, 0x6a, 0x4b, 0x8c, 0x2d, 0x1e, 0x0f}};

struct Seen {
  ULONG is_enabled;
  UCHAR level;
  ULONGLONG any;
  ULONGLONG all;
  PVOID context;
};

std::mutex g_mutex;
std::condition_variable g_changed;
std::vector<Seen> g_seen;
int g_failures = 0;

void NTAPI on_enable(LPCGUID, ULONG is_enabled, UCHAR level, ULONGLONG any, ULONGLONG all,
                     PEVENT_FILTER_DESCRIPTOR, PVOID context) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_seen.push_back({is_enabled, level, any, all, context});
  g_changed.notify_all();
}

void check(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "PASS" : "FAIL", what.c_str());
  if (!ok) ++g_failures;
}

// The n-th callback (1-based), waiting a generous while for it.
bool nth_callback(std::size_t n, Seen& out) {
  std::unique_lock<std::mutex> lock(g_mutex);
  if (!g_changed.wait_for(lock, std::chrono::seconds(20), [&] { return g_seen.size() >= n; })) {
    return false;
  }
  out = g_seen[n - 1];
  return true;
}

std::string hex(ULONGLONG v) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(v));
  return text;
}

void expect_callback(std::size_t n, ULONG is_enabled, UCHAR level, ULONGLONG any, ULONGLONG all,
                     PVOID context, const std::string& when) {
  Seen s{};
  if (!nth_callback(n, s)) {
    check(false, when + ": callback " + std::to_string(n) + " arrived");
    return;
  }
  check(s.is_enabled == is_enabled,
        when + ": IsEnabled " + std::to_string(s.is_enabled) + " == " + std::to_string(is_enabled));
  check(s.level == level,
        when + ": Level " + std::to_string(s.level) + " == " + std::to_string(level));
  check(s.any == any, when + ": MatchAnyKeyword " + hex(s.any) + " == " + hex(any));
  check(s.all == all, when + ": MatchAllKeyword " + hex(s.all) + " == " + hex(all));
  check(s.context == context, when + ": CallbackContext is the one given to EventRegister");
}

}  // namespace

int main() {
  int context_marker = 0;
  REGHANDLE provider = 0;
  check(EventRegister(&kProvider, on_enable, &context_marker, &provider) == ERROR_SUCCESS,
        "EventRegister");

  // Seed 001 traits: UINT16 total size, "Sample\0", one custom trait (type 200, 1 byte).
  unsigned char traits[] = {0, 0, 'S', 'a', 'm', 'p', 'l', 'e', 0, 4, 0, 200, 42};
  traits[0] = sizeof traits;
  check(
      EventSetInformation(provider, EventProviderSetTraits, traits, sizeof traits) == ERROR_SUCCESS,
      "first EventSetInformation(EventProviderSetTraits) succeeds");
  const ULONG second = EventSetInformation(provider, EventProviderSetTraits, traits, sizeof traits);
  check(second != ERROR_SUCCESS,
        "second EventSetInformation fails (returned " + std::to_string(second) + ")");

  struct SessionSpec {
    const char* name;
    UCHAR level;
    ULONGLONG any;
    ULONGLONG all;
  };
  const SessionSpec specs[3] = {{"etwrt-sample-a", TRACE_LEVEL_ERROR, 0x1, 0x3},
                                {"etwrt-sample-b", TRACE_LEVEL_VERBOSE, 0x6, 0x7},
                                {"etwrt-sample-c", TRACE_LEVEL_WARNING, 0x8, 0xB}};
  TRACEHANDLE sessions[3] = {};
  for (int i = 0; i < 3; ++i) {
    Properties p(1);  // QPC
    const ULONG status = StartTraceA(&sessions[i], specs[i].name, p.get());
    check(status == ERROR_SUCCESS, std::string("StartTraceA ") + specs[i].name);
  }

  // Aggregates over the enabling sessions: Level = max, MatchAny = OR, MatchAll = AND.
  UCHAR level = 0;
  ULONGLONG any = 0;
  ULONGLONG all = ~0ull;
  for (int i = 0; i < 3; ++i) {
    const ULONG status = EnableTraceEx2(sessions[i], &kProvider, EVENT_CONTROL_CODE_ENABLE_PROVIDER,
                                        specs[i].level, specs[i].any, specs[i].all, 10000, nullptr);
    check(status == ERROR_SUCCESS, std::string("EnableTraceEx2 for ") + specs[i].name);
    level = specs[i].level > level ? specs[i].level : level;
    any |= specs[i].any;
    all &= specs[i].all;
    expect_callback(static_cast<std::size_t>(i) + 1, 1, level, any, all, &context_marker,
                    std::string("after enabling ") + specs[i].name);
  }
  check(EventProviderEnabled(provider, TRACE_LEVEL_VERBOSE, 0x7) == TRUE,
        "EventProviderEnabled(verbose, 0x7) while session b enables it");

  // Stopping sessions recomputes over the ones that remain; IsEnabled 0 after the last.
  const UCHAR levels_after[3] = {TRACE_LEVEL_VERBOSE, TRACE_LEVEL_WARNING, 0};
  const ULONGLONG any_after[3] = {0xE, 0x8, 0};
  const ULONGLONG all_after[3] = {0x3, 0xB, 0};
  for (int i = 0; i < 3; ++i) {
    Properties p(1);  // QPC
    const ULONG status = ControlTraceA(sessions[i], nullptr, p.get(), EVENT_TRACE_CONTROL_STOP);
    check(status == ERROR_SUCCESS, std::string("ControlTraceA STOP ") + specs[i].name);
    expect_callback(static_cast<std::size_t>(i) + 4, i < 2 ? 1 : 0, levels_after[i], any_after[i],
                    all_after[i], &context_marker, std::string("after stopping ") + specs[i].name);
  }
  check(EventProviderEnabled(provider, 0, 0) == FALSE, "EventProviderEnabled is FALSE at the end");

  Properties q(1);  // QPC
  check(ControlTraceA(0, "etwrt-sample-a", q.get(), EVENT_TRACE_CONTROL_QUERY) ==
            ERROR_WMI_INSTANCE_NOT_FOUND,
        "a stopped session is not found");
  check(EventUnregister(provider) == ERROR_SUCCESS, "EventUnregister");

  std::printf("%s (%d failed)\n", g_failures == 0 ? "ALL PASSED" : "FAILED", g_failures);
  return g_failures == 0 ? 0 : 1;
}
