// The consumer API in the shapes real Windows consumers use it (Chromium's EtwTraceConsumer and
// its tests, Process Hacker's etwmon, the documentation's samples): the EVENT_TRACE_LOGFILE a
// local of a function that has returned before ProcessTrace runs; the consumer opened before
// its session starts; CloseTrace from inside a callback. Pages (MicrosoftDocs/sdk-api,
// sdk-api-src/content/evntrace/): nf-evntrace-opentracew.md, ns-evntrace-event_trace_logfilew.md,
// nc-evntrace-pevent_trace_buffer_callbackw.md, nf-evntrace-processtrace.md,
// nf-evntrace-closetrace.md.
#include "test_broker_home.h"
#include "test_properties.h"

#include <windows.h>
#include <evntcons.h>
#include <evntprov.h>
#include <evntrace.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

namespace {

using etwrt::testing::PrivateBrokerHome;
using etwrt::testing::TraceProperties;
using namespace std::chrono_literals;

const GUID kProvider = {
    0x6b0f7e21, 0x3d4c, 0x4a55, {0x8e, 0x90, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66}};

ULONG start(const std::string& name, TRACEHANDLE* handle) {
  TraceProperties p;
  p.get()->BufferSize = 4;
  p.get()->FlushTimer = 1;
  return StartTraceA(handle, name.c_str(), p.get());
}

ULONG stop(const std::string& name) {
  TraceProperties p;
  return ControlTraceA(0, name.c_str(), p.get(), EVENT_TRACE_CONTROL_STOP);
}

// What the callbacks saw; the Context the consumer gave OpenTrace points here.
struct Seen {
  std::atomic<int> events{0};             // Events of kProvider, with this Context.
  std::atomic<int> header_events{0};      // The synthetic header event (EventTraceGuid).
  std::atomic<int> buffers{0};            // BufferCallback calls with the right Context.
  std::atomic<int> bad_buffer_record{0};  // A BufferCallback record that is not OpenTrace's.
  std::atomic<bool> close_in_callback{false};
  std::atomic<ULONG> close_status{0};
  TRACEHANDLE handle = 0;
  std::string session;
};

bool same_guid(const GUID& a, const GUID& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void WINAPI on_event(PEVENT_RECORD r) {
  auto* seen = static_cast<Seen*>(r->UserContext);
  if (seen == nullptr) return;
  if (same_guid(r->EventHeader.ProviderId, EventTraceGuid)) {
    ++seen->header_events;
  } else if (same_guid(r->EventHeader.ProviderId, kProvider)) {
    ++seen->events;
    // CloseTrace's page: callable from EventCallback; ProcessTrace then stops.
    if (seen->close_in_callback.exchange(false)) seen->close_status = CloseTrace(seen->handle);
  }
}

ULONG WINAPI on_buffer(PEVENT_TRACE_LOGFILEA logfile) {
  auto* seen = static_cast<Seen*>(logfile->Context);
  // The record is etwrt's copy of what OpenTrace was given: the same callbacks, Context, mode
  // and session name (the caller's own record is gone by now in these tests).
  if (seen == nullptr || logfile->BufferCallback != &on_buffer ||
      logfile->EventRecordCallback != &on_event || logfile->LoggerName == nullptr ||
      seen->session != logfile->LoggerName ||
      (logfile->ProcessTraceMode & PROCESS_TRACE_MODE_EVENT_RECORD) == 0 ||
      logfile->LogfileHeader.PointerSize != sizeof(void*)) {
    if (seen != nullptr) ++seen->bad_buffer_record;
    return TRUE;
  }
  ++seen->buffers;
  return TRUE;
}

// Opens `session` with an EVENT_TRACE_LOGFILEA that lives in this frame only, as consumer
// classes do in their Open method (Chromium's EtwTraceConsumerBase::OpenRealtimeSession keeps
// it in a vector it may grow; samples keep it on the stack of a function that returns).
__attribute__((noinline)) TRACEHANDLE open_in_a_frame_that_returns(Seen* seen) {
  EVENT_TRACE_LOGFILEA logfile;
  std::memset(&logfile, 0, sizeof logfile);
  std::string name = seen->session;  // The name's storage dies with the frame too.
  logfile.LoggerName = name.data();
  logfile.ProcessTraceMode = PROCESS_TRACE_MODE_REAL_TIME | PROCESS_TRACE_MODE_EVENT_RECORD;
  logfile.EventRecordCallback = &on_event;
  logfile.BufferCallback = &on_buffer;
  logfile.Context = seen;
  return OpenTraceA(&logfile);
}

// Writes over the stack where the frame above was, as any later call would.
__attribute__((noinline)) void overwrite_the_stack() {
  volatile unsigned char junk[16384];
  for (unsigned char& b : const_cast<unsigned char(&)[16384]>(junk)) b = 0xA5;
  asm volatile("" : : "r"(junk) : "memory");
}

// Writes `count` events of kProvider, one at a time.
void write_events(int count) {
  REGHANDLE provider = 0;
  ASSERT_EQ(EventRegister(&kProvider, nullptr, nullptr, &provider), ERROR_SUCCESS);
  EVENT_DESCRIPTOR d{};
  d.Level = 4;
  for (int i = 0; i < count; ++i) EXPECT_EQ(EventWrite(provider, &d, 0, nullptr), ERROR_SUCCESS);
  EventUnregister(provider);
}

ULONG enable(TRACEHANDLE session) {
  return EnableTraceEx2(session, &kProvider, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 5, 0, 0, 0,
                        nullptr);
}

// Waits until `done` or about 10 s.
template <typename Done>
bool wait_until(Done done) {
  for (int i = 0; i < 1000 && !done(); ++i) std::this_thread::sleep_for(10ms);
  return done();
}

// Starts seen.session with the provider enabled, and opens its consumer in a frame that returns.
void start_enable_open(Seen& seen) {
  TRACEHANDLE session = 0;
  ASSERT_EQ(start(seen.session, &session), ERROR_SUCCESS);
  ASSERT_EQ(enable(session), ERROR_SUCCESS);
  seen.handle = open_in_a_frame_that_returns(&seen);
  ASSERT_NE(seen.handle, INVALID_PROCESSTRACE_HANDLE);
}

// The consumer's run, checked: with the stack overwritten (here, and first thing in the thread
// that runs ProcessTrace), `count` events written once the header event came are delivered,
// every buffer callback gets etwrt's copy of the record, ProcessTrace ends ERROR_SUCCESS at the
// session's stop, and CloseTrace succeeds.
void expect_consumed(Seen& seen, int count) {
  overwrite_the_stack();
  ULONG status = 12345;
  std::thread consumer([&] {
    overwrite_the_stack();
    status = ProcessTrace(&seen.handle, 1, nullptr, nullptr);
  });
  const bool attached = wait_until([&] { return seen.header_events.load() == 1; });
  EXPECT_TRUE(attached) << "no header event";
  if (attached) write_events(count);
  EXPECT_TRUE(wait_until([&] { return seen.events.load() == count; })) << seen.events.load();
  EXPECT_EQ(stop(seen.session), ERROR_SUCCESS);
  consumer.join();
  EXPECT_EQ(status, ULONG{ERROR_SUCCESS});
  EXPECT_EQ(seen.events.load(), count);
  EXPECT_EQ(seen.bad_buffer_record.load(), 0);
  EXPECT_EQ(CloseTrace(seen.handle), ULONG{ERROR_SUCCESS});
}

// The record OpenTrace was given is a local of a function that returned, and the stack was
// overwritten since: ProcessTrace must use what OpenTrace copied (with the record read at
// ProcessTrace time this reads 0xA5 bytes as the callback pointer and crashes).
TEST(ConsumerOpen, TheRecordGivenToOpenTraceMayDieBeforeProcessTrace) {
  PrivateBrokerHome home("etwrt-consumer-open");
  Seen seen;
  seen.session = "open-local-record";
  ASSERT_NO_FATAL_FAILURE(start_enable_open(seen));
  expect_consumed(seen, 5);
  EXPECT_GE(seen.buffers.load(), 1);
}

// Chromium's EtwTraceConsumerBaseTest: "OpenRealtimeSucceedsWhenNoSession",
// "ConsumerImmediateFailureWhenNoSession", and its realtime tests open the consumer before the
// controller starts the session. ProcessTrace's page: ERROR_WMI_INSTANCE_NOT_FOUND when "the
// trace collection session from which you are trying to consume events in real time is not
// running".
TEST(ConsumerOpen, OpenedBeforeTheSessionStartsProcessTraceAttachesWhenItRuns) {
  PrivateBrokerHome home("etwrt-consumer-open");
  Seen seen;
  seen.session = "open-before-start";
  SetLastError(ERROR_SUCCESS);
  seen.handle = open_in_a_frame_that_returns(&seen);
  ASSERT_NE(seen.handle, INVALID_PROCESSTRACE_HANDLE);
  EXPECT_EQ(GetLastError(), DWORD{ERROR_SUCCESS});
  EXPECT_EQ(ProcessTrace(&seen.handle, 1, nullptr, nullptr), ULONG{ERROR_WMI_INSTANCE_NOT_FOUND});
  EXPECT_EQ(seen.header_events.load(), 0);

  TRACEHANDLE session = 0;
  ASSERT_EQ(start(seen.session, &session), ERROR_SUCCESS);
  ASSERT_EQ(enable(session), ERROR_SUCCESS);
  expect_consumed(seen, 3);
}

// A session that exists but is not realtime: the same page's "does not have the real-time
// trace mode enabled".
TEST(ConsumerOpen, ASessionWithoutRealTimeModeIsNotFoundAtProcessTrace) {
  PrivateBrokerHome home("etwrt-consumer-open");
  TraceProperties p;
  p.get()->LogFileMode = EVENT_TRACE_BUFFERING_MODE;
  TRACEHANDLE session = 0;
  ASSERT_EQ(StartTraceA(&session, "open-buffering", p.get()), ERROR_SUCCESS);
  Seen seen;
  seen.session = "open-buffering";
  seen.handle = open_in_a_frame_that_returns(&seen);
  ASSERT_NE(seen.handle, INVALID_PROCESSTRACE_HANDLE);
  EXPECT_EQ(ProcessTrace(&seen.handle, 1, nullptr, nullptr), ULONG{ERROR_WMI_INSTANCE_NOT_FOUND});
  EXPECT_EQ(CloseTrace(seen.handle), ULONG{ERROR_SUCCESS});
  EXPECT_EQ(stop("open-buffering"), ERROR_SUCCESS);
}

// CloseTrace's page: "You can call the CloseTrace function from your BufferCallback,
// EventCallback" ... it "returns ERROR_CTX_CLOSE_PENDING", and ProcessTrace stops.
TEST(ConsumerOpen, CloseTraceFromTheEventCallbackEndsProcessTrace) {
  PrivateBrokerHome home("etwrt-consumer-open");
  Seen seen;
  seen.session = "open-close-in-callback";
  ASSERT_NO_FATAL_FAILURE(start_enable_open(seen));
  seen.close_in_callback = true;
  ULONG status = 12345;
  std::atomic<bool> returned{false};
  std::thread consumer([&] {
    status = ProcessTrace(&seen.handle, 1, nullptr, nullptr);
    returned = true;
  });
  ASSERT_TRUE(wait_until([&] { return seen.header_events.load() == 1; }));
  write_events(1);
  EXPECT_TRUE(wait_until([&] { return returned.load(); })) << "ProcessTrace still runs";
  consumer.join();
  EXPECT_EQ(seen.close_status.load(), ULONG{ERROR_CTX_CLOSE_PENDING});
  EXPECT_EQ(status, ULONG{ERROR_SUCCESS});
  // The handle went with the ProcessTrace it was closed in.
  EXPECT_EQ(CloseTrace(seen.handle), ULONG{ERROR_INVALID_HANDLE});
  EXPECT_EQ(stop(seen.session), ERROR_SUCCESS);
}

// The shape of consumer classes (Chromium's EtwTraceConsumerBase, krabsetw's trace::stop): a
// thread of their own runs ProcessTrace and the owner calls CloseTrace from its thread, here
// while the consumer is inside its EventCallback. CloseTrace's page: ERROR_CTX_CLOSE_PENDING,
// "the ProcessTrace function will stop processing events after it processes all events in its
// buffers (ProcessTrace will not receive any new events after you call the CloseTrace
// function)".
std::atomic<bool> g_hold_callback{false};
std::atomic<bool> g_in_callback{false};
std::atomic<int> g_delivered{0};

void WINAPI on_event_held(PEVENT_RECORD r) {
  if (!same_guid(r->EventHeader.ProviderId, kProvider)) return;
  ++g_delivered;
  g_in_callback = true;
  while (g_hold_callback.load()) std::this_thread::sleep_for(1ms);
  g_in_callback = false;
}

TEST(ConsumerOpen, CloseTraceFromTheOwnersThreadWhileTheConsumerIsInItsCallback) {
  PrivateBrokerHome home("etwrt-consumer-open");
  const std::string name = "open-close-from-owner";
  TRACEHANDLE session = 0;
  ASSERT_EQ(start(name, &session), ERROR_SUCCESS);
  ASSERT_EQ(enable(session), ERROR_SUCCESS);
  EVENT_TRACE_LOGFILEA logfile{};
  logfile.LoggerName = const_cast<char*>(name.c_str());
  logfile.ProcessTraceMode = PROCESS_TRACE_MODE_REAL_TIME | PROCESS_TRACE_MODE_EVENT_RECORD;
  logfile.EventRecordCallback = &on_event_held;
  TRACEHANDLE handle = OpenTraceA(&logfile);
  ASSERT_NE(handle, INVALID_PROCESSTRACE_HANDLE);
  g_hold_callback = true;
  g_delivered = 0;
  ULONG status = 12345;
  std::atomic<bool> returned{false};
  std::thread consumer([&] {
    status = ProcessTrace(&handle, 1, nullptr, nullptr);
    returned = true;
  });
  write_events(1);
  ASSERT_TRUE(wait_until([] { return g_in_callback.load(); }));
  EXPECT_EQ(CloseTrace(handle), ULONG{ERROR_CTX_CLOSE_PENDING});
  write_events(20);  // after CloseTrace: "will not receive any new events"
  std::this_thread::sleep_for(50ms);
  g_hold_callback = false;
  const bool ended = wait_until([&] { return returned.load(); });
  EXPECT_TRUE(ended) << "ProcessTrace still runs";
  if (!ended) stop(name);  // a failing run ends, rather than hang in join
  consumer.join();
  EXPECT_EQ(status, ULONG{ERROR_SUCCESS});
  EXPECT_EQ(g_delivered.load(), 1);
  EXPECT_EQ(CloseTrace(handle), ULONG{ERROR_INVALID_HANDLE});  // gone with its ProcessTrace
  EXPECT_EQ(stop(name), ERROR_SUCCESS);
}

}  // namespace
