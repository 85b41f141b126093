// The audit table of docs/etwrt/conformance.md ("Audit: etwrt against the reference pages"): one
// test (or more) per row whose check is not already in api_test.cc, classic_test.cc or
// trace_properties_test.cc. Each test names the page it holds etwrt to. Each test gets its own
// ETWRT_HOME and broker.
#include "test_broker_home.h"
#include "test_properties.h"

#include <windows.h>
#include <evntcons.h>
#include <evntprov.h>
#include <evntrace.h>

#include <gtest/gtest.h>

#include <time.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using Properties = etwrt::testing::TraceProperties;

const GUID kProvider = {
    0x5a0d1e77, 0x1c2b, 0x4a3d, {0x8e, 0x4f, 0x50, 0x61, 0x72, 0x83, 0x94, 0xa5}};

LONGLONG file_time_now() {
  timespec t{};
  ::clock_gettime(CLOCK_REALTIME, &t);
  return 116444736000000000LL + t.tv_sec * 10000000LL + t.tv_nsec / 100;
}

FILETIME as_file_time(LONGLONG v) {
  FILETIME t;
  t.dwLowDateTime = static_cast<DWORD>(v & 0xffffffff);
  t.dwHighDateTime = static_cast<DWORD>(static_cast<ULONGLONG>(v) >> 32);
  return t;
}

// What a consumer received: every record, with the header event's TRACE_LOGFILE_HEADER.
struct Received {
  GUID provider{};
  UCHAR opcode = 0;
  USHORT id = 0;
  LONGLONG time = 0;
  std::vector<std::uint8_t> data;
};

// OpenTraceA + ProcessTrace on a thread; `mode` is added to REAL_TIME | EVENT_RECORD.
class Consumer {
 public:
  Consumer(const std::string& session, ULONG mode) : name_(session) {
    logfile_.LoggerName = name_.data();
    logfile_.ProcessTraceMode =
        PROCESS_TRACE_MODE_REAL_TIME | PROCESS_TRACE_MODE_EVENT_RECORD | mode;
    logfile_.EventRecordCallback = &Consumer::on_event;
    logfile_.Context = this;
    handle_ = OpenTraceA(&logfile_);
  }
  ~Consumer() {
    if (thread_.joinable()) thread_.join();
    if (handle_ != INVALID_PROCESSTRACE_HANDLE) CloseTrace(handle_);
  }
  TRACEHANDLE handle() const { return handle_; }
  const EVENT_TRACE_LOGFILEA& logfile() const { return logfile_; }
  void start(const FILETIME* from = nullptr, const FILETIME* to = nullptr) {
    if (from != nullptr) from_ = *from;
    if (to != nullptr) to_ = *to;
    thread_ = std::thread([this, from, to] {
      status_ = ProcessTrace(&handle_, 1, from != nullptr ? &from_ : nullptr,
                             to != nullptr ? &to_ : nullptr);
    });
  }
  ULONG join() {
    thread_.join();
    return status_;
  }
  // Waits (generous bound) until `n` records of kProvider came; all records so far.
  std::vector<Received> wait_for(std::size_t n) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, 20s, [&] { return events_ >= n; });
    return seen_;
  }
  std::vector<Received> seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }
  std::vector<Received> of(const GUID& provider) {
    std::vector<Received> out;
    for (const Received& r : seen()) {
      if (r.provider == provider) out.push_back(r);
    }
    return out;
  }
  std::optional<TRACE_LOGFILE_HEADER> header() {
    for (const Received& r : seen()) {
      if (r.provider == EventTraceGuid && r.data.size() >= sizeof(TRACE_LOGFILE_HEADER)) {
        TRACE_LOGFILE_HEADER h;
        std::memcpy(&h, r.data.data(), sizeof h);
        return h;
      }
    }
    return std::nullopt;
  }

 private:
  static void WINAPI on_event(PEVENT_RECORD r) {
    auto* self = static_cast<Consumer*>(r->UserContext);
    Received x;
    x.provider = r->EventHeader.ProviderId;
    x.opcode = r->EventHeader.EventDescriptor.Opcode;
    x.id = r->EventHeader.EventDescriptor.Id;
    x.time = r->EventHeader.TimeStamp.QuadPart;
    const auto* p = static_cast<const std::uint8_t*>(r->UserData);
    x.data.assign(p, p + r->UserDataLength);
    std::lock_guard lock(self->mu_);
    if (x.provider == kProvider) ++self->events_;
    self->seen_.push_back(std::move(x));
    self->cv_.notify_all();
  }

  std::string name_;
  EVENT_TRACE_LOGFILEA logfile_{};
  TRACEHANDLE handle_ = INVALID_PROCESSTRACE_HANDLE;
  FILETIME from_{}, to_{};
  std::thread thread_;
  ULONG status_ = 0xffffffffu;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Received> seen_;
  std::size_t events_ = 0;
};

// A ProcessTrace call expected to fail at once, on a thread: one that accepted its arguments
// would block until its sessions stop, so after 5 s they are stopped and the call counts as
// having accepted them (0xffffffff).
ULONG bounded_process_trace(TRACEHANDLE* handles, ULONG count, FILETIME* from, FILETIME* to,
                            std::vector<TRACEHANDLE> sessions) {
  std::promise<ULONG> result;
  auto status = result.get_future();
  std::thread call([&] { result.set_value(ProcessTrace(handles, count, from, to)); });
  const bool returned = status.wait_for(5s) == std::future_status::ready;
  if (!returned) {
    for (TRACEHANDLE s : sessions) {
      Properties p;
      ControlTraceA(s, nullptr, p.get(), EVENT_TRACE_CONTROL_STOP);
    }
  }
  call.join();
  return returned ? status.get() : 0xffffffffu;
}

