// Realtime delivery per session, written only against the documented Win32 ETW API: one
// provider, two realtime sessions enabling it with different levels and keywords, one
// OpenTraceA/ProcessTrace consumer thread per session, EventWrite of a mixed set of events
// (levels 0..5, keywords including 0), then ControlTraceA STOP of both. Each consumer must get
// exactly the event ids its own session's filter accepts, in write order. Prints each check;
// exits 0 only if all hold.
#include <windows.h>
#include <evntprov.h>
#include <evntrace.h>

#include "session_properties.h"
#include <evntcons.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

// {3e1f7a20-6b5c-4d8e-a0f1-2b3c4d5e6f70}
const GUID kProvider = {
    0x3e1f7a20, 0x6b5c, 0x4d8e, {0xa0, 0xf1, 0x2b, 0x3c, 0x4d, 0x5e, 0x6f, 0x70}};

int g_failures = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "PASS" : "FAIL", what.c_str());
  if (!ok) ++g_failures;
}

std::string ids_text(const std::vector<USHORT>& ids) {
  std::string s = "[";
  for (std::size_t i = 0; i < ids.size(); ++i) s += (i ? "," : "") + std::to_string(ids[i]);
  return s + "]";
}

// What one consumer saw; its address is the Context given to OpenTraceA.
struct Received {
  std::mutex mutex;
  std::vector<USHORT> ids;  // EventDescriptor.Id of our provider's events, in arrival order
  int lost = 0;             // RT_LostEvent records (none may come: the buffers are ample)
  int payload_bad = 0;      // records of ours without the 8-byte payload naming their id
  std::atomic<bool> header_seen{false};  // ProcessTrace delivered the session's header event
};

void WINAPI on_record(PEVENT_RECORD r) {
  auto* received = static_cast<Received*>(r->UserContext);
  std::lock_guard<std::mutex> lock(received->mutex);
  if (IsEqualGUID(r->EventHeader.ProviderId, EventTraceGuid)) {
    received->header_seen = true;
  } else if (IsEqualGUID(r->EventHeader.ProviderId, RTLostEventGuid)) {
    ++received->lost;
  } else if (IsEqualGUID(r->EventHeader.ProviderId, kProvider)) {
    const USHORT id = r->EventHeader.EventDescriptor.Id;
    received->ids.push_back(id);
    ULONGLONG value = 0;
    if (r->UserDataLength != sizeof value) {
      ++received->payload_bad;
    } else {
      std::memcpy(&value, r->UserData, sizeof value);
      if (value != 1000u + id) ++received->payload_bad;
    }
  }
}

struct Event {
  USHORT id;
  UCHAR level;
  ULONGLONG keyword;
};

struct Session {
  const char* name;
  UCHAR level;
  ULONGLONG any;
  ULONGLONG all;
  std::vector<USHORT> expected;  // from FLT-LEVEL and FLT-KEYWORD (with the keyword-0 bypass)
};

}  // namespace

