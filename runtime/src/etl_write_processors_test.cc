// A trace file's buffers are per processor, as Windows writes them: writers pinned to each
// processor the test may use write at once through EventWrite, and every event must sit in a
// buffer of its writer's processor (ETW_BUFFER_CONTEXT page: ProcessorNumber is "The number of
// the CPU on which the provider process was running"), the records of each buffer in time
// order. The bytes are read by tests/etl/check_layout.py, which shares no code with the
// writer; ProcessTrace must give each event its processor and merge the buffers by time.
#include "test_broker_home.h"
#include "test_check_layout.h"
#include "test_pinned_writers.h"
#include "test_consumer.h"
#include "test_properties.h"

#include <windows.h>
#include <evntcons.h>
#include <evntprov.h>
#include <evntrace.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

using etwrt::testing::check_layout;
using etwrt::testing::PrivateBrokerHome;
using etwrt::testing::TraceProperties;

const GUID kProvider = {
    0x7b2e9c63, 0x4dbf, 0x4e85, {0xa1, 0x36, 0x8c, 0x42, 0xb5, 0xf9, 0x30, 0x7a}};
constexpr ULONG kEach = 3000;  // events per processor: several 4 KB buffers each

// kProvider enabled by `session`, written from every processor of `cpus` at once (kEach
// events each): how many EventWrite took.
ULONG write_from_each(TRACEHANDLE session, const std::vector<int>& cpus) {
  REGHANDLE reg = 0;
  EXPECT_EQ(EventRegister(&kProvider, nullptr, nullptr, &reg), ERROR_SUCCESS);
  EXPECT_EQ(EnableTraceEx2(session, &kProvider, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 5, 0, 0, 10000,
                           nullptr),
            ERROR_SUCCESS);
  const etwrt::testing::PinnedWrites w = etwrt::testing::write_pinned(reg, cpus, kEach);
  EXPECT_TRUE(w.pinned) << "a writer could not be pinned to its processor";
  EventUnregister(reg);
  return w.written;
}

// What ProcessTrace gave: per processor the events whose BufferContext named it, those whose
// payload named another, and the stamps going back (across the whole delivery: the merge).
struct Played {
  std::map<ULONG, ULONG> by_processor;
  ULONG elsewhere = 0;
  ULONG out_of_order = 0;  // an event stamped before the one delivered before it
  ULONG index_back = 0;    // one writer's index not increasing
  LONGLONG last = 0;
  std::map<ULONG, ULONG> next_index;
};

void WINAPI on_event(PEVENT_RECORD e) {
  auto& p = *static_cast<Played*>(e->UserContext);
  if (!IsEqualGUID(e->EventHeader.ProviderId, kProvider) || e->UserDataLength < 8) return;
  ULONG ids[2];
  std::memcpy(ids, e->UserData, sizeof ids);
  const ULONG processor = GetEventProcessorIndex(e);
  if (processor != ids[0] || e->BufferContext.ProcessorNumber != ids[0]) ++p.elsewhere;
  ++p.by_processor[processor];
  if (e->EventHeader.TimeStamp.QuadPart < p.last) ++p.out_of_order;
  p.last = e->EventHeader.TimeStamp.QuadPart;
  if (ids[1] < p.next_index[ids[0]]) ++p.index_back;
  p.next_index[ids[0]] = ids[1] + 1;
}

class EtlWriteProcessors : public ::testing::TestWithParam<ULONG> {};

TEST_P(EtlWriteProcessors, EachEventIsInABufferOfItsWritersProcessorAndReadsBackMerged) {
  const std::vector<int> cpus = etwrt::testing::allowed_processors(4);
  ASSERT_FALSE(cpus.empty());
  if (cpus.size() == 1) GTEST_SKIP() << "only processor " << cpus[0] << " may be used here";
  PrivateBrokerHome home("etwrt-etlcpu");
  const std::string file = home.dir() + "/cpus.etl";
  TraceProperties p;
  p.get()->LogFileMode = GetParam();
  p.get()->MaximumFileSize = (GetParam() & EVENT_TRACE_FILE_MODE_CIRCULAR) != 0 ? 64 : 0;  // MB
  p.get()->LogFileNameOffset = sizeof(EVENT_TRACE_PROPERTIES) + 512;
  std::memcpy(p.bytes.data() + p.get()->LogFileNameOffset, file.c_str(), file.size() + 1);
  p.get()->BufferSize = 4;  // KB
  p.get()->MinimumBuffers = 256;
  p.get()->MaximumBuffers = 256;
  TRACEHANDLE h = 0;
  ASSERT_EQ(StartTraceA(&h, "etl-cpus", p.get()), ERROR_SUCCESS);
  const ULONG written = write_from_each(h, cpus);
  TraceProperties stopped;
  ASSERT_EQ(ControlTraceA(0, "etl-cpus", stopped.get(), EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
  // 256 buffers of 4 KB hold the 3000 events of four writers: nothing may be lost.
  ASSERT_EQ(stopped.get()->EventsLost, 0u);
  ASSERT_EQ(written, kEach * cpus.size());

  nlohmann::json by_processor = nlohmann::json::object();
  for (const int cpu : cpus) by_processor[std::to_string(cpu)] = kEach;
  const auto checked = check_layout(file, {{"strict", true},
                                           {"events", written},
                                           {"events_by_processor", by_processor},
                                           {"ordered_buffers", true}});
  EXPECT_EQ(checked.status, 0) << checked.output;

  Played played;
  EVENT_TRACE_LOGFILEA l{};
  std::string name = file;
  TRACEHANDLE t = etwrt::testing::open_file(l, name, on_event, &played);
  ASSERT_NE(t, INVALID_PROCESSTRACE_HANDLE);
  EXPECT_EQ(ProcessTrace(&t, 1, nullptr, nullptr), static_cast<ULONG>(ERROR_SUCCESS));
  CloseTrace(t);
  for (const int cpu : cpus) EXPECT_EQ(played.by_processor[static_cast<ULONG>(cpu)], kEach);
  EXPECT_EQ(played.elsewhere, 0u) << "events whose BufferContext is not their writer's processor";
  EXPECT_EQ(played.out_of_order, 0u) << "the buffers of the processors are merged by time";
  EXPECT_EQ(played.index_back, 0u);
}

INSTANTIATE_TEST_SUITE_P(Modes, EtlWriteProcessors,
                         ::testing::Values(ULONG{EVENT_TRACE_FILE_MODE_SEQUENTIAL},
                                           ULONG{EVENT_TRACE_FILE_MODE_SEQUENTIAL |
                                                 EVENT_TRACE_COMPRESSED_MODE},
                                           ULONG{EVENT_TRACE_FILE_MODE_CIRCULAR}),
                         [](const ::testing::TestParamInfo<ULONG>& info) {
                           switch (info.param) {
                             case EVENT_TRACE_FILE_MODE_SEQUENTIAL:
                               return std::string("Sequential");
                             case EVENT_TRACE_FILE_MODE_CIRCULAR: return std::string("Circular");
                             default: return std::string("Compressed");
                           }
                         });

}  // namespace