class Audit : public ::testing::Test {
 protected:
  void TearDown() override {
    for (REGHANDLE h : providers_) EventUnregister(h);
  }

  TRACEHANDLE start(const std::string& name, ULONG client_context = 1) {
    Properties p;
    p.get()->Wnode.ClientContext = client_context;
    TRACEHANDLE h = 0;
    EXPECT_EQ(StartTraceA(&h, name.c_str(), p.get()), ERROR_SUCCESS) << name;
    return h;
  }
  static ULONG stop(TRACEHANDLE h) {
    Properties p;
    return ControlTraceA(h, nullptr, p.get(), EVENT_TRACE_CONTROL_STOP);
  }
  REGHANDLE provider() {
    REGHANDLE h = 0;
    EXPECT_EQ(EventRegister(&kProvider, nullptr, nullptr, &h), ERROR_SUCCESS);
    providers_.push_back(h);
    return h;
  }
  static ULONG enable(TRACEHANDLE session, ULONG property = 0) {
    ENABLE_TRACE_PARAMETERS p{};
    p.Version = ENABLE_TRACE_PARAMETERS_VERSION_2;
    p.EnableProperty = property;
    return EnableTraceEx2(session, &kProvider, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 5, 0, 0, 10000,
                          &p);
  }
  static ULONG write(REGHANDLE h, USHORT id, ULONG flags = 0) {
    EVENT_DESCRIPTOR d;
    EventDescCreate(&d, id, 0, 0, 4, 0, 0, 0);
    return EventWriteEx(h, &d, 0, flags, nullptr, nullptr, 0, nullptr);
  }
  // A session named `name` in clock `client_context`, kProvider enabled in it.
  TRACEHANDLE start_enabled(const std::string& name, ULONG client_context) {
    const TRACEHANDLE s = start(name, client_context);
    EXPECT_EQ(enable(s), ERROR_SUCCESS) << name;
    return s;
  }
  // `c` reads until it has `events` of kProvider's; then the session stops and ProcessTrace
  // returns.
  static void consume_then_stop(Consumer& c, TRACEHANDLE s, std::size_t events) {
    c.start();
    c.wait_for(events);
    EXPECT_EQ(stop(s), ERROR_SUCCESS);
    EXPECT_EQ(c.join(), ERROR_SUCCESS);
  }
  static std::vector<USHORT> ids(const std::vector<Received>& events) {
    std::vector<USHORT> out;
    for (const Received& r : events) out.push_back(r.id);
    return out;
  }

  etwrt::testing::PrivateBrokerHome home_{"etwrt-audit-test"};
  std::vector<REGHANDLE> providers_;
};

// nf-evntprov-eventwriteex.md: Flags may be EVENT_WRITE_FLAG_INPRIVATE; other bits refused.
TEST_F(Audit, EventWriteExTakesTheInPrivateFlag) {
  const REGHANDLE h = provider();
  EXPECT_EQ(write(h, 1, EVENT_WRITE_FLAG_INPRIVATE), ERROR_SUCCESS);
  EXPECT_EQ(write(h, 1, EVENT_WRITE_FLAG_NO_FAULTING), ERROR_INVALID_PARAMETER);
  EXPECT_EQ(write(h, 1, 0x4), ERROR_INVALID_PARAMETER);
  const TRACEHANDLE s = start("audit-inprivate-flag");
  ASSERT_EQ(enable(s), ERROR_SUCCESS);
  EXPECT_EQ(write(h, 1, EVENT_WRITE_FLAG_INPRIVATE), ERROR_SUCCESS);
  EXPECT_EQ(write(h, 1, 0x4), ERROR_INVALID_PARAMETER);
  EXPECT_EQ(stop(s), ERROR_SUCCESS);
}

// nf-evntprov-eventwriteex.md: an INPRIVATE event is excluded from every logger that set
// EVENT_ENABLE_PROPERTY_EXCLUDE_INPRIVATE; others get it.
TEST_F(Audit, InPrivateEventsSkipSessionsThatExcludeThem) {
  const REGHANDLE h = provider();
  const TRACEHANDLE excluding = start("audit-inprivate-excl");
  const TRACEHANDLE plain = start("audit-inprivate-plain");
  ASSERT_EQ(enable(excluding, EVENT_ENABLE_PROPERTY_EXCLUDE_INPRIVATE), ERROR_SUCCESS);
  ASSERT_EQ(enable(plain), ERROR_SUCCESS);
  ASSERT_EQ(write(h, 1), ERROR_SUCCESS);
  ASSERT_EQ(write(h, 2, EVENT_WRITE_FLAG_INPRIVATE), ERROR_SUCCESS);
  ASSERT_EQ(write(h, 3), ERROR_SUCCESS);
  Consumer a("audit-inprivate-excl", 0);
  Consumer b("audit-inprivate-plain", 0);
  a.start();
  b.start();
  a.wait_for(2);
  b.wait_for(3);
  EXPECT_EQ(stop(excluding), ERROR_SUCCESS);
  EXPECT_EQ(stop(plain), ERROR_SUCCESS);
  EXPECT_EQ(a.join(), ERROR_SUCCESS);
  EXPECT_EQ(b.join(), ERROR_SUCCESS);
  EXPECT_EQ(ids(a.of(kProvider)), (std::vector<USHORT>{1, 3}));
  EXPECT_EQ(ids(b.of(kProvider)), (std::vector<USHORT>{1, 2, 3}));
}