int main() {
  REGHANDLE provider = 0;
  check(EventRegister(&kProvider, nullptr, nullptr, &provider) == ERROR_SUCCESS, "EventRegister");

  // Level 0 passes any level filter; keyword 0 passes any keyword filter; otherwise an event
  // needs Level <= the session's, some bit of MatchAny and every bit of MatchAll.
  const Event events[] = {
      {1, TRACE_LEVEL_ERROR, 0x1},         // A
      {2, TRACE_LEVEL_INFORMATION, 0x1},   // nobody: above A's level, no B keyword
      {3, TRACE_LEVEL_WARNING, 0x2},       // nobody: not A's keyword, lacks B's MatchAll 0x4
      {4, TRACE_LEVEL_VERBOSE, 0x6},       // B
      {5, TRACE_LEVEL_CRITICAL, 0x0},      // A and B: keyword 0
      {6, 0, 0x4},                         // nobody: level 0 passes, but lacks B's MatchAll 0x2
      {7, 0, 0x0},                         // A and B: level 0 and keyword 0
      {8, TRACE_LEVEL_INFORMATION, 0x7},   // B: above A's level
      {9, TRACE_LEVEL_WARNING, 0x9},       // A: has 0x1
      {10, TRACE_LEVEL_VERBOSE, 0x0},      // B: keyword 0, but above A's level
      {11, TRACE_LEVEL_INFORMATION, 0x8},  // nobody
  };
  Session sessions[2] = {
      {"etwrt-sample-rt-a", TRACE_LEVEL_WARNING, 0x1, 0x0, {1, 5, 7, 9}},
      {"etwrt-sample-rt-b", TRACE_LEVEL_VERBOSE, 0x6, 0x6, {4, 5, 7, 8, 10}},
  };

  TRACEHANDLE handles[2] = {};
  for (int i = 0; i < 2; ++i) {
    Properties p(1);  // QPC
    check(StartTraceA(&handles[i], sessions[i].name, p.get()) == ERROR_SUCCESS,
          std::string("StartTraceA ") + sessions[i].name);
    check(EnableTraceEx2(handles[i], &kProvider, EVENT_CONTROL_CODE_ENABLE_PROVIDER,
                         sessions[i].level, sessions[i].any, sessions[i].all, 10000,
                         nullptr) == ERROR_SUCCESS,
          std::string("EnableTraceEx2 for ") + sessions[i].name);
  }

  Received received[2];
  EVENT_TRACE_LOGFILEA logfiles[2] = {};
  TRACEHANDLE traces[2] = {INVALID_PROCESSTRACE_HANDLE, INVALID_PROCESSTRACE_HANDLE};
  ULONG process_status[2] = {ERROR_SUCCESS, ERROR_SUCCESS};
  std::vector<std::thread> consumers;
  for (int i = 0; i < 2; ++i) {
    logfiles[i].LoggerName = const_cast<LPSTR>(sessions[i].name);
    logfiles[i].ProcessTraceMode = PROCESS_TRACE_MODE_REAL_TIME | PROCESS_TRACE_MODE_EVENT_RECORD;
    logfiles[i].EventRecordCallback = on_record;
    logfiles[i].Context = &received[i];
    traces[i] = OpenTraceA(&logfiles[i]);
    const bool opened = traces[i] != INVALID_PROCESSTRACE_HANDLE;
    check(opened, std::string("OpenTraceA ") + sessions[i].name);
    if (!opened) continue;
    consumers.emplace_back([&traces, &process_status, i] {
      process_status[i] = ProcessTrace(&traces[i], 1, nullptr, nullptr);
    });
  }

  // Write only once each ProcessTrace is running (its header event came): a consumer thread
  // that a busy machine starts late must not find its session already stopped.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (int i = 0; i < 2; ++i) {
    if (traces[i] == INVALID_PROCESSTRACE_HANDLE) continue;
    while (!received[i].header_seen && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    check(received[i].header_seen,
          std::string("header event reached the consumer of ") + sessions[i].name);
  }

  ULONGLONG payload = 0;
  EVENT_DATA_DESCRIPTOR data;
  EventDataDescCreate(&data, &payload, sizeof payload);
  for (const Event& e : events) {
    EVENT_DESCRIPTOR d;
    EventDescCreate(&d, e.id, 0, 0, e.level, 0, 0, e.keyword);
    payload = 1000u + e.id;
    check(EventWrite(provider, &d, 1, &data) == ERROR_SUCCESS,
          "EventWrite id " + std::to_string(e.id));
  }

  // STOP ends each ProcessTrace once everything the session buffered was delivered.
  for (int i = 0; i < 2; ++i) {
    Properties p(1);  // QPC
    check(ControlTraceA(handles[i], nullptr, p.get(), EVENT_TRACE_CONTROL_STOP) == ERROR_SUCCESS,
          std::string("ControlTraceA STOP ") + sessions[i].name);
    check(p.get()->EventsLost == 0 && p.get()->RealTimeBuffersLost == 0,
          std::string(sessions[i].name) + " reports no loss");
  }
  for (std::thread& t : consumers) t.join();

  for (int i = 0; i < 2; ++i) {
    if (traces[i] == INVALID_PROCESSTRACE_HANDLE) continue;
    const std::string name = sessions[i].name;
    check(process_status[i] == ERROR_SUCCESS,
          "ProcessTrace for " + name + " returned " + std::to_string(process_status[i]));
    CloseTrace(traces[i]);
    std::lock_guard<std::mutex> lock(received[i].mutex);
    check(received[i].ids == sessions[i].expected, name + " delivered " +
                                                       ids_text(received[i].ids) + ", expected " +
                                                       ids_text(sessions[i].expected));
    check(received[i].lost == 0, name + ": no RT_LostEvent");
    check(received[i].payload_bad == 0, name + ": every payload is the one written");
  }
  check(EventUnregister(provider) == ERROR_SUCCESS, "EventUnregister");

  std::printf("%s (%d failed)\n", g_failures == 0 ? "ALL PASSED" : "FAILED", g_failures);
  return g_failures == 0 ? 0 : 1;
}
