// File sessions against a real broker: what StartTrace takes (Logging Mode Constants page,
// StartTrace page), what the broker's logger writes, and the accounting written = in the file +
// reported lost. The bytes are read back by tests/etl/check_layout.py, a checker that shares
// no code with the writer (and passes on the files Windows wrote, tests/etl/check_corpus.py).
#include "test_broker_home.h"
#include "test_check_layout.h"
#include "test_consumer.h"
#include "test_properties.h"

#include <windows.h>
#include <evntcons.h>
#include <evntprov.h>
#include <evntrace.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

namespace {

using etwrt::testing::check_layout;
using etwrt::testing::Checked;
using etwrt::testing::PrivateBrokerHome;
using etwrt::testing::TraceProperties;
using json = nlohmann::json;

const GUID kProvider = {
    0x5e0c7a41, 0x2b9d, 0x4c63, {0x8f, 0x14, 0x6a, 0x20, 0x93, 0xd7, 0x1e, 0x58}};
constexpr const char* kProviderText = "5e0c7a41-2b9d-4c63-8f14-6a2093d71e58";
constexpr ULONG kPayload = 32;  // bytes of user data per event

// Properties of a file session: the name of the file at LogFileNameOffset.
struct FileProperties : TraceProperties {
  // A file of at most `max_kb` KB (EVENT_TRACE_USE_KBYTES_FOR_SIZE).
  static FileProperties at_most_kb(const std::string& file, ULONG mode, ULONG max_kb) {
    FileProperties p(file, mode | EVENT_TRACE_USE_KBYTES_FOR_SIZE);
    p.get()->MaximumFileSize = max_kb;
    return p;
  }
  FileProperties(const std::string& file, ULONG mode) {
    get()->LogFileMode = mode;
    get()->LogFileNameOffset = sizeof(EVENT_TRACE_PROPERTIES) + 512;
    std::memcpy(bytes.data() + get()->LogFileNameOffset, file.c_str(), file.size() + 1);
    get()->BufferSize = 4;  // KB: small buffers, so that a few thousand events fill many
    get()->FlushTimer = 1;
  }
};

// The file read back through the consumer API (OpenTraceA, ProcessTrace with an
// EventRecordCallback): the header event first, then the provider's events, every stamp inside
// the header's span (StartTime to EndTime, FILETIMEs).
struct ReadBack {
  ULONG open_status = ERROR_SUCCESS;
  ULONG process_status = ERROR_SUCCESS;
  bool header_first = false;
  ULONG events = 0;  // the provider's
  ULONG others = 0;  // neither the header event nor the provider's
  ULONG outside_span = 0;
  ULONG header_events_lost = 0;
  std::int64_t start = 0;
  std::int64_t end = 0;
};

void WINAPI read_back_record(PEVENT_RECORD e) {
  auto& r = *static_cast<ReadBack*>(e->UserContext);
  const EVENT_HEADER& h = e->EventHeader;
  const bool first = r.events == 0 && r.others == 0 && !r.header_first;
  if (first && IsEqualGUID(h.ProviderId, EventTraceGuid) && h.EventDescriptor.Opcode == 0) {
    r.header_first = true;
  } else if (IsEqualGUID(h.ProviderId, kProvider)) {
    ++r.events;
  } else {
    ++r.others;
  }
  if (h.TimeStamp.QuadPart < r.start || h.TimeStamp.QuadPart > r.end) ++r.outside_span;
}

ReadBack read_back(const std::string& file) {
  ReadBack r;
  EVENT_TRACE_LOGFILEA l{};
  std::string name = file;
  TRACEHANDLE h = etwrt::testing::open_file(l, name, read_back_record, &r);
  if (h == INVALID_PROCESSTRACE_HANDLE) {
    r.open_status = GetLastError();
    return r;
  }
  r.start = l.LogfileHeader.StartTime.QuadPart;
  r.end = l.LogfileHeader.EndTime.QuadPart;
  r.header_events_lost = l.LogfileHeader.EventsLost;
  r.process_status = ProcessTrace(&h, 1, nullptr, nullptr);
  CloseTrace(h);
  return r;
}

// What every file of a stopped session must show when read back: `events` of the provider
// after the header event, stamps inside the span, `lost` in the header.
void expect_read_back(const std::string& file, ULONG events, ULONG lost) {
  SCOPED_TRACE(file);
  const ReadBack r = read_back(file);
  ASSERT_EQ(r.open_status, static_cast<ULONG>(ERROR_SUCCESS));
  EXPECT_EQ(r.process_status, static_cast<ULONG>(ERROR_SUCCESS));
  EXPECT_TRUE(r.header_first);
  EXPECT_EQ(r.events, events);
  EXPECT_EQ(r.others, 0u);
  EXPECT_EQ(r.outside_span, 0u) << "StartTime " << r.start << " EndTime " << r.end;
  EXPECT_EQ(r.header_events_lost, lost);
}

// A file that lost some of the `written` events: its layout checked strictly, then read back, both
// showing written - lost events and `lost` in the header.
void expect_file_accounts(const std::string& file, ULONG written, ULONG lost) {
  const Checked c =
      check_layout(file, {{"strict", true}, {"events", written - lost}, {"events_lost", lost}});
  EXPECT_EQ(c.status, 0) << c.output;
  expect_read_back(file, written - lost, lost);
}

// kProvider registered and enabled by `session` at level 5, every keyword.
REGHANDLE enabled_provider(TRACEHANDLE session) {
  REGHANDLE reg = 0;
  EXPECT_EQ(EventRegister(&kProvider, nullptr, nullptr, &reg), ERROR_SUCCESS);
  EXPECT_EQ(EnableTraceEx2(session, &kProvider, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 5, 0, 0, 10000,
                           nullptr),
            ERROR_SUCCESS);
  return reg;
}

// A provider enabled by the session, writing `count` events of kPayload bytes (the index
// first), pausing 1 ms after every `burst` events (0: never), so that a test that needs the
// file to fill does not depend on how fast the logger runs on a loaded machine. Returns how
// many EventWrite calls returned ERROR_SUCCESS.
ULONG write_events(TRACEHANDLE session, ULONG count, ULONG burst = 0) {
  const REGHANDLE reg = enabled_provider(session);
  EVENT_DESCRIPTOR descriptor{};
  descriptor.Id = 7;
  descriptor.Level = 4;
  ULONG ok = 0;
  for (ULONG i = 0; i < count; ++i) {
    std::array<ULONG, kPayload / 4> payload{};
    payload[0] = i;
    EVENT_DATA_DESCRIPTOR data;
    EventDataDescCreate(&data, payload.data(), kPayload);
    if (EventWrite(reg, &descriptor, 1, &data) == ERROR_SUCCESS) ++ok;
    if (burst != 0 && (i + 1) % burst == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  EventUnregister(reg);
  return ok;
}

struct Stopped {
  ULONG status = 0;
  ULONG events_lost = 0;
  ULONG buffers_written = 0;
  ULONG log_buffers_lost = 0;
  std::string log_file;
};

Stopped stop(const std::string& name) {
  FileProperties p("", 0);
  p.get()->LogFileNameOffset = 0;
  Stopped s;
  s.status = ControlTraceA(0, name.c_str(), p.get(), EVENT_TRACE_CONTROL_STOP);
  s.events_lost = p.get()->EventsLost;
  s.buffers_written = p.get()->BuffersWritten;
  s.log_buffers_lost = p.get()->LogBuffersLost;
  if (p.get()->LogFileNameOffset != 0) s.log_file = p.bytes.data() + p.get()->LogFileNameOffset;
  return s;
}

class EtlWrite : public ::testing::Test {
 protected:
  EtlWrite() : home_("etwrt-etl") {}
  std::string path(const std::string& name) const { return home_.dir() + "/" + name; }
  // Session `name` logging to `p`'s file; the test stops it (stop).
  static TRACEHANDLE start_logging(const char* name, FileProperties& p) {
    TRACEHANDLE h = 0;
    EXPECT_EQ(StartTraceA(&h, name, p.get()), ERROR_SUCCESS) << name;
    return h;
  }
  // A SEQUENTIAL session `name` logging to `file`, its buffers flushed every `flush_seconds`
  // (0: only when full, or by ControlTrace).
  static TRACEHANDLE start_sequential(const char* name, const std::string& file,
                                      ULONG flush_seconds) {
    FileProperties p(file, EVENT_TRACE_FILE_MODE_SEQUENTIAL);
    p.get()->FlushTimer = flush_seconds;
    return start_logging(name, p);
  }
  // Session `name` logs `events` events to `p`'s file in bursts of `burst`, then stops.
  static Stopped log_then_stop(const char* name, FileProperties& p, ULONG events, ULONG burst) {
    write_events(start_logging(name, p), events, burst);
    Stopped s = stop(name);
    EXPECT_EQ(s.status, ERROR_SUCCESS) << name;
    return s;
  }
  // Session `name` logs `events` events in bursts of 200 to `file`, bounded at `max_kb` KB in
  // `mode`: the file then has that size exactly, and buffers did not fit (counted lost).
  static Stopped fill_bounded_file(const char* name, const std::string& file, ULONG mode,
                                   ULONG max_kb, ULONG events) {
    FileProperties p = FileProperties::at_most_kb(file, mode, max_kb);
    const Stopped s = log_then_stop(name, p, events, 200);
    EXPECT_EQ(std::filesystem::file_size(file), max_kb * 1024u) << name;
    EXPECT_GT(s.log_buffers_lost, 0u) << name;
    return s;
  }
  PrivateBrokerHome home_;
};

// Logging Mode Constants page: SEQUENTIAL "writes events to a log file sequentially".
TEST_F(EtlWrite, SequentialFileHoldsEveryEventNotReportedLost) {
  const std::string file = path("seq.etl");
  FileProperties p(file, EVENT_TRACE_FILE_MODE_SEQUENTIAL);
  const TRACEHANDLE h = start_logging("etl-seq", p);
  // StartTrace writes the name back at LogFileNameOffset (EVENT_TRACE_PROPERTIES page).
  EXPECT_EQ(std::string(p.bytes.data() + p.get()->LogFileNameOffset), file);
  constexpr ULONG kEvents = 2000;
  const ULONG written = write_events(h, kEvents);
  const Stopped s = stop("etl-seq");
  ASSERT_EQ(s.status, ERROR_SUCCESS);
  EXPECT_EQ(s.log_file, file);  // ControlTrace(STOP) too
  EXPECT_EQ(written + s.events_lost, kEvents);
  const Checked c = check_layout(file, {{"strict", true},
                                        {"logger_name", "etl-seq"},
                                        {"log_file_name", file},
                                        {"log_file_mode", EVENT_TRACE_FILE_MODE_SEQUENTIAL},
                                        {"buffer_size", 4096},
                                        {"clock", 1},
                                        {"events", kEvents - s.events_lost},
                                        {"events_lost", s.events_lost},
                                        {"buffers_written", s.buffers_written},
                                        {"provider", kProviderText},
                                        {"user_data_size", kPayload}});
  EXPECT_EQ(c.status, 0) << c.output;
  EXPECT_EQ(std::filesystem::file_size(file), std::uintmax_t{s.buffers_written} * 4096);
  expect_read_back(file, kEvents - s.events_lost, s.events_lost);
}

// Loss is accounted as for realtime: buffers too few for the writer's pace lose events, and
// the file's events plus EventsLost (header and STOP) are every event written.
TEST_F(EtlWrite, EventsLostWhenBuffersRunOutAreCountedInTheHeaderAndStop) {
  const std::string file = path("loss.etl");
  FileProperties p(file, EVENT_TRACE_FILE_MODE_SEQUENTIAL);
  p.get()->MaximumBuffers = 2;  // raised to the minimum etwrt allows: still a few dozen KB
  const TRACEHANDLE h = start_logging("etl-loss", p);
  constexpr ULONG kEvents = 300000;
  const ULONG written = write_events(h, kEvents);
  const Stopped s = stop("etl-loss");
  ASSERT_EQ(s.status, ERROR_SUCCESS);
  EXPECT_GT(s.events_lost, 0u) << "no loss: this test proves nothing on this machine";
  EXPECT_EQ(written + s.events_lost, kEvents);
  expect_file_accounts(file, kEvents, s.events_lost);
}

// CIRCULAR: "after the file reaches the maximum size, the oldest events are replaced". etwrt
// counts the replaced events in EventsLost and their buffers in BuffersLost (docs/etwrt/
// internals.md, "Trace files (writing)"), so that the file's events + EventsLost are every event
// written.
TEST_F(EtlWrite, CircularFileWrapsAndCountsTheOverwrittenEventsAsLost) {
  const std::string file = path("circ.etl");
  constexpr ULONG kEvents = 20000;
  // 16 buffers of 4 KB, the header's included.
  const Stopped s =
      fill_bounded_file("etl-circ", file, EVENT_TRACE_FILE_MODE_CIRCULAR, 64, kEvents);
  const Checked c = check_layout(file, {{"strict", true},
                                        {"events", kEvents - s.events_lost},
                                        {"events_lost", s.events_lost},
                                        {"buffers_lost", s.log_buffers_lost}});
  EXPECT_EQ(c.status, 0) << c.output;
  expect_read_back(file, kEvents - s.events_lost, s.events_lost);
}

// NEWFILE: "automatically switches to a new log file when the file reaches the maximum size",
// the %d replaced by a counter. Each file is a whole trace file.
TEST_F(EtlWrite, NewFileSwitchesFilesAtMaximumFileSizeEachOneValid) {
  const std::string pattern = path("new%d.etl");
  FileProperties p = FileProperties::at_most_kb(pattern, EVENT_TRACE_FILE_MODE_NEWFILE, 64);
  constexpr ULONG kEvents = 8000;
  const Stopped s = log_then_stop("etl-new", p, kEvents, 200);
  ULONG in_files = 0;
  ULONG read_back_events = 0;  // the same, through OpenTrace and ProcessTrace
  int files = 0;
  for (int i = 1; std::filesystem::exists(path("new" + std::to_string(i) + ".etl")); ++i) {
    const std::string file = path("new" + std::to_string(i) + ".etl");
    EXPECT_LE(std::filesystem::file_size(file), 64u * 1024);
    const Checked c = check_layout(file, {{"strict", true}, {"log_file_name", file}});
    EXPECT_EQ(c.status, 0) << c.output;
    in_files += c.summary.value("events", 0u);
    const ReadBack r = read_back(file);
    EXPECT_EQ(r.process_status, static_cast<ULONG>(ERROR_SUCCESS)) << file;
    EXPECT_TRUE(r.header_first) << file;
    EXPECT_EQ(r.events, c.summary.value("events", 0u)) << file;
    EXPECT_EQ(r.outside_span, 0u) << file;
    read_back_events += r.events;
    ++files;
  }
  EXPECT_GE(files, 2);
  EXPECT_EQ(in_files + s.events_lost, kEvents);
  EXPECT_EQ(read_back_events + s.events_lost, kEvents);
}

// APPEND: "appends events to an existing sequential log file"; BufferSize and the clock must be
// the file's. The header keeps the first session's StartTime and counts both.
TEST_F(EtlWrite, AppendAddsToTheFileOfAnEarlierSession) {
  const std::string file = path("append.etl");
  ULONG lost = 0;
  for (const char* name : {"etl-append-1", "etl-append-2"}) {
    FileProperties p(file, EVENT_TRACE_FILE_MODE_SEQUENTIAL | EVENT_TRACE_FILE_MODE_APPEND);
    p.get()->Wnode.ClientContext = 2;  // system time, as the page asks for APPEND
    const TRACEHANDLE h = start_logging(name, p);
    write_events(h, 1000);
    const Stopped s = stop(name);
    ASSERT_EQ(s.status, ERROR_SUCCESS);
    lost += s.events_lost;
  }
  const Checked c = check_layout(
      file, {{"strict", true}, {"clock", 2}, {"events", 2000 - lost}, {"events_lost", lost}});
  EXPECT_EQ(c.status, 0) << c.output;
  expect_read_back(file, 2000 - lost, lost);
  FileProperties other(file, EVENT_TRACE_FILE_MODE_APPEND);
  other.get()->BufferSize = 8;  // not the file's: refused
  TRACEHANDLE h = 0;
  EXPECT_EQ(StartTraceA(&h, "etl-append-3", other.get()), ERROR_INVALID_PARAMETER);
}

// FLUSH: the buffers reach the file before ControlTrace returns (the session still runs).
TEST_F(EtlWrite, FlushPutsBufferedEventsInTheFileBeforeItReturns) {
  const std::string file = path("flush.etl");
  const TRACEHANDLE h = start_sequential("etl-flush", file, 0);
  write_events(h, 10);
  EXPECT_EQ(check_layout(file, {}).summary.value("events", -1), 0);  // still in the pool
  FileProperties q("", 0);
  ASSERT_EQ(ControlTraceA(h, nullptr, q.get(), EVENT_TRACE_CONTROL_FLUSH), ERROR_SUCCESS);
  const Checked c = check_layout(file, {{"events", 10}});
  EXPECT_EQ(c.status, 0) << c.output;
  EXPECT_EQ(q.get()->BuffersWritten, 2u);  // the header and the flushed buffer
  EXPECT_EQ(stop("etl-flush").status, ERROR_SUCCESS);
}

// FlushTimer: "how often, in seconds, the trace buffers are forcibly flushed"
// (EVENT_TRACE_PROPERTIES page): a partly filled buffer reaches the file without a FLUSH.
TEST_F(EtlWrite, FlushTimerWritesAPartlyFilledBuffer) {
  const std::string file = path("timer.etl");
  const TRACEHANDLE h = start_sequential("etl-timer", file, 1);
  write_events(h, 10);
  int events = 0;
  for (int i = 0; i < 40 && events != 10; ++i) {  // within 4 s: a FlushTimer of 1 s and slack
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    events = check_layout(file, {}).summary.value("events", -1);
  }
  EXPECT_EQ(events, 10);
  EXPECT_EQ(stop("etl-timer").status, ERROR_SUCCESS);
}

// QUERY gives the file's name at LogFileNameOffset (EVENT_TRACE_PROPERTIES page); a relative
// name is the caller's, made absolute (the broker's working directory is not the caller's).
TEST_F(EtlWrite, QueryReturnsTheLogFileNameAndARelativeNameIsTheCallers) {
  const std::filesystem::path before = std::filesystem::current_path();
  std::filesystem::current_path(home_.dir());
  FileProperties p("relative.etl", EVENT_TRACE_FILE_MODE_SEQUENTIAL);
  TRACEHANDLE h = 0;
  const ULONG started = StartTraceA(&h, "etl-relative", p.get());
  std::filesystem::current_path(before);
  ASSERT_EQ(started, ERROR_SUCCESS);
  FileProperties q("", 0);
  q.get()->LogFileNameOffset = 0;
  ASSERT_EQ(ControlTraceA(h, nullptr, q.get(), EVENT_TRACE_CONTROL_QUERY), ERROR_SUCCESS);
  ASSERT_NE(q.get()->LogFileNameOffset, 0u);
  EXPECT_EQ(std::string(q.bytes.data() + q.get()->LogFileNameOffset), path("relative.etl"));
  EXPECT_EQ(q.get()->LogFileMode, static_cast<ULONG>(EVENT_TRACE_FILE_MODE_SEQUENTIAL));
  EXPECT_TRUE(std::filesystem::exists(path("relative.etl")));
  EXPECT_EQ(stop("etl-relative").status, ERROR_SUCCESS);
}

// SEQUENTIAL with MaximumFileSize: "stops when the file reaches its maximum size" (Logging Mode
// Constants); xperf's "Log File Modes" page says of the same mode that "older events are kept
// preferentially, while newer events may be discarded if the maximum file size has been
// reached": the file keeps its first events, and the events that no longer fit are counted lost.
TEST_F(EtlWrite, SequentialStopsGrowingAtMaximumFileSizeAndCountsTheRest) {
  const std::string file = path("max.etl");
  constexpr ULONG kEvents = 5000;
  const Stopped s =
      fill_bounded_file("etl-max", file, EVENT_TRACE_FILE_MODE_SEQUENTIAL, 32, kEvents);
  expect_file_accounts(file, kEvents, s.events_lost);
}

// Realtime and file at once: the consumer and the file each get every event.
TEST_F(EtlWrite, RealtimeAndFileAtOnceBothGetEveryEvent) {
  const std::string file = path("both.etl");
  FileProperties p(file, EVENT_TRACE_FILE_MODE_SEQUENTIAL | EVENT_TRACE_REAL_TIME_MODE);
  const TRACEHANDLE h = start_logging("etl-both", p);
  static std::atomic<ULONG> received{0};
  received = 0;
  EVENT_TRACE_LOGFILEA log{};
  log.LoggerName = const_cast<char*>("etl-both");
  log.ProcessTraceMode = PROCESS_TRACE_MODE_REAL_TIME | PROCESS_TRACE_MODE_EVENT_RECORD;
  log.EventRecordCallback = [](PEVENT_RECORD r) {
    if (IsEqualGUID(r->EventHeader.ProviderId, kProvider)) ++received;
  };
  TRACEHANDLE consumer = OpenTraceA(&log);
  ASSERT_NE(consumer, INVALID_PROCESSTRACE_HANDLE);
  std::thread reading([&] { ProcessTrace(&consumer, 1, nullptr, nullptr); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the relay feed is set up
  constexpr ULONG kEvents = 1000;
  write_events(h, kEvents);
  const Stopped s = stop("etl-both");
  reading.join();
  CloseTrace(consumer);
  ASSERT_EQ(s.status, ERROR_SUCCESS);
  EXPECT_EQ(received.load() + s.events_lost, kEvents);
  const Checked c = check_layout(file, {{"strict", true}, {"events", kEvents - s.events_lost}});
  EXPECT_EQ(c.status, 0) << c.output;
  const ReadBack r = read_back(file);  // The file's events: those its consumer got too.
  EXPECT_EQ(r.process_status, static_cast<ULONG>(ERROR_SUCCESS));
  EXPECT_TRUE(r.header_first);
  EXPECT_EQ(r.events, kEvents - s.events_lost);
  EXPECT_EQ(r.outside_span, 0u);
}

// Extended items go into the file as its format keeps them (after the EVENT_HEADER, chained by
// their linkage bit): provider traits set with EventSetInformation and EventWriteTransfer's
// related activity ID, one of each per event.
TEST_F(EtlWrite, ExtendedItemsFollowTheEventHeader) {
  const std::string file = path("items.etl");
  FileProperties p(file, EVENT_TRACE_FILE_MODE_SEQUENTIAL);
  const TRACEHANDLE h = start_logging("etl-items", p);
  REGHANDLE reg = 0;
  ASSERT_EQ(EventRegister(&kProvider, nullptr, nullptr, &reg), ERROR_SUCCESS);
  std::array<std::uint8_t, 7> traits = {7, 0, 'P', 0, 3, 0, 130};  // name "P", one trait
  ASSERT_EQ(EventSetInformation(reg, EventProviderSetTraits, traits.data(), traits.size()),
            ERROR_SUCCESS);
  ASSERT_EQ(
      EnableTraceEx2(h, &kProvider, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 5, 0, 0, 10000, nullptr),
      ERROR_SUCCESS);
  EVENT_DESCRIPTOR descriptor{};
  descriptor.Level = 4;
  const GUID activity = kProvider;
  const GUID related = {1, 2, 3, {4, 5, 6, 7, 8, 9, 10, 11}};
  std::array<char, kPayload> payload{};
  EVENT_DATA_DESCRIPTOR data;
  EventDataDescCreate(&data, payload.data(), kPayload);
  constexpr ULONG kEvents = 50;
  for (ULONG i = 0; i < kEvents; ++i) {
    EXPECT_EQ(EventWriteTransfer(reg, &descriptor, &activity, &related, 1, &data), ERROR_SUCCESS);
  }
  EventUnregister(reg);
  const Stopped s = stop("etl-items");
  ASSERT_EQ(s.events_lost, 0u);
  const Checked c =
      check_layout(file, {{"strict", true}, {"events", kEvents}, {"user_data_size", kPayload}});
  EXPECT_EQ(c.status, 0) << c.output;
  EXPECT_EQ(c.summary.value("extended_items", 0u), 2 * kEvents);
}

// Every byte of the user data reaches the file, whatever its length (the logger copies it by
// whole words from the pool, the last one cut at the data's end), and the gap after it is zeros.
struct PayloadCheck {
  ULONG events = 0;
  ULONG wrong = 0;  // events whose UserData is not the bytes written
};

std::uint8_t payload_byte(ULONG length, ULONG k) {
  return static_cast<std::uint8_t>(length * 31 + k + 1);
}

void WINAPI check_payload_record(PEVENT_RECORD e) {
  auto& r = *static_cast<PayloadCheck*>(e->UserContext);
  if (!IsEqualGUID(e->EventHeader.ProviderId, kProvider)) return;
  ++r.events;
  const ULONG length = e->EventHeader.EventDescriptor.Id;
  bool same = e->UserDataLength == length;
  for (ULONG k = 0; same && k < length; ++k)
    same = static_cast<const std::uint8_t*>(e->UserData)[k] == payload_byte(length, k);
  if (!same) ++r.wrong;
}

TEST_F(EtlWrite, EveryUserDataByteReachesTheFileWhateverItsLength) {
  const std::string file = path("lengths.etl");
  FileProperties p(file, EVENT_TRACE_FILE_MODE_SEQUENTIAL);
  const REGHANDLE reg = enabled_provider(start_logging("etl-lengths", p));
  constexpr ULONG kLongest = 40;
  for (ULONG length = 0; length <= kLongest; ++length) {
    std::array<std::uint8_t, kLongest> payload{};
    for (ULONG k = 0; k < length; ++k) payload[k] = payload_byte(length, k);
    EVENT_DESCRIPTOR descriptor{};
    descriptor.Id = static_cast<USHORT>(length);
    descriptor.Level = 4;
    EVENT_DATA_DESCRIPTOR data;
    EventDataDescCreate(&data, payload.data(), length);
    EXPECT_EQ(EventWrite(reg, &descriptor, length == 0 ? 0 : 1, &data), ERROR_SUCCESS);
  }
  EventUnregister(reg);
  ASSERT_EQ(stop("etl-lengths").events_lost, 0u);
  const Checked c = check_layout(file, {{"strict", true}, {"events", kLongest + 1}});
  EXPECT_EQ(c.status, 0) << c.output;
  PayloadCheck r;
  EVENT_TRACE_LOGFILEA l{};
  std::string name = file;
  TRACEHANDLE t = etwrt::testing::open_file(l, name, check_payload_record, &r);
  ASSERT_NE(t, INVALID_PROCESSTRACE_HANDLE);
  EXPECT_EQ(ProcessTrace(&t, 1, nullptr, nullptr), static_cast<ULONG>(ERROR_SUCCESS));
  CloseTrace(t);
  EXPECT_EQ(r.events, kLongest + 1);
  EXPECT_EQ(r.wrong, 0u);
}

// StartTrace page, ERROR_DISK_FULL: a file the disk has no room for is refused before anything
// is made or cut, so a file already at that name keeps every byte.
TEST_F(EtlWrite, NoRoomForMaximumFileSizeIsDiskFullAndTheExistingFileIsKept) {
  const std::string file = path("kept.etl");
  const std::string kept = "bytes that were here before";
  std::ofstream(file, std::ios::binary) << kept;
  for (const ULONG mode :
       {ULONG{EVENT_TRACE_FILE_MODE_SEQUENTIAL},
        ULONG{EVENT_TRACE_FILE_MODE_SEQUENTIAL | EVENT_TRACE_FILE_MODE_PREALLOCATE},
        ULONG{EVENT_TRACE_FILE_MODE_APPEND}}) {
    FileProperties p(file, mode);
    p.get()->MaximumFileSize = 0xFFFFFFFF;  // MB
    TRACEHANDLE h = 0;
    EXPECT_EQ(StartTraceA(&h, "etl-no-room", p.get()), static_cast<ULONG>(ERROR_DISK_FULL)) << mode;
    std::ifstream in(file, std::ios::binary);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), kept) << mode;
  }
}

// Logging Mode Constants page, PREALLOCATE: "Reserves EVENT_TRACE_PROPERTIES.MaximumFileSize
// bytes of disk space for the log file in advance. The file occupies the entire space during
// logging, for both circular and sequential log files. When you stop the session, the log file
// is reduced to the size needed."
TEST_F(EtlWrite, PreallocateReservesTheMaximumSizeWhileLoggingAndTheStopReducesIt) {
  constexpr ULONG kMaxKb = 512;
  constexpr ULONG kEvents = 300;
  for (const ULONG mode :
       {ULONG{EVENT_TRACE_FILE_MODE_SEQUENTIAL}, ULONG{EVENT_TRACE_FILE_MODE_CIRCULAR}}) {
    SCOPED_TRACE(mode);
    const std::string file = path("prealloc-" + std::to_string(mode) + ".etl");
    FileProperties p =
        FileProperties::at_most_kb(file, mode | EVENT_TRACE_FILE_MODE_PREALLOCATE, kMaxKb);
    p.get()->FlushTimer = 0;
    const TRACEHANDLE h = start_logging("etl-prealloc", p);
    struct stat st {};
    ASSERT_EQ(::stat(file.c_str(), &st), 0);
    EXPECT_EQ(st.st_size, kMaxKb * 1024);
    EXPECT_GE(st.st_blocks * 512, kMaxKb * 1024) << "the space is reserved, not a sparse file";
    const ULONG written = write_events(h, kEvents);
    const Stopped s = stop("etl-prealloc");
    ASSERT_EQ(s.status, ERROR_SUCCESS);
    ASSERT_EQ(s.events_lost, 0u);
    // The header buffer and the ones written: 300 events of 112 bytes in 4 KB buffers.
    const auto size = std::filesystem::file_size(file);
    EXPECT_EQ(size, std::uintmax_t{s.buffers_written} * 4096);
    EXPECT_LT(size, kMaxKb * 1024u);
    expect_file_accounts(file, written, 0);
  }
}

// Classic providers (TraceEvent) are written as EVENT_TRACE_HEADER records (FULL_HEADER64).
const GUID kControl = {
    0x6f1d8b52, 0x3cae, 0x4d74, {0x90, 0x25, 0x7b, 0x31, 0xa4, 0xe8, 0x2f, 0x69}};
const GUID kClass = {0x701e9c63, 0x4dbf, 0x4e85, {0xa1, 0x36, 0x8c, 0x42, 0xb5, 0xf9, 0x30, 0x7a}};
std::atomic<TRACEHANDLE> g_logger{0};

ULONG WINAPI control_callback(WMIDPREQUESTCODE code, PVOID, ULONG*, PVOID buffer) {
  if (code == WMI_ENABLE_EVENTS) g_logger = GetTraceLoggerHandle(buffer);
  return ERROR_SUCCESS;
}

TEST_F(EtlWrite, ClassicEventsAreEventTraceHeaderRecords) {
  const std::string file = path("classic.etl");
  FileProperties p(file, EVENT_TRACE_FILE_MODE_SEQUENTIAL);
  const TRACEHANDLE h = start_logging("etl-classic", p);
  TRACEHANDLE reg = 0;
  TRACE_GUID_REGISTRATION classes[1] = {{&kClass, nullptr}};
  g_logger = 0;
  ASSERT_EQ(RegisterTraceGuidsA(&control_callback, nullptr, &kControl, 1, classes, nullptr, nullptr,
                                &reg),
            ERROR_SUCCESS);
  ASSERT_EQ(EnableTrace(TRUE, 0, TRACE_LEVEL_INFORMATION, &kControl, h), ERROR_SUCCESS);
  for (int i = 0; i < 500 && g_logger == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_NE(g_logger.load(), 0u);
  struct {
    EVENT_TRACE_HEADER header;
    ULONG value;
  } e{};
  e.header.Size = sizeof e;
  e.header.Flags = WNODE_FLAG_TRACED_GUID;
  e.header.Guid = kClass;
  e.header.Class.Type = 10;
  e.header.Class.Level = TRACE_LEVEL_INFORMATION;
  constexpr ULONG kEvents = 40;
  for (ULONG i = 0; i < kEvents; ++i) EXPECT_EQ(TraceEvent(g_logger, &e.header), ERROR_SUCCESS);
  UnregisterTraceGuids(reg);
  const Stopped s = stop("etl-classic");
  ASSERT_EQ(s.events_lost, 0u);
  const Checked c = check_layout(file, {{"strict", true},
                                        {"events", kEvents},
                                        {"provider", "701e9c63-4dbf-4e85-a136-8c42b5f9307a"}});
  EXPECT_EQ(c.status, 0) << c.output;
  EXPECT_EQ(c.summary.value("classic", 0u), kEvents);
}

// StartTrace page: a LogFileMode combination that is not valid is ERROR_INVALID_PARAMETER;
// another session already using the file name is ERROR_BAD_PATHNAME. Logging Mode Constants
// page: APPEND not with CIRCULAR, NEWFILE, REAL_TIME or PRIVATE; NEWFILE needs a %d;
// SEQUENTIAL not with CIRCULAR or NEWFILE; CIRCULAR and NEWFILE need a MaximumFileSize.
TEST_F(EtlWrite, InvalidCombinationsAndNamesGetTheDocumentedStatus) {
  struct Case {
    const char* file;
    ULONG mode;
    ULONG max;
    ULONG status;
  };
  const Case cases[] = {
      {"a.etl", EVENT_TRACE_FILE_MODE_APPEND | EVENT_TRACE_FILE_MODE_CIRCULAR, 1,
       ERROR_INVALID_PARAMETER},
      {"a.etl", EVENT_TRACE_FILE_MODE_APPEND | EVENT_TRACE_REAL_TIME_MODE, 0,
       ERROR_INVALID_PARAMETER},
      {"a%d.etl", EVENT_TRACE_FILE_MODE_APPEND | EVENT_TRACE_FILE_MODE_NEWFILE, 1,
       ERROR_INVALID_PARAMETER},
      {"a.etl", EVENT_TRACE_FILE_MODE_APPEND | EVENT_TRACE_PRIVATE_LOGGER_MODE, 0,
       ERROR_INVALID_PARAMETER},
      {"a.etl", EVENT_TRACE_FILE_MODE_NEWFILE, 1, ERROR_INVALID_PARAMETER},
      {"a%d%d.etl", EVENT_TRACE_FILE_MODE_NEWFILE, 1, ERROR_INVALID_PARAMETER},
      {"a%d.etl", EVENT_TRACE_FILE_MODE_NEWFILE, 0, ERROR_INVALID_PARAMETER},
      {"a.etl", EVENT_TRACE_FILE_MODE_CIRCULAR, 0, ERROR_INVALID_PARAMETER},
      {"a.etl", EVENT_TRACE_FILE_MODE_SEQUENTIAL | EVENT_TRACE_FILE_MODE_CIRCULAR, 1,
       ERROR_INVALID_PARAMETER},
      {"no-such-dir/a.etl", EVENT_TRACE_FILE_MODE_SEQUENTIAL, 0, ERROR_PATH_NOT_FOUND},
      // PREALLOCATE: "You must set EVENT_TRACE_PROPERTIES.MaximumFileSize", "You cannot use the
      // mode for private event tracing sessions" (Logging Mode Constants page).
      {"a.etl", EVENT_TRACE_FILE_MODE_SEQUENTIAL | EVENT_TRACE_FILE_MODE_PREALLOCATE, 0,
       ERROR_INVALID_PARAMETER},
      {"a.etl",
       EVENT_TRACE_FILE_MODE_SEQUENTIAL | EVENT_TRACE_FILE_MODE_PREALLOCATE |
           EVENT_TRACE_PRIVATE_LOGGER_MODE,
       1, ERROR_INVALID_PARAMETER},
      // StartTrace page, ERROR_DISK_FULL: "MaximumFileSize is nonzero and there is not
      // MaximumFileSize bytes available for the log file" (4 PB: no disk here has them).
      {"a.etl", EVENT_TRACE_FILE_MODE_SEQUENTIAL, 0xFFFFFFFF, ERROR_DISK_FULL},
      {"a.etl", EVENT_TRACE_FILE_MODE_CIRCULAR | EVENT_TRACE_FILE_MODE_PREALLOCATE, 0xFFFFFFFF,
       ERROR_DISK_FULL},
  };
  for (const Case& c : cases) {
    FileProperties p(path(c.file), c.mode);
    p.get()->MaximumFileSize = c.max;
    TRACEHANDLE h = 0;
    EXPECT_EQ(StartTraceA(&h, "etl-invalid", p.get()), c.status) << c.file << " " << c.mode;
    EXPECT_FALSE(std::filesystem::exists(path(c.file)));
  }
  FileProperties first(path("taken.etl"), EVENT_TRACE_FILE_MODE_SEQUENTIAL);
  TRACEHANDLE h = 0;
  ASSERT_EQ(StartTraceA(&h, "etl-taken-1", first.get()), ERROR_SUCCESS);
  FileProperties second(path("taken.etl"), EVENT_TRACE_FILE_MODE_SEQUENTIAL);
  EXPECT_EQ(StartTraceA(&h, "etl-taken-2", second.get()), ERROR_BAD_PATHNAME);
  EXPECT_EQ(stop("etl-taken-1").status, ERROR_SUCCESS);
}

// A log file name that is there but is not a regular file: a symlink (to a file or to a
// device), a FIFO, a device, a directory. StartTrace refuses each with ERROR_ACCESS_DENIED (the
// page's code for a log file the caller may not create; docs/etwrt/conformance.md, "Choices where
// the documents are silent") and writes nothing through it: the link's target keeps its bytes, the
// FIFO is never opened.
TEST_F(EtlWrite, ANameThatIsNoRegularFileIsRefusedAndNeverWrittenThrough) {
  const std::string target = path("target.txt");
  { std::ofstream(target) << "not a trace"; }
  ASSERT_EQ(::symlink(target.c_str(), path("to-file.etl").c_str()), 0);
  ASSERT_EQ(::symlink("/dev/null", path("to-device.etl").c_str()), 0);
  ASSERT_EQ(::symlink(path("nowhere").c_str(), path("dangling.etl").c_str()), 0);
  ASSERT_EQ(::mkfifo(path("fifo.etl").c_str(), 0600), 0);
  ASSERT_EQ(::mkdir(path("dir.etl").c_str(), 0700), 0);
  const std::string names[] = {path("to-file.etl"), path("to-device.etl"), path("dangling.etl"),
                               path("fifo.etl"),    path("dir.etl"),       "/dev/null"};
  for (const std::string& name : names) {
    for (ULONG mode : {ULONG{EVENT_TRACE_FILE_MODE_SEQUENTIAL},
                       ULONG{EVENT_TRACE_FILE_MODE_SEQUENTIAL | EVENT_TRACE_FILE_MODE_APPEND}}) {
      FileProperties p(name, mode);
      TRACEHANDLE h = 0;
      const ULONG status = StartTraceA(&h, "etl-not-a-file", p.get());
      EXPECT_EQ(status, ERROR_ACCESS_DENIED) << name << " mode " << mode;
      if (status == ERROR_SUCCESS) stop("etl-not-a-file");
    }
  }
  std::ifstream in(target);
  const std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(kept, "not a trace");
  EXPECT_FALSE(std::filesystem::exists(path("nowhere")));
  EXPECT_TRUE(std::filesystem::is_fifo(path("fifo.etl")));
  EXPECT_TRUE(std::filesystem::is_directory(path("dir.etl")));
  EXPECT_TRUE(std::filesystem::is_empty(path("dir.etl")));
  // A regular file of that name is still written.
  FileProperties ok(path("plain.etl"), EVENT_TRACE_FILE_MODE_SEQUENTIAL);
  TRACEHANDLE h = 0;
  ASSERT_EQ(StartTraceA(&h, "etl-plain", ok.get()), ERROR_SUCCESS);
  EXPECT_EQ(stop("etl-plain").status, ERROR_SUCCESS);
}

}  // namespace

// An UPDATE's Properties naming `file` (UTF-8, or UTF-16 for ControlTraceW) at LogFileNameOffset,
// every other field 0: nothing else changes.
TraceProperties update_to(const std::string& file, bool wide) {
  TraceProperties u;
  u.get()->LogFileMode = 0;
  u.get()->LogFileNameOffset = sizeof(EVENT_TRACE_PROPERTIES) + 512;
  char* at = u.bytes.data() + u.get()->LogFileNameOffset;
  if (wide) {
    const std::u16string text(file.begin(), file.end());  // ASCII paths
    std::memcpy(at, text.c_str(), (text.size() + 1) * sizeof(char16_t));
  } else {
    std::memcpy(at, file.c_str(), file.size() + 1);
  }
  return u;
}

// ControlTrace page, UPDATE: "LogFileNameOffset: Set this member if you want to switch to another
// log file ... If the offset is not zero and you do not change the log file name, the function
// returns an error"; ERROR_BAD_PATHNAME: "Another session is already using the file name". Each
// file holds what was logged while it was the session's, and is complete (its final header).
TEST_F(EtlWrite, UpdateWithALogFileNameSwitchesTheSessionToThatFile) {
  const std::string first = path("first.etl"), second = path("second.etl"),
                    third = path("third.etl");
  const TRACEHANDLE h = start_sequential("etl-switch", first, 0);
  ASSERT_EQ(write_events(h, 300, 50), 300u);
  TraceProperties to_second = update_to(second, false);
  ASSERT_EQ(ControlTraceA(h, nullptr, to_second.get(), EVENT_TRACE_CONTROL_UPDATE), ERROR_SUCCESS);
  EXPECT_EQ(std::string(to_second.bytes.data() + to_second.get()->LogFileNameOffset), second);
  ASSERT_EQ(write_events(h, 200, 50), 200u);
  TraceProperties to_third = update_to(third, true);
  ASSERT_EQ(ControlTraceW(h, nullptr, to_third.get(), EVENT_TRACE_CONTROL_UPDATE), ERROR_SUCCESS);
  ASSERT_EQ(write_events(h, 100, 50), 100u);

  // Refused, nothing changed: the same name, another session's file, an offset past the buffer,
  // a session with no log file (etwrt choice).
  TraceProperties same = update_to(third, false);
  EXPECT_EQ(ControlTraceA(h, nullptr, same.get(), EVENT_TRACE_CONTROL_UPDATE),
            ERROR_INVALID_PARAMETER);
  const std::string other = path("other.etl");
  start_sequential("etl-switch-other", other, 0);
  TraceProperties taken = update_to(other, false);
  EXPECT_EQ(ControlTraceA(h, nullptr, taken.get(), EVENT_TRACE_CONTROL_UPDATE), ERROR_BAD_PATHNAME);
  TraceProperties past = update_to(path("past.etl"), false);
  past.get()->LogFileNameOffset = past.get()->Wnode.BufferSize + 8;
  EXPECT_EQ(ControlTraceA(h, nullptr, past.get(), EVENT_TRACE_CONTROL_UPDATE),
            ERROR_INVALID_PARAMETER);
  TraceProperties realtime;
  TRACEHANDLE rt = 0;
  ASSERT_EQ(StartTraceA(&rt, "etl-switch-rt", realtime.get()), ERROR_SUCCESS);
  TraceProperties to_file = update_to(path("rt.etl"), false);
  EXPECT_EQ(ControlTraceA(rt, nullptr, to_file.get(), EVENT_TRACE_CONTROL_UPDATE),
            ERROR_INVALID_PARAMETER);
  EXPECT_FALSE(std::filesystem::exists(path("past.etl")));
  EXPECT_FALSE(std::filesystem::exists(path("rt.etl")));

  const Stopped s = stop("etl-switch");
  EXPECT_EQ(s.status, ERROR_SUCCESS);
  EXPECT_EQ(s.events_lost, 0u);
  EXPECT_EQ(s.log_file, third) << "STOP names the file the session ended in";
  EXPECT_EQ(stop("etl-switch-other").status, ERROR_SUCCESS);
  EXPECT_EQ(stop("etl-switch-rt").status, ERROR_SUCCESS);
  for (const auto& [file, events] :
       {std::pair{first, 300u}, std::pair{second, 200u}, std::pair{third, 100u}}) {
    const Checked c =
        check_layout(file, {{"strict", true}, {"events", events}, {"events_lost", 0}});
    EXPECT_EQ(c.status, 0) << file << ": " << c.output;
    expect_read_back(file, events, 0);
  }
}