// nf-evntrace-processtrace.md: HandleArray NULL -> ERROR_INVALID_PARAMETER; HandleCount not
// valid or above 64 -> ERROR_BAD_LENGTH; EndTime before StartTime -> ERROR_INVALID_TIME; a
// handle that is not valid -> ERROR_INVALID_HANDLE.
TEST_F(Audit, ProcessTraceArgumentCodes) {
  const TRACEHANDLE s = start("audit-process-args");
  Consumer c("audit-process-args", 0);
  ASSERT_NE(c.handle(), INVALID_PROCESSTRACE_HANDLE);
  TRACEHANDLE handles[65];
  for (TRACEHANDLE& x : handles) x = c.handle();
  EXPECT_EQ(ProcessTrace(nullptr, 1, nullptr, nullptr), ERROR_INVALID_PARAMETER);
  EXPECT_EQ(ProcessTrace(handles, 0, nullptr, nullptr), ERROR_BAD_LENGTH);
  EXPECT_EQ(ProcessTrace(handles, 65, nullptr, nullptr), ERROR_BAD_LENGTH);
  FILETIME early = as_file_time(file_time_now());
  FILETIME late = as_file_time(file_time_now() + 10000000);
  EXPECT_EQ(bounded_process_trace(handles, 1, &late, &early, {s}), ULONG{ERROR_INVALID_TIME});
  TRACEHANDLE unknown = c.handle() + 8;
  EXPECT_EQ(ProcessTrace(&unknown, 1, nullptr, nullptr), ERROR_INVALID_HANDLE);
  EXPECT_EQ(stop(s), ERROR_SUCCESS);
}

// nf-evntrace-processtrace.md: HandleArray "can contain one handle to a real-time processing
// session"; ERROR_INVALID_PARAMETER when it "contains more than one real-time processing
// session" (the page's earlier text said ERROR_WMI_ALREADY_ENABLED); the handles stay usable.
TEST_F(Audit, ProcessTraceRefusesTwoRealtimeSessions) {
  const TRACEHANDLE s1 = start("audit-two-rt-1");
  const TRACEHANDLE s2 = start("audit-two-rt-2");
  Consumer c1("audit-two-rt-1", 0);
  Consumer c2("audit-two-rt-2", 0);
  TRACEHANDLE both[2] = {c1.handle(), c2.handle()};
  EXPECT_EQ(bounded_process_trace(both, 2, nullptr, nullptr, {s1, s2}),
            ULONG{ERROR_INVALID_PARAMETER});
  c1.start();
  c1.wait_for(0);
  EXPECT_EQ(stop(s1), ERROR_SUCCESS);
  EXPECT_EQ(c1.join(), ERROR_SUCCESS);
  EXPECT_TRUE(c1.header().has_value());
  EXPECT_EQ(stop(s2), ERROR_SUCCESS);
}

// nf-evntrace-processtrace.md: no event recorded before StartTime or after EndTime.
TEST_F(Audit, ProcessTraceDeliversOnlyBetweenStartTimeAndEndTime) {
  const REGHANDLE h = provider();
  const TRACEHANDLE s = start("audit-window");
  ASSERT_EQ(enable(s), ERROR_SUCCESS);
  ASSERT_EQ(write(h, 1), ERROR_SUCCESS);
  std::this_thread::sleep_for(20ms);
  const FILETIME from = as_file_time(file_time_now());
  std::this_thread::sleep_for(20ms);
  ASSERT_EQ(write(h, 2), ERROR_SUCCESS);
  std::this_thread::sleep_for(20ms);
  const FILETIME to = as_file_time(file_time_now());
  std::this_thread::sleep_for(20ms);
  ASSERT_EQ(write(h, 3), ERROR_SUCCESS);
  Consumer c("audit-window", 0);
  c.start(&from, &to);
  c.wait_for(1);
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(stop(s), ERROR_SUCCESS);
  EXPECT_EQ(c.join(), ERROR_SUCCESS);
  EXPECT_EQ(ids(c.of(kProvider)), (std::vector<USHORT>{2}));
}

// nf-evntrace-starttracea.md: the session name "is case-insensitive, and must be unique" (a
// second StartTrace of the same name is ERROR_ALREADY_EXISTS, which Wine's test_start_trace
// also asserts on Windows); the controls and OpenTrace by name match the same way.
TEST_F(Audit, SessionNamesIgnoreLetterCase) {
  const TRACEHANDLE s = start("Audit-Case-Name");
  Properties again;
  TRACEHANDLE h2 = 0;
  EXPECT_EQ(StartTraceA(&h2, "audit-case-NAME", again.get()), ERROR_ALREADY_EXISTS);
  Properties q;
  ASSERT_EQ(QueryTraceA(0, "AUDIT-CASE-NAME", q.get()), ERROR_SUCCESS);
  EXPECT_EQ(q.get()->Wnode.HistoricalContext, s);
  EXPECT_EQ(q.logger_name(), "Audit-Case-Name");
  Consumer c("audit-case-name", 0);
  EXPECT_NE(c.handle(), INVALID_PROCESSTRACE_HANDLE);
  Properties stopped;
  EXPECT_EQ(StopTraceA(0, "aUDIT-cASE-nAME", stopped.get()), ERROR_SUCCESS);
}

