// A realtime consumer's BufferContext (ETW_BUFFER_CONTEXT page: ProcessorNumber "The number of
// the CPU on which the provider process was running", LoggerId "Identifier of the session that
// logged the event"): providers pinned to each processor the test may use write at once, and
// every event an EventRecordCallback or a classic EventCallback gets names its writer's
// processor and the session (the handle's low 16 bits, as its trace files' buffers say).
#include "test_broker_home.h"
#include "test_consumer.h"
#include "test_pinned_writers.h"
#include "test_properties.h"

#include <windows.h>
#include <evntcons.h>
#include <evntprov.h>
#include <evntrace.h>

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace {

using etwrt::testing::PrivateBrokerHome;
using etwrt::testing::ThreadConsumer;
using etwrt::testing::TraceProperties;

const GUID kProvider = {
    0x2c5f7e14, 0x9a3b, 0x4d61, {0xb8, 0x07, 0x5e, 0x91, 0x3a, 0xc4, 0x6d, 0x28}};
constexpr ULONG kEach = 200;

struct Seen {
  ULONG writer_cpu;
  ULONG processor;         // GetEventProcessorIndex
  ULONG processor_number;  // BufferContext.ProcessorNumber
  USHORT logger_id;
};

std::optional<Seen> read_record(PEVENT_RECORD e) {
  if (!IsEqualGUID(e->EventHeader.ProviderId, kProvider) || e->UserDataLength < 4) {
    return std::nullopt;
  }
  ULONG cpu = 0;
  std::memcpy(&cpu, e->UserData, 4);
  return Seen{cpu, GetEventProcessorIndex(e), e->BufferContext.ProcessorNumber,
              e->BufferContext.LoggerId};
}

// The classic consumer's events (EVENT_TRACE), kept by its callback.
std::vector<Seen> g_classic;
void WINAPI on_classic(PEVENT_TRACE t) {
  if (!IsEqualGUID(t->Header.Guid, kProvider) || t->MofLength < 4) return;
  ULONG cpu = 0;
  std::memcpy(&cpu, t->MofData, 4);
  g_classic.push_back({cpu, t->BufferContext.ProcessorNumber, t->BufferContext.ProcessorNumber,
                       t->BufferContext.LoggerId});
}

void expect_context(const std::vector<Seen>& seen, const std::vector<int>& cpus, USHORT logger) {
  std::map<ULONG, ULONG> by_writer;
  ULONG elsewhere = 0, other_logger = 0;
  for (const Seen& s : seen) {
    ++by_writer[s.writer_cpu];
    if (s.processor != s.writer_cpu || s.processor_number != s.writer_cpu) ++elsewhere;
    if (s.logger_id != logger) ++other_logger;
  }
  for (const int cpu : cpus) EXPECT_EQ(by_writer[static_cast<ULONG>(cpu)], kEach) << cpu;
  EXPECT_EQ(elsewhere, 0u) << "events whose BufferContext is not their writer's processor";
  EXPECT_EQ(other_logger, 0u) << "events whose LoggerId is not the session's " << logger;
}

// Two sessions, one consumer each (the first consumer of a session gets what it buffered
// before the consumer attached): one with an EventRecordCallback, one with a classic
// EventCallback.
TEST(ConsumerContext, EachEventNamesItsWritersProcessorAndItsSession) {
  const std::vector<int> cpus = etwrt::testing::allowed_processors(4);
  ASSERT_FALSE(cpus.empty());
  PrivateBrokerHome home("etwrt-context");
  TraceProperties pa, pb;
  TRACEHANDLE a = 0, b = 0;
  ASSERT_EQ(StartTraceA(&a, "context-a", pa.get()), ERROR_SUCCESS);
  ASSERT_EQ(StartTraceA(&b, "context-b", pb.get()), ERROR_SUCCESS);
  ThreadConsumer<Seen> modern("context-a", read_record);
  EVENT_TRACE_LOGFILEA classic{};
  std::string name = "context-b";
  classic.LoggerName = name.data();
  classic.ProcessTraceMode = PROCESS_TRACE_MODE_REAL_TIME;
  classic.EventCallback = on_classic;
  TRACEHANDLE classic_handle = OpenTraceA(&classic);
  ASSERT_NE(classic_handle, INVALID_PROCESSTRACE_HANDLE);
  g_classic.clear();
  std::thread classic_thread([&] { ProcessTrace(&classic_handle, 1, nullptr, nullptr); });

  REGHANDLE reg = 0;
  ASSERT_EQ(EventRegister(&kProvider, nullptr, nullptr, &reg), ERROR_SUCCESS);
  for (const TRACEHANDLE session : {a, b}) {
    ASSERT_EQ(EnableTraceEx2(session, &kProvider, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 5, 0, 0,
                             10000, nullptr),
              ERROR_SUCCESS);
  }
  EXPECT_TRUE(etwrt::testing::write_pinned(reg, cpus, kEach).pinned)
      << "a writer could not be pinned to its processor";
  EventUnregister(reg);
  const std::vector<Seen> seen = modern.wait_for(kEach * cpus.size());
  for (const char* session : {"context-a", "context-b"}) {
    TraceProperties stop;
    EXPECT_EQ(ControlTraceA(0, session, stop.get(), EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
    EXPECT_EQ(stop.get()->EventsLost, 0u) << session;
  }
  classic_thread.join();
  CloseTrace(classic_handle);
  {
    SCOPED_TRACE("EventRecordCallback");
    expect_context(seen, cpus, static_cast<USHORT>(a & 0xFFFF));
  }
  {
    SCOPED_TRACE("EventCallback");
    expect_context(g_classic, cpus, static_cast<USHORT>(b & 0xFFFF));
  }
  EXPECT_NE(a & 0xFFFF, b & 0xFFFF) << "two sessions, two LoggerIds";
}

}  // namespace