// ns-wmistr-_wnode_header.md: ClientContext is the clock, 1 QPC (the default), 2 system time,
// 3 CPU cycles. QUERY reports the clock in use; another value is refused (etwrt choice).
TEST_F(Audit, ClientContextIsTheSessionsClock) {
  Properties bad;
  bad.get()->Wnode.ClientContext = 4;
  TRACEHANDLE h = 0;
  EXPECT_EQ(StartTraceA(&h, "audit-clock-bad", bad.get()), ERROR_INVALID_PARAMETER);
  const struct { ULONG given, reported; } cases[] = {{0, 1}, {1, 1}, {2, 2}, {3, 3}};
  for (const auto& k : cases) {
    const std::string name = "audit-clock-" + std::to_string(k.given);
    const TRACEHANDLE s = start(name, k.given);
    Properties q;
    ASSERT_EQ(QueryTraceA(s, nullptr, q.get()), ERROR_SUCCESS);
    EXPECT_EQ(q.get()->Wnode.ClientContext, k.reported) << name;
    EXPECT_EQ(stop(s), ERROR_SUCCESS);
  }
}

// Converts a raw timestamp into 100 ns units as ns-wmistr-_wnode_header.md says a consumer
// does: QPC by PerfFreq, system time as is, cycles by CpuSpeedInMHz.
double scale_of(const TRACE_LOGFILE_HEADER& h) {
  switch (h.ReservedFlags) {
    case 2: return 1.0;
    case 3: return 10.0 / h.CpuSpeedInMHz;
    default: return 10000000.0 / static_cast<double>(h.PerfFreq.QuadPart);
  }
}

// PROCESS_TRACE_MODE_RAW_TIMESTAMP (ns-evntrace-event_trace_logfilea.md): the session's clock,
// which the header names (ReservedFlags, ns-evntrace-trace_logfile_header.md) and which the
// header's PerfFreq / CpuSpeedInMHz convert; 40 ms apart in time are 400000 units of 100 ns.
TEST_F(Audit, RawTimestampsAreInTheSessionsClock) {
  for (ULONG clock : {1u, 2u, 3u}) {
    SCOPED_TRACE("ClientContext " + std::to_string(clock));
    const REGHANDLE h = provider();
    const std::string name = "audit-raw-" + std::to_string(clock);
    const TRACEHANDLE s = start_enabled(name, clock);
    const LONGLONG before = file_time_now();
    ASSERT_EQ(write(h, 1), ERROR_SUCCESS);
    std::this_thread::sleep_for(40ms);
    ASSERT_EQ(write(h, 2), ERROR_SUCCESS);
    Consumer c(name, PROCESS_TRACE_MODE_RAW_TIMESTAMP);
    consume_then_stop(c, s, 2);
    const auto header = c.header();
    ASSERT_TRUE(header.has_value());
    EXPECT_EQ(header->ReservedFlags, clock);
    EXPECT_EQ(c.logfile().LogfileHeader.ReservedFlags, clock);
    EXPECT_EQ(header->PerfFreq.QuadPart, 10000000);
    EXPECT_EQ(header->CpuSpeedInMHz, 1000u);
    const auto events = c.of(kProvider);
    ASSERT_EQ(events.size(), 2u);
    const double apart = (events[1].time - events[0].time) * scale_of(*header);
    EXPECT_GE(apart, 400000.0);
    EXPECT_LT(apart, 400000.0 + 20000000.0);  // Within 2 s of scheduling slack.
    // System time is a FILETIME; the other clocks are not.
    const bool near_now = std::llabs(events[0].time - before) < 100000000;  // 10 s
    EXPECT_EQ(near_now, clock == 2);
    EXPECT_TRUE(EventUnregister(h) == ERROR_SUCCESS);
    providers_.clear();
  }
}

// Without RAW_TIMESTAMP the TimeStamp is a FILETIME whatever the clock (event_header.md:
// "TimeStamp ... in 100-nanosecond intervals since midnight, January 1, 1601").
TEST_F(Audit, DefaultTimestampsAreFileTimes) {
  for (ULONG clock : {1u, 3u}) {
    const REGHANDLE h = provider();
    const std::string name = "audit-filetime-" + std::to_string(clock);
    const TRACEHANDLE s = start_enabled(name, clock);
    const LONGLONG before = file_time_now();
    ASSERT_EQ(write(h, 1), ERROR_SUCCESS);
    const LONGLONG after = file_time_now();
    Consumer c(name, 0);
    consume_then_stop(c, s, 1);
    const auto events = c.of(kProvider);
    ASSERT_EQ(events.size(), 1u);
    EXPECT_GE(events[0].time, before - 20000);  // 2 ms: the two clocks' offset is sampled.
    EXPECT_LE(events[0].time, after + 20000);
    EventUnregister(h);
    providers_.clear();
  }
}

// ns-evntrace-trace_logfile_header.md: StartTime is when the session started (not when the
// consumer opened it); the header event's TimeStamp is in the records' clock.
TEST_F(Audit, LogfileHeaderStartTimeIsTheSessionsStart) {
  const LONGLONG before = file_time_now();
  const TRACEHANDLE s = start("audit-start-time");
  const LONGLONG after = file_time_now();
  std::this_thread::sleep_for(50ms);
  Consumer c("audit-start-time", 0);
  ASSERT_NE(c.handle(), INVALID_PROCESSTRACE_HANDLE);
  const TRACE_LOGFILE_HEADER& h = c.logfile().LogfileHeader;
  EXPECT_GE(h.StartTime.QuadPart, before);
  EXPECT_LE(h.StartTime.QuadPart, after);
  EXPECT_EQ(h.PointerSize, sizeof(void*));
  EXPECT_EQ(h.BufferSize, c.logfile().BufferSize);
  // Row 58: BufferSize in bytes (the session's is in KB), TimerResolution in 100 ns (etwrt's
  // choice 156001, Windows' default tick), no event lost yet.
  Properties q;
  ASSERT_EQ(ControlTraceA(s, nullptr, q.get(), EVENT_TRACE_CONTROL_QUERY), ERROR_SUCCESS);
  EXPECT_EQ(h.BufferSize, q.get()->BufferSize * 1024);
  EXPECT_EQ(h.TimerResolution, 156001u);
  EXPECT_EQ(h.EventsLost, 0u);
  consume_then_stop(c, s, 0);
  const auto seen = c.seen();
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front().provider, EventTraceGuid);
  EXPECT_GE(seen.front().time, after);
}

}  // namespace

namespace {

// nf-evntrace-starttracea.md: ERROR_ALREADY_EXISTS for "a session with the same name or GUID";
// Wnode.Guid SystemTraceControlGuid with a name other than KERNEL_LOGGER_NAME is
// ERROR_INVALID_PARAMETER (also asserted on Windows by Wine's eventlog.c test_start_trace).
TEST_F(Audit, StartTraceRefusesATakenGuidAndTheKernelGuid) {
  const GUID session = {
      0x0badcafe, 0x1111, 0x4222, {0x83, 0x33, 0x44, 0x44, 0x55, 0x55, 0x66, 0x66}};
  Properties first;
  first.get()->Wnode.Guid = session;
  TRACEHANDLE h = 0;
  ASSERT_EQ(StartTraceA(&h, "audit-guid-1", first.get()), ERROR_SUCCESS);
  Properties second;
  second.get()->Wnode.Guid = session;
  TRACEHANDLE h2 = 0;
  EXPECT_EQ(StartTraceA(&h2, "audit-guid-2", second.get()), ERROR_ALREADY_EXISTS);
  Properties kernel;
  kernel.get()->Wnode.Guid = SystemTraceControlGuid;
  EXPECT_EQ(StartTraceA(&h2, "audit-not-the-kernel", kernel.get()), ERROR_INVALID_PARAMETER);
  EXPECT_EQ(stop(h), ERROR_SUCCESS);
  Properties again;
  again.get()->Wnode.Guid = session;
  ASSERT_EQ(StartTraceA(&h2, "audit-guid-2", again.get()), ERROR_SUCCESS);  // Free again.
  EXPECT_EQ(stop(h2), ERROR_SUCCESS);
}

}  // namespace

namespace {

// nf-evntrace-controltracea.md: "ETW ignores the handle if SessionName is not NULL".
TEST_F(Audit, ControlTraceByNameIgnoresTheHandle) {
  const TRACEHANDLE a = start("audit-control-a");
  const TRACEHANDLE b = start("audit-control-b");
  Properties q;
  ASSERT_EQ(ControlTraceA(a, "audit-control-b", q.get(), EVENT_TRACE_CONTROL_QUERY), ERROR_SUCCESS);
  EXPECT_EQ(q.get()->Wnode.HistoricalContext, b);
  EXPECT_EQ(q.logger_name(), "audit-control-b");
  Properties gone;
  EXPECT_EQ(ControlTraceA(a, "audit-nobody", gone.get(), EVENT_TRACE_CONTROL_QUERY),
            ERROR_WMI_INSTANCE_NOT_FOUND);
  EXPECT_EQ(stop(a), ERROR_SUCCESS);
  EXPECT_EQ(stop(b), ERROR_SUCCESS);
}

// Row 39: nf-evntrace-stoptracea.md, querytracea.md, flushtracea.md, updatetracea.md (and their
// W forms): each is ControlTrace with its own code. A wrapper that sent another code would stop
// the session early, or not update it, or not stop it.
TEST_F(Audit, TraceWrappersAreControlTraceWithTheirCode) {
  for (const bool wide : {false, true}) {
    const std::string name = wide ? "audit-wrappers-w" : "audit-wrappers";
    const std::u16string wide_name(name.begin(), name.end());
    start(name);
    const auto call = [&](ULONG (*a)(TRACEHANDLE, LPCSTR, PEVENT_TRACE_PROPERTIES),
                          ULONG (*w)(TRACEHANDLE, LPCWSTR, PEVENT_TRACE_PROPERTIES),
                          EVENT_TRACE_PROPERTIES* p) {
      return wide ? w(0, reinterpret_cast<LPCWSTR>(wide_name.c_str()), p) : a(0, name.c_str(), p);
    };
    Properties p;
    EXPECT_EQ(call(FlushTraceA, FlushTraceW, p.get()), ERROR_SUCCESS) << name;
    Properties update;
    update.get()->FlushTimer = 7;
    EXPECT_EQ(call(UpdateTraceA, UpdateTraceW, update.get()), ERROR_SUCCESS) << name;
    Properties q;
    EXPECT_EQ(call(QueryTraceA, QueryTraceW, q.get()), ERROR_SUCCESS) << name;
    EXPECT_EQ(q.get()->FlushTimer, 7u) << name;
    EXPECT_EQ(call(QueryTraceA, QueryTraceW, q.get()), ERROR_SUCCESS) << "still running " << name;
    EXPECT_EQ(call(StopTraceA, StopTraceW, q.get()), ERROR_SUCCESS) << name;
    EXPECT_EQ(call(QueryTraceA, QueryTraceW, q.get()), ERROR_WMI_INSTANCE_NOT_FOUND) << name;
  }
}

// nf-evntrace-controltracea.md (and controltracew.md): ERROR_MORE_DATA when "the buffer for
// EVENT_TRACE_PROPERTIES is too small to hold all the information for the session ... If you
// receive this error when stopping the session, ETW will have already stopped the session". Every
// code that fills Properties, A and W; the operation is done and the fixed part filled.
TEST_F(Audit, ControlTraceWithoutRoomForTheNamesIsMoreDataTheWorkDone) {
  const TRACEHANDLE s = start("audit-more-data");
  for (ULONG code :
       {EVENT_TRACE_CONTROL_QUERY, EVENT_TRACE_CONTROL_FLUSH, EVENT_TRACE_CONTROL_UPDATE}) {
    Properties bare(0);  // The fixed part only.
    EXPECT_EQ(ControlTraceA(s, nullptr, bare.get(), code), ERROR_MORE_DATA) << code;
    EXPECT_EQ(bare.get()->Wnode.HistoricalContext, s) << code;
    Properties wide_bare(0);
    EXPECT_EQ(ControlTraceW(s, nullptr, wide_bare.get(), code), ERROR_MORE_DATA) << code;
    EXPECT_EQ(wide_bare.get()->Wnode.HistoricalContext, s) << code;
  }
  // 16 bytes: the name (15 with its NUL) fits, the empty log file name after it does not.
  Properties tight(16);
  EXPECT_EQ(ControlTraceA(s, nullptr, tight.get(), EVENT_TRACE_CONTROL_QUERY), ERROR_MORE_DATA);
  EXPECT_EQ(tight.logger_name(), "audit-more-data");
  Properties room(17);
  EXPECT_EQ(ControlTraceA(s, nullptr, room.get(), EVENT_TRACE_CONTROL_QUERY), ERROR_SUCCESS);
  EXPECT_EQ(room.logger_name(), "audit-more-data");
  EXPECT_EQ(room.get()->LogFileNameOffset, sizeof(EVENT_TRACE_PROPERTIES) + 16);
  // In UTF-16 the name needs 32 bytes, and 2 more for the log file name's NUL.
  Properties wide(33);
  EXPECT_EQ(QueryTraceW(s, nullptr, wide.get()), ERROR_MORE_DATA);
  Properties wide_room(34);
  EXPECT_EQ(QueryTraceW(s, nullptr, wide_room.get()), ERROR_SUCCESS);
  EXPECT_EQ(wide_room.bytes[sizeof(EVENT_TRACE_PROPERTIES) + 2],
            'u');  // "audit...": 'u' is the 2nd unit

  Properties stop_bare(0);
  EXPECT_EQ(ControlTraceA(s, nullptr, stop_bare.get(), EVENT_TRACE_CONTROL_STOP), ERROR_MORE_DATA);
  Properties gone;
  EXPECT_EQ(ControlTraceA(0, "audit-more-data", gone.get(), EVENT_TRACE_CONTROL_QUERY),
            ERROR_WMI_INSTANCE_NOT_FOUND);  // Stopped all the same.

  const TRACEHANDLE w = start("audit-more-data-w");
  Properties wide_stop(0);
  EXPECT_EQ(StopTraceW(w, nullptr, wide_stop.get()), ERROR_MORE_DATA);
  EXPECT_EQ(ControlTraceA(0, "audit-more-data-w", gone.get(), EVENT_TRACE_CONTROL_QUERY),
            ERROR_WMI_INSTANCE_NOT_FOUND);
}

}  // namespace

namespace {

// Wine's eventlog.c test_trace_event_params (run on Windows): EventRegister with a NULL GUID or
// a NULL handle pointer is ERROR_INVALID_PARAMETER; EventWriteString on handle 0 is
// ERROR_INVALID_HANDLE and with a NULL string ERROR_INVALID_PARAMETER; EventUnregister(0) is
// ERROR_INVALID_HANDLE. nf-evntprov-eventregister.md / eventunregister.md / eventwritestring.md.
TEST_F(Audit, ProviderCallsWineChecksOnWindows) {
  REGHANDLE h = 0;
  EXPECT_EQ(EventRegister(nullptr, nullptr, nullptr, &h), ERROR_INVALID_PARAMETER);
  EXPECT_EQ(EventRegister(&kProvider, nullptr, nullptr, nullptr), ERROR_INVALID_PARAMETER);
  const REGHANDLE p = provider();
  const char16_t empty[] = u"";
  EXPECT_EQ(EventWriteString(0, 0, 0, reinterpret_cast<PCWSTR>(empty)), ERROR_INVALID_HANDLE);
  EXPECT_EQ(EventWriteString(p, 0, 0, nullptr), ERROR_INVALID_PARAMETER);
  EXPECT_EQ(EventUnregister(0), ERROR_INVALID_HANDLE);
}

// nf-evntprov-eventwrite.md (and Transfer, Ex): ERROR_ARITHMETIC_OVERFLOW when the event is
// larger than 64 KB less the header, whatever the buffers; ERROR_MORE_DATA when it fits that
// limit but not the session's buffer.
TEST_F(Audit, OversizedEventsAreArithmeticOverflowOrMoreData) {
  const REGHANDLE h = provider();
  Properties big;
  big.get()->BufferSize = 1024;  // KB: room for any event.
  TRACEHANDLE roomy = 0;
  ASSERT_EQ(StartTraceA(&roomy, "audit-oversized", big.get()), ERROR_SUCCESS);
  ASSERT_EQ(enable(roomy), ERROR_SUCCESS);
  std::vector<std::uint8_t> bytes(70000, 0x11);
  EVENT_DESCRIPTOR d;
  EventDescCreate(&d, 1, 0, 0, 4, 0, 0, 0);
  EVENT_DATA_DESCRIPTOR data;
  EventDataDescCreate(&data, bytes.data(), static_cast<ULONG>(bytes.size()));
  EXPECT_EQ(EventWrite(h, &d, 1, &data), ERROR_ARITHMETIC_OVERFLOW);
  EXPECT_EQ(EventWriteTransfer(h, &d, nullptr, nullptr, 1, &data), ERROR_ARITHMETIC_OVERFLOW);
  EventDataDescCreate(&data, bytes.data(), 60000);
  EXPECT_EQ(EventWrite(h, &d, 1, &data), ERROR_SUCCESS);
  EXPECT_EQ(stop(roomy), ERROR_SUCCESS);
  Properties small;
  small.get()->BufferSize = 4;  // KB
  TRACEHANDLE tight = 0;
  ASSERT_EQ(StartTraceA(&tight, "audit-oversized-small", small.get()), ERROR_SUCCESS);
  ASSERT_EQ(enable(tight), ERROR_SUCCESS);
  EXPECT_EQ(EventWrite(h, &d, 1, &data), ERROR_MORE_DATA);
  EXPECT_EQ(stop(tight), ERROR_SUCCESS);
}

// nf-evntprov-eventactivityidcontrol.md: a thread starts with no activity ID (GUID_NULL);
// CREATE_ID makes one and leaves the thread's alone; GET_SET_ID sets and returns the previous
// ID, CREATE_SET_ID makes a new one current and returns the previous; NULL ActivityId or an
// unknown code: ERROR_INVALID_PARAMETER.
TEST_F(Audit, ActivityIdControlCodes) {
  GUID initial = kProvider;
  ULONG initial_status = ERROR_INVALID_FUNCTION;
  std::thread([&] {
    initial_status = EventActivityIdControl(EVENT_ACTIVITY_CTRL_GET_ID, &initial);
  }).join();
  EXPECT_EQ(initial_status, ERROR_SUCCESS);
  EXPECT_TRUE(initial == GUID_NULL);
  GUID a{}, b{}, now{}, before{};
  ASSERT_EQ(EventActivityIdControl(EVENT_ACTIVITY_CTRL_GET_ID, &before), ERROR_SUCCESS);
  ASSERT_EQ(EventActivityIdControl(EVENT_ACTIVITY_CTRL_CREATE_ID, &a), ERROR_SUCCESS);
  ASSERT_EQ(EventActivityIdControl(EVENT_ACTIVITY_CTRL_CREATE_ID, &b), ERROR_SUCCESS);
  EXPECT_FALSE(a == GUID_NULL);
  EXPECT_FALSE(a == b);
  ASSERT_EQ(EventActivityIdControl(EVENT_ACTIVITY_CTRL_GET_ID, &now), ERROR_SUCCESS);
  EXPECT_TRUE(now == before);  // CREATE leaves the thread's ID alone.
  GUID swap = a;
  ASSERT_EQ(EventActivityIdControl(EVENT_ACTIVITY_CTRL_SET_ID, &swap), ERROR_SUCCESS);
  swap = b;
  ASSERT_EQ(EventActivityIdControl(EVENT_ACTIVITY_CTRL_GET_SET_ID, &swap), ERROR_SUCCESS);
  EXPECT_TRUE(swap == a);
  ASSERT_EQ(EventActivityIdControl(EVENT_ACTIVITY_CTRL_GET_ID, &now), ERROR_SUCCESS);
  EXPECT_TRUE(now == b);
  GUID previous{};
  ASSERT_EQ(EventActivityIdControl(EVENT_ACTIVITY_CTRL_CREATE_SET_ID, &previous), ERROR_SUCCESS);
  EXPECT_TRUE(previous == b);
  ASSERT_EQ(EventActivityIdControl(EVENT_ACTIVITY_CTRL_GET_ID, &now), ERROR_SUCCESS);
  EXPECT_FALSE(now == b);
  EXPECT_FALSE(now == GUID_NULL);
  EXPECT_EQ(EventActivityIdControl(EVENT_ACTIVITY_CTRL_GET_ID, nullptr), ERROR_INVALID_PARAMETER);
  EXPECT_EQ(EventActivityIdControl(99, &now), ERROR_INVALID_PARAMETER);
}

// nf-evntprov-eventenabled.md, eventproviderenabled.md: FALSE when no session enables the
// provider (and for handle 0); nf-evntprov-eventsetinformation.md: an unknown registration
// handle is ERROR_INVALID_HANDLE, an information class etwrt does not implement
// ERROR_NOT_SUPPORTED (etwrt choice; the page names ERROR_NOT_SUPPORTED for a class the OS
// does not support).
TEST_F(Audit, EnabledChecksAndSetInformationCodes) {
  const REGHANDLE h = provider();
  EVENT_DESCRIPTOR d;
  EventDescCreate(&d, 1, 0, 0, 4, 0, 0, 0x1);
  EXPECT_FALSE(EventEnabled(h, &d));
  EXPECT_FALSE(EventEnabled(0, &d));
  EXPECT_FALSE(EventProviderEnabled(0, 4, 0x1));
  const TRACEHANDLE s = start("audit-enabled");
  ASSERT_EQ(enable(s), ERROR_SUCCESS);
  EXPECT_TRUE(EventEnabled(h, &d));
  EXPECT_TRUE(EventProviderEnabled(h, 5, 0x1));
  EXPECT_FALSE(EventProviderEnabled(h, 6, 0x1));
  EXPECT_EQ(stop(s), ERROR_SUCCESS);
  BOOLEAN yes = TRUE;
  // nf-evntprov-eventsetinformation.md: ERROR_INVALID_PARAMETER "if the RegHandle parameter is
  // not a valid provider registration handle".
  EXPECT_EQ(EventSetInformation(0, EventProviderUseDescriptorType, &yes, sizeof yes),
            ERROR_INVALID_PARAMETER);
  EXPECT_EQ(EventSetInformation(h + 8, EventProviderUseDescriptorType, &yes, sizeof yes),
            ERROR_INVALID_PARAMETER);
  EXPECT_EQ(EventSetInformation(h, static_cast<EVENT_INFO_CLASS>(77), &yes, sizeof yes),
            ERROR_NOT_SUPPORTED);
  EXPECT_EQ(EventSetInformation(h, EventProviderUseDescriptorType, &yes, sizeof yes),
            ERROR_SUCCESS);
}

// nf-evntprov-eventwrite.md: ERROR_INVALID_HANDLE, "The registration handle of the provider is
// not valid" (so EventWriteTransfer, EventWriteEx, EventWriteString and EventUnregister too;
// EventEnabled and EventProviderEnabled answer FALSE; EventSetInformation's page gives
// ERROR_INVALID_PARAMETER for it). A value EventRegister
// never returned, one unregistered since, or any pointer-sized integer is such a handle, with a
// session or without: never a crash of the caller.
TEST_F(Audit, HandlesEventRegisterNeverReturnedAreInvalid) {
  const REGHANDLE freed = provider();
  providers_.pop_back();
  ASSERT_EQ(EventUnregister(freed), ERROR_SUCCESS);
  const REGHANDLE live = provider();
  auto junk = std::make_unique<std::uint64_t[]>(64);
  std::memset(junk.get(), 0xa5, 64 * sizeof(std::uint64_t));
  std::mt19937_64 random(20261128);
  std::vector<REGHANDLE> bad = {1,
                                freed,
                                reinterpret_cast<REGHANDLE>(junk.get()),
                                reinterpret_cast<REGHANDLE>(&junk),
                                ~REGHANDLE{0},
                                live + 1};
  for (int i = 0; i < 32; ++i) bad.push_back(random());
  EVENT_DESCRIPTOR d;
  EventDescCreate(&d, 1, 0, 0, 4, 0, 0, 0x1);
  const char16_t text[] = u"x";
  BOOLEAN yes = TRUE;
  const auto check_all = [&](const char* when) {
    for (const REGHANDLE h : bad) {
      SCOPED_TRACE(testing::Message() << when << ", handle 0x" << std::hex << h);
      EXPECT_EQ(EventWrite(h, &d, 0, nullptr), ERROR_INVALID_HANDLE);
      EXPECT_EQ(EventWriteTransfer(h, &d, nullptr, nullptr, 0, nullptr), ERROR_INVALID_HANDLE);
      EXPECT_EQ(EventWriteEx(h, &d, 0, 0, nullptr, nullptr, 0, nullptr), ERROR_INVALID_HANDLE);
      EXPECT_EQ(EventWriteString(h, 4, 0x1, reinterpret_cast<PCWSTR>(text)), ERROR_INVALID_HANDLE);
      EXPECT_FALSE(EventEnabled(h, &d));
      EXPECT_FALSE(EventProviderEnabled(h, 4, 0x1));
      EXPECT_EQ(EventSetInformation(h, EventProviderUseDescriptorType, &yes, sizeof yes),
                ERROR_INVALID_PARAMETER);
      EXPECT_EQ(EventUnregister(h), ERROR_INVALID_HANDLE);
    }
  };
  check_all("no session");
  const TRACEHANDLE s = start("audit-bad-handles");
  ASSERT_EQ(enable(s), ERROR_SUCCESS);
  ASSERT_TRUE(EventEnabled(live, &d));
  check_all("one session");
  EXPECT_EQ(EventWrite(live, &d, 0, nullptr), ERROR_SUCCESS);
  EXPECT_EQ(stop(s), ERROR_SUCCESS);
}

}  // namespace
