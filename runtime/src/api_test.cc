// libetwrt through its Win32 API against a real broker: aggregation, SourceIds, timeouts,
// limits, process lifetimes. Each test gets its own ETWRT_HOME (so ctest -j2 is safe) and
// stops its broker at the end.
#include "test_properties.h"
#include "test_child.h"
#include <windows.h>
#include <evntprov.h>
#include <evntrace.h>
#include <evntcons.h>

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <fstream>
#include <iterator>
#include <map>
#include <new>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {

using namespace std::chrono_literals;

const GUID kProvider = {
    0x1d3c5a11, 0x7b2e, 0x4c4f, {0x9a, 0x10, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77}};
const GUID kOther = {0x2e4d6b22, 0x8c3f, 0x4d50, {0xab, 0x21, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88}};

struct Call {
  GUID source{};
  ULONG is_enabled = 0;
  UCHAR level = 0;
  ULONGLONG any = 0;
  ULONGLONG all = 0;
  bool has_filter = false;
  ULONG filter_type = 0;
  std::vector<std::uint8_t> filter;
  const void* filter_ptr = nullptr;
  std::thread::id thread;
};

// A callback's IsEnabled, Level, MatchAnyKeyword and MatchAllKeyword, compared at once.
std::tuple<ULONG, int, ULONGLONG, ULONGLONG> enable_args(const Call& c) {
  return {c.is_enabled, c.level, c.any, c.all};
}

// Records every callback; optionally holds callbacks until released.
class Recorder {
 public:
  static void NTAPI callback(LPCGUID source, ULONG is_enabled, UCHAR level, ULONGLONG any,
                             ULONGLONG all, PEVENT_FILTER_DESCRIPTOR filter, PVOID context) {
    auto* self = static_cast<Recorder*>(context);
    Call c;
    c.source = *source;
    c.is_enabled = is_enabled;
    c.level = level;
    c.any = any;
    c.all = all;
    c.thread = std::this_thread::get_id();
    if (filter != nullptr) {
      c.has_filter = true;
      c.filter_type = filter->Type;
      const auto* p = reinterpret_cast<const std::uint8_t*>(filter->Ptr);
      c.filter.assign(p, p + filter->Size);
      c.filter_ptr = p;
    }
    std::unique_lock lock(self->mu_);
    self->cv_.wait(lock, [&] { return !self->hold_; });
    self->calls_.push_back(std::move(c));
    self->cv_.notify_all();
  }

  // Waits (generous bound) for at least n calls; returns them.
  std::vector<Call> wait_for(std::size_t n) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, 20s, [&] { return calls_.size() >= n; });
    return calls_;
  }
  std::size_t count() {
    std::lock_guard lock(mu_);
    return calls_.size();
  }
  void hold(bool on) {
    std::lock_guard lock(mu_);
    hold_ = on;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Call> calls_;
  bool hold_ = false;
};

using Properties = etwrt::testing::TraceProperties;
using etwrt::testing::ForkedChild;

TRACEHANDLE start(const std::string& name, const GUID* guid = nullptr) {
  Properties p;
  if (guid != nullptr) p.get()->Wnode.Guid = *guid;
  TRACEHANDLE h = 0;
  EXPECT_EQ(StartTraceA(&h, name.c_str(), p.get()), ERROR_SUCCESS) << name;
  return h;
}

// A session named `name` with kProvider enabled in it at `level`, MatchAnyKeyword `any`.
TRACEHANDLE start_enabled(const std::string& name, UCHAR level = 5, ULONGLONG any = 0) {
  const TRACEHANDLE s = start(name);
  EXPECT_EQ(EnableTraceEx2(s, &kProvider, 1, level, any, 0, 10000, nullptr), ERROR_SUCCESS) << name;
  return s;
}

ULONG stop(TRACEHANDLE h) {
  Properties p;
  return ControlTraceA(h, nullptr, p.get(), EVENT_TRACE_CONTROL_STOP);
}

class EtwrtApi : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/etwrt-api-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
    home_ = dir_ + "/home";
    ::setenv("ETWRT_HOME", home_.c_str(), 1);
    // The broker ends with this process: a crashed or killed test leaves none behind.
    ::setenv("ETWRT_BROKER_OWNER_PID", std::to_string(::getpid()).c_str(), 1);
  }

  void TearDown() override {
    for (REGHANDLE h : handles_) EventUnregister(h);
    stop_broker();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  // Recorders live until TearDown has unregistered everything: a late callback (a session
  // stop is not waited for) must still find its context.
  Recorder& new_recorder() { return *recorders_.emplace_back(std::make_unique<Recorder>()); }

  REGHANDLE register_provider(Recorder& recorder, const GUID& guid = kProvider) {
    REGHANDLE h = 0;
    EXPECT_EQ(EventRegister(&guid, &Recorder::callback, &recorder, &h), ERROR_SUCCESS);
    handles_.push_back(h);
    return h;
  }

  // kProvider registered with a new Recorder as its callback.
  struct RecordedProvider {
    Recorder& r;
    REGHANDLE h;
  };
  RecordedProvider recorded_provider() {
    Recorder& r = new_recorder();
    return {r, register_provider(r)};
  }

  void unregister(REGHANDLE h) {
    std::erase(handles_, h);
    EXPECT_EQ(EventUnregister(h), ERROR_SUCCESS);
  }

  pid_t broker_pid() {
    std::ifstream in(home_ + "/broker.pid");
    pid_t pid = 0;
    in >> pid;
    return pid;
  }

  // Ends this test's broker (sessions outlive everything else, so it would linger).
  void stop_broker() {
    const pid_t pid = broker_pid();
    if (pid <= 0) return;
    ::kill(pid, SIGTERM);
    for (int i = 0; i < 1000 && alive(pid); ++i) std::this_thread::sleep_for(10ms);
  }

  // A broker is nobody's child here; once it exited it may stay a zombie until init reaps it.
  static bool alive(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string pid_field, comm, state;
    if (!(stat >> pid_field >> comm >> state)) return false;
    return state != "Z";
  }

  std::string dir_;
  std::string home_;
  std::vector<REGHANDLE> handles_;
  std::vector<std::unique_ptr<Recorder>> recorders_;
};

TEST_F(EtwrtApi, AggregatesAcrossThreeSessions) {
  const auto [r, h] = recorded_provider();
  EXPECT_FALSE(EventProviderEnabled(h, 0, 0));
  const TRACEHANDLE s1 = start("agg-1");
  const TRACEHANDLE s2 = start("agg-2");
  const TRACEHANDLE s3 = start("agg-3");
  ASSERT_EQ(EnableTraceEx2(s1, &kProvider, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 2, 0x1, 0x1, 10000,
                           nullptr),
            ERROR_SUCCESS);
  ASSERT_EQ(EnableTraceEx2(s2, &kProvider, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 5, 0x6, 0x3, 10000,
                           nullptr),
            ERROR_SUCCESS);
  ASSERT_EQ(EnableTraceEx2(s3, &kProvider, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 3, 0x8, 0x7, 10000,
                           nullptr),
            ERROR_SUCCESS);
  auto calls = r.wait_for(3);
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].level, 2);
  EXPECT_EQ(calls[1].level, 5);
  EXPECT_EQ(calls[1].any, 0x7u);
  EXPECT_EQ(calls[1].all, 0x1u);
  EXPECT_EQ(enable_args(calls[2]), std::make_tuple(1u, 5, 0xfu, 0x1u));
  // Per-session acceptance: level 5 needs keywords s2 accepts (any 0x6, all 0x3).
  EXPECT_TRUE(EventProviderEnabled(h, 5, 0x3));
  EXPECT_FALSE(EventProviderEnabled(h, 5, 0x1));
  EXPECT_TRUE(EventProviderEnabled(h, 2, 0x1));
  EXPECT_FALSE(EventProviderEnabled(h, 6, 0x3));

  ASSERT_EQ(
      EnableTraceEx2(s2, &kProvider, EVENT_CONTROL_CODE_DISABLE_PROVIDER, 0, 0, 0, 10000, nullptr),
      ERROR_SUCCESS);
  calls = r.wait_for(4);
  // Stays enabled while a session remains.
  EXPECT_EQ(enable_args(calls[3]), std::make_tuple(1u, 3, 0x9u, 0x1u));
  EXPECT_FALSE(EventProviderEnabled(h, 5, 0x3));

  EXPECT_EQ(stop(s1), ERROR_SUCCESS);
  calls = r.wait_for(5);
  EXPECT_TRUE(calls[4].source == GUID_NULL);  // Session stop: SourceId GUID_NULL.
  EXPECT_EQ(enable_args(calls[4]), std::make_tuple(1u, 3, 0x8u, 0x7u));

  EXPECT_EQ(stop(s3), ERROR_SUCCESS);
  calls = r.wait_for(6);
  EXPECT_EQ(enable_args(calls[5]), std::make_tuple(0u, 0, 0u, 0u));
  EXPECT_FALSE(EventProviderEnabled(h, 0, 0));
  EXPECT_EQ(stop(s2), ERROR_SUCCESS);
}

TEST_F(EtwrtApi, StateIsUpdatedBeforeTheCallbackAndUpdateRecomputes) {
  const auto [r, h] = recorded_provider();
  const TRACEHANDLE s = start_enabled("update", 2);
  EXPECT_TRUE(EventProviderEnabled(h, 2, 0));
  ASSERT_EQ(EnableTraceEx2(s, &kProvider, 1, 4, 0, 0, 10000, nullptr), ERROR_SUCCESS);
  const auto calls = r.wait_for(2);
  EXPECT_EQ(calls[1].level, 4);  // The same session re-enabling replaces its own entry.
  EXPECT_TRUE(EventProviderEnabled(h, 4, 0));
  EXPECT_FALSE(EventProviderEnabled(h, 5, 0));
  EXPECT_EQ(stop(s), ERROR_SUCCESS);
}

TEST_F(EtwrtApi, SourceIds) {
  Recorder& r = recorded_provider().r;
  const GUID session_guid = {0xabcdef01, 1, 2, {3, 4, 5, 6, 7, 8, 9, 10}};
  const TRACEHANDLE s = start("source", &session_guid);
  ASSERT_EQ(EnableTraceEx2(s, &kProvider, 1, 1, 0, 0, 10000, nullptr), ERROR_SUCCESS);
  ENABLE_TRACE_PARAMETERS p{};
  p.Version = ENABLE_TRACE_PARAMETERS_VERSION_2;
  p.SourceId = kOther;
  ASSERT_EQ(EnableTraceEx2(s, &kProvider, 1, 1, 0, 0, 10000, &p), ERROR_SUCCESS);
  p.SourceId = GUID_NULL;
  ASSERT_EQ(EnableTraceEx2(s, &kProvider, 1, 1, 0, 0, 10000, &p), ERROR_SUCCESS);
  ASSERT_EQ(EnableTraceEx(&kProvider, &kOther, s, 1, 1, 0, 0, 0, nullptr), ERROR_SUCCESS);
  ASSERT_EQ(EnableTraceEx(&kProvider, nullptr, s, 1, 1, 0, 0, 0, nullptr), ERROR_SUCCESS);
  ASSERT_EQ(EnableTrace(TRUE, 0x30, 4, &kProvider, s), ERROR_SUCCESS);
  const auto calls = r.wait_for(6);
  ASSERT_EQ(calls.size(), 6u);
  EXPECT_TRUE(calls[0].source == session_guid);  // NULL parameters: the session's GUID.
  EXPECT_TRUE(calls[1].source == kOther);
  EXPECT_TRUE(calls[2].source == GUID_NULL);  // As given, even GUID_NULL.
  EXPECT_TRUE(calls[3].source == kOther);
  EXPECT_TRUE(calls[4].source == GUID_NULL);  // EnableTraceEx with a NULL SourceId.
  EXPECT_TRUE(calls[5].source == GUID_NULL);  // Legacy EnableTrace.
  EXPECT_EQ(calls[5].any, 0x30u);
  EXPECT_EQ(calls[5].level, 4);
  EXPECT_EQ(stop(s), ERROR_SUCCESS);
}

TEST_F(EtwrtApi, GeneratedSessionGuidIsTheSourceId) {
  Recorder& r = recorded_provider().r;
  Properties props;
  TRACEHANDLE s = 0;
  ASSERT_EQ(StartTraceA(&s, "generated", props.get()), ERROR_SUCCESS);
  EXPECT_FALSE(props.get()->Wnode.Guid == GUID_NULL);
  ASSERT_EQ(EnableTraceEx2(s, &kProvider, 1, 1, 0, 0, 10000, nullptr), ERROR_SUCCESS);
  EXPECT_TRUE(r.wait_for(1)[0].source == props.get()->Wnode.Guid);
  EXPECT_EQ(stop(s), ERROR_SUCCESS);
}

TEST_F(EtwrtApi, PreEnabledProviderGetsACallbackInsideEventRegister) {
  const TRACEHANDLE s = start("pre");
  ENABLE_TRACE_PARAMETERS p{};
  p.Version = ENABLE_TRACE_PARAMETERS_VERSION_2;
  p.SourceId = kOther;
  const char custom[] = "filter";
  EVENT_FILTER_DESCRIPTOR f{reinterpret_cast<ULONGLONG>(custom), sizeof custom, 0x42};
  p.EnableFilterDesc = &f;
  p.FilterDescCount = 1;
  ASSERT_EQ(EnableTraceEx2(s, &kProvider, 1, 4, 0x3, 0x1, 0, &p), ERROR_SUCCESS);
  const auto [r, h] = recorded_provider();
  ASSERT_EQ(r.count(), 1u);  // Before EventRegister returned.
  const Call c = r.wait_for(1)[0];
  EXPECT_EQ(c.thread, std::this_thread::get_id());
  EXPECT_TRUE(c.source == GUID_NULL);
  EXPECT_FALSE(c.has_filter);
  EXPECT_EQ(enable_args(c), std::make_tuple(1u, 4, 0x3u, 0x1u));
  EXPECT_TRUE(EventProviderEnabled(h, 4, 0x1));
  EXPECT_EQ(stop(s), ERROR_SUCCESS);
}

TEST_F(EtwrtApi, CaptureStateLeavesTheAggregatesAlone) {
  const auto [r, h] = recorded_provider();
  const TRACEHANDLE s = start_enabled("capture", 2, 0x1);
  ENABLE_TRACE_PARAMETERS p{};
  p.Version = ENABLE_TRACE_PARAMETERS_VERSION;
  p.SourceId = kOther;
  ASSERT_EQ(
      EnableTraceEx2(s, &kProvider, EVENT_CONTROL_CODE_CAPTURE_STATE, 5, 0xf0, 0x10, 10000, &p),
      ERROR_SUCCESS);
  const auto calls = r.wait_for(2);
  EXPECT_EQ(enable_args(calls[1]), std::make_tuple(2u, 5, 0xf0u, 0x10u));
  EXPECT_TRUE(calls[1].source == kOther);
  EXPECT_TRUE(EventProviderEnabled(h, 2, 0x1));
  EXPECT_FALSE(EventProviderEnabled(h, 5, 0x10));
  EXPECT_EQ(stop(s), ERROR_SUCCESS);
}

TEST_F(EtwrtApi, NinthSessionIsRefused) {
  std::vector<TRACEHANDLE> sessions;
  for (int i = 0; i < 9; ++i) sessions.push_back(start("nine-" + std::to_string(i)));
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(EnableTraceEx2(sessions[i], &kProvider, 1, 1, 0, 0, 0, nullptr), ERROR_SUCCESS) << i;
  }
  EXPECT_EQ(EnableTraceEx2(sessions[8], &kProvider, 1, 1, 0, 0, 0, nullptr),
            ERROR_NO_SYSTEM_RESOURCES);
  // Another provider is not affected, and a freed slot can be taken.
  EXPECT_EQ(EnableTraceEx2(sessions[8], &kOther, 1, 1, 0, 0, 0, nullptr), ERROR_SUCCESS);
  EXPECT_EQ(stop(sessions[0]), ERROR_SUCCESS);
  EXPECT_EQ(EnableTraceEx2(sessions[8], &kProvider, 1, 1, 0, 0, 0, nullptr), ERROR_SUCCESS);
  for (int i = 1; i < 9; ++i) EXPECT_EQ(stop(sessions[i]), ERROR_SUCCESS);
}

TEST_F(EtwrtApi, TimeoutZeroDoesNotWaitAndAnOverrunIsErrorTimeout) {
  Recorder& r = recorded_provider().r;
  const TRACEHANDLE s = start("timeout");
  r.hold(true);  // Callbacks block until released: nothing here depends on the clock.
  EXPECT_EQ(EnableTraceEx2(s, &kProvider, 1, 1, 0, 0, 0, nullptr), ERROR_SUCCESS);
  EXPECT_EQ(r.count(), 0u);
  EXPECT_EQ(EnableTraceEx2(s, &kProvider, 1, 2, 0, 0, 50, nullptr), ERROR_TIMEOUT);
  EXPECT_EQ(r.count(), 0u);
  r.hold(false);
  r.wait_for(2);
  EXPECT_EQ(EnableTraceEx2(s, &kProvider, 1, 3, 0, 0, 20000, nullptr), ERROR_SUCCESS);
  EXPECT_EQ(r.count(), 3u);  // A waiting enable returns after the callback finished.
  EXPECT_EQ(stop(s), ERROR_SUCCESS);
}

TEST_F(EtwrtApi, ProviderProcessThatDiesIsCleanedUp) {
  const TRACEHANDLE s = start("died");
  ForkedChild child([](ForkedChild& self) {
    REGHANDLE h = 0;
    self.signal_ready(EventRegister(&kProvider, nullptr, nullptr, &h) == ERROR_SUCCESS);
    ::pause();
    return 0;
  });
  ASSERT_TRUE(child.ready());
  // The child's callback thread acknowledges, so a waiting enable succeeds.
  EXPECT_EQ(EnableTraceEx2(s, &kProvider, 1, 1, 0, 0, 20000, nullptr), ERROR_SUCCESS);
  child.kill();
  // Its registration is gone: had it lingered, this waiting enable would time out.
  Recorder& r = new_recorder();
  register_provider(r, kOther);
  EXPECT_EQ(EnableTraceEx2(s, &kProvider, 1, 2, 0, 0, 20000, nullptr), ERROR_SUCCESS);
  EXPECT_EQ(stop(s), ERROR_SUCCESS);
}

TEST_F(EtwrtApi, SessionOutlivesItsControllerProcess) {
  ForkedChild child([](ForkedChild&) {
    Properties p;
    TRACEHANDLE h = 0;
    if (StartTraceA(&h, "persist", p.get()) != ERROR_SUCCESS) return 2;
    return EnableTraceEx2(h, &kProvider, 1, 3, 0x5, 0, 0, nullptr) != ERROR_SUCCESS ? 3 : 0;
  });
  ASSERT_TRUE(child.exited_cleanly());
  const auto [r, h] = recorded_provider();
  ASSERT_EQ(r.count(), 1u);
  EXPECT_EQ(r.wait_for(1)[0].level, 3);
  EXPECT_TRUE(EventProviderEnabled(h, 3, 0x1));
  Properties q;
  ASSERT_EQ(ControlTraceA(0, "persist", q.get(), EVENT_TRACE_CONTROL_QUERY), ERROR_SUCCESS);
  EXPECT_EQ(q.logger_name(), "persist");
  ASSERT_EQ(ControlTraceA(0, "persist", q.get(), EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
  EXPECT_EQ(r.wait_for(2)[1].is_enabled, 0u);
}

TEST_F(EtwrtApi, SessionNamesAndHandles) {
  Properties p;
  TRACEHANDLE h = 0;
  ASSERT_EQ(StartTraceA(&h, "named", p.get()), ERROR_SUCCESS);
  EXPECT_NE(h, 0u);
  EXPECT_EQ(p.get()->Wnode.HistoricalContext, h);
  EXPECT_EQ(p.logger_name(), "named");
  EXPECT_GT(p.get()->BufferSize, 0u);
  EXPECT_GE(p.get()->MaximumBuffers, p.get()->MinimumBuffers);
  Properties again;
  TRACEHANDLE h2 = 0;
  EXPECT_EQ(StartTraceA(&h2, "named", again.get()), ERROR_ALREADY_EXISTS);

  Properties q;
  EXPECT_EQ(ControlTraceA(h, nullptr, q.get(), EVENT_TRACE_CONTROL_QUERY), ERROR_SUCCESS);
  EXPECT_EQ(q.logger_name(), "named");
  EXPECT_EQ(q.get()->LogFileMode, ULONG{EVENT_TRACE_REAL_TIME_MODE});
  EXPECT_EQ(q.get()->EventsLost, 0u);
  EXPECT_EQ(ControlTraceA(h, nullptr, q.get(), EVENT_TRACE_CONTROL_FLUSH), ERROR_SUCCESS);
  q.get()->FlushTimer = 7;
  EXPECT_EQ(UpdateTraceA(h, nullptr, q.get()), ERROR_SUCCESS);
  EXPECT_EQ(QueryTraceA(0, "named", q.get()), ERROR_SUCCESS);
  EXPECT_EQ(q.get()->FlushTimer, 7u);
  EXPECT_EQ(ControlTraceA(h, nullptr, q.get(), 77), ERROR_INVALID_PARAMETER);

  EXPECT_EQ(QueryTraceA(0, "nobody", q.get()), ERROR_WMI_INSTANCE_NOT_FOUND);
  EXPECT_EQ(QueryTraceA(h + 1000, nullptr, q.get()), ERROR_WMI_INSTANCE_NOT_FOUND);
  EXPECT_EQ(StopTraceA(h, nullptr, q.get()), ERROR_SUCCESS);
  EXPECT_EQ(StopTraceA(h, nullptr, q.get()), ERROR_WMI_INSTANCE_NOT_FOUND);
  // The name is free again.
  EXPECT_EQ(StartTraceA(&h2, "named", again.get()), ERROR_SUCCESS);
  EXPECT_EQ(stop(h2), ERROR_SUCCESS);
}

TEST_F(EtwrtApi, EnableArgumentErrors) {
  const TRACEHANDLE s = start("args");
  EXPECT_EQ(EnableTraceEx2(0, &kProvider, 1, 1, 0, 0, 0, nullptr), ERROR_INVALID_PARAMETER);
  EXPECT_EQ(EnableTraceEx2(s, nullptr, 1, 1, 0, 0, 0, nullptr), ERROR_INVALID_PARAMETER);
  EXPECT_EQ(EnableTraceEx2(s, &kProvider, 3, 1, 0, 0, 0, nullptr), ERROR_INVALID_PARAMETER);
  EXPECT_EQ(EnableTraceEx2(s + 1000, &kProvider, 1, 1, 0, 0, 0, nullptr), ERROR_INVALID_HANDLE);
  ENABLE_TRACE_PARAMETERS p{};
  p.Version = 3;
  EXPECT_EQ(EnableTraceEx2(s, &kProvider, 1, 1, 0, 0, 0, &p), ERROR_INVALID_PARAMETER);
  p.Version = ENABLE_TRACE_PARAMETERS_VERSION_2;
  ULONG pids[9] = {};
  EVENT_FILTER_DESCRIPTOR f{reinterpret_cast<ULONGLONG>(pids), sizeof pids, EVENT_FILTER_TYPE_PID};
  p.EnableFilterDesc = &f;
  p.FilterDescCount = 1;
  EXPECT_EQ(EnableTraceEx2(s, &kProvider, 1, 1, 0, 0, 0, &p), ERROR_INVALID_PARAMETER);
  EXPECT_EQ(EnableTrace(2, 0, 1, &kProvider, s), ERROR_INVALID_PARAMETER);
  EXPECT_EQ(stop(s), ERROR_SUCCESS);
}

TEST_F(EtwrtApi, TraitsCanBeSetOncePerRegistration) {
  const auto [r, h] = recorded_provider();
  std::vector<std::uint8_t> blob = {0, 0, 'P', 0, 3, 0, 130};
  blob[0] = static_cast<std::uint8_t>(blob.size());
  std::vector<std::uint8_t> bad = blob;
  bad[0] += 1;
  EXPECT_EQ(
      EventSetInformation(h, EventProviderSetTraits, bad.data(), static_cast<ULONG>(bad.size())),
      ERROR_INVALID_PARAMETER);
  // A rejected blob does not use up the one allowed attempt.
  EXPECT_EQ(
      EventSetInformation(h, EventProviderSetTraits, blob.data(), static_cast<ULONG>(blob.size())),
      ERROR_SUCCESS);
  EXPECT_EQ(
      EventSetInformation(h, EventProviderSetTraits, blob.data(), static_cast<ULONG>(blob.size())),
      ERROR_ALREADY_EXISTS);
  EXPECT_EQ(EventSetInformation(h, static_cast<EVENT_INFO_CLASS>(42), blob.data(),
                                static_cast<ULONG>(blob.size())),
            ERROR_NOT_SUPPORTED);
  // Once per registration: a second registration of the same provider may set its own.
  Recorder& r2 = new_recorder();
  const REGHANDLE h2 = register_provider(r2);
  EXPECT_EQ(
      EventSetInformation(h2, EventProviderSetTraits, blob.data(), static_cast<ULONG>(blob.size())),
      ERROR_SUCCESS);
}

std::vector<std::uint8_t> schematized(USHORT id, std::uint8_t fill) {
  std::vector<std::uint8_t> bytes(sizeof(EVENT_FILTER_HEADER) + 4, fill);
  EVENT_FILTER_HEADER header{};
  header.Id = id;
  header.Size = static_cast<ULONG>(bytes.size());
  std::memcpy(bytes.data(), &header, sizeof header);
  return bytes;
}

TEST_F(EtwrtApi, FilterDataChainsEachSessionsSchematizedFilter) {
  Recorder& r = recorded_provider().r;
  const TRACEHANDLE s1 = start("filter-1");
  const TRACEHANDLE s2 = start("filter-2");
  const auto f1 = schematized(1, 0x11);
  const auto f2 = schematized(2, 0x22);
  ULONG pid = static_cast<ULONG>(::getpid());
  EVENT_FILTER_DESCRIPTOR d1[2] = {
      {reinterpret_cast<ULONGLONG>(f1.data()), static_cast<ULONG>(f1.size()),
       EVENT_FILTER_TYPE_SCHEMATIZED},
      {reinterpret_cast<ULONGLONG>(&pid), sizeof pid, EVENT_FILTER_TYPE_PID}};
  EVENT_FILTER_DESCRIPTOR d2{reinterpret_cast<ULONGLONG>(f2.data()), static_cast<ULONG>(f2.size()),
                             EVENT_FILTER_TYPE_SCHEMATIZED};
  ENABLE_TRACE_PARAMETERS p{};
  p.Version = ENABLE_TRACE_PARAMETERS_VERSION_2;
  p.EnableFilterDesc = d1;
  p.FilterDescCount = 2;
  ASSERT_EQ(EnableTraceEx2(s1, &kProvider, 1, 1, 0, 0, 10000, &p), ERROR_SUCCESS);
  p.EnableFilterDesc = &d2;
  p.FilterDescCount = 1;
  ASSERT_EQ(EnableTraceEx2(s2, &kProvider, 1, 1, 0, 0, 10000, &p), ERROR_SUCCESS);
  const auto calls = r.wait_for(2);
  ASSERT_TRUE(calls[0].has_filter);
  EXPECT_EQ(calls[0].filter_type, ULONG{EVENT_FILTER_TYPE_SCHEMATIZED});  // PID stays out.
  EXPECT_EQ(calls[0].filter.size(), f1.size());
  ASSERT_TRUE(calls[1].has_filter);
  EVENT_FILTER_HEADER first;
  std::memcpy(&first, calls[1].filter.data(), sizeof first);
  EXPECT_EQ(first.Id, 1);
  ASSERT_NE(first.NextOffset, 0u);
  ASSERT_LT(first.NextOffset + sizeof(EVENT_FILTER_HEADER), calls[1].filter.size() + 1);
  EVENT_FILTER_HEADER second;
  std::memcpy(&second, calls[1].filter.data() + first.NextOffset, sizeof second);
  EXPECT_EQ(second.Id, 2);
  EXPECT_EQ(second.NextOffset, 0u);
  EXPECT_NE(first.InstanceId, 0u);
  EXPECT_NE(second.InstanceId, 0u);
  EXPECT_EQ(first.InstanceId & second.InstanceId, 0u);  // One bit per session.
  EXPECT_EQ(stop(s1), ERROR_SUCCESS);
  EXPECT_EQ(stop(s2), ERROR_SUCCESS);
}

TEST_F(EtwrtApi, FilterDataMemoryIsReusedAfterTheCallback) {
  Recorder& r = recorded_provider().r;
  const TRACEHANDLE s = start("poison");
  const char custom[] = "provider-defined";
  EVENT_FILTER_DESCRIPTOR d{reinterpret_cast<ULONGLONG>(custom), sizeof custom, 0x42};
  ENABLE_TRACE_PARAMETERS p{};
  p.Version = ENABLE_TRACE_PARAMETERS_VERSION_2;
  p.EnableFilterDesc = &d;
  p.FilterDescCount = 1;
  ASSERT_EQ(EnableTraceEx2(s, &kProvider, 1, 1, 0, 0, 10000, &p), ERROR_SUCCESS);
  const auto calls = r.wait_for(1);
  ASSERT_TRUE(calls[0].has_filter);
  ASSERT_EQ(calls[0].filter.size(), sizeof(EVENT_FILTER_HEADER) + sizeof custom);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(calls[0].filter.data()) +
                        sizeof(EVENT_FILTER_HEADER)),
            custom);
  // A provider that kept the pointer now reads something else (rule CB-FILTER-COPY).
  EXPECT_NE(std::memcmp(calls[0].filter_ptr, calls[0].filter.data(), calls[0].filter.size()), 0);
  EXPECT_EQ(stop(s), ERROR_SUCCESS);
}

// The blocks of a FilterData chain, each as (InstanceId, Id, bytes after the header).
struct Block {
  ULONGLONG instance = 0;
  USHORT id = 0;
  std::vector<std::uint8_t> data;
};

std::vector<Block> blocks_of(const Call& c) {
  std::vector<Block> out;
  if (!c.has_filter) return out;
  EXPECT_EQ(c.filter_type, ULONG{EVENT_FILTER_TYPE_SCHEMATIZED});
  std::size_t at = 0;
  for (;;) {
    EVENT_FILTER_HEADER h;
    if (at + sizeof h > c.filter.size()) {
      ADD_FAILURE() << "block header at " << at << " past the end " << c.filter.size();
      return out;
    }
    std::memcpy(&h, c.filter.data() + at, sizeof h);
    if (h.Size < sizeof h || at + h.Size > c.filter.size()) {
      ADD_FAILURE() << "block at " << at << " has Size " << h.Size;
      return out;
    }
    Block b;
    b.instance = h.InstanceId;
    b.id = h.Id;
    b.data.assign(c.filter.data() + at + sizeof h, c.filter.data() + at + h.Size);
    out.push_back(std::move(b));
    if (h.NextOffset == 0) return out;
    at += h.NextOffset;
  }
}

// Seed 000 (CB-FILTER-PER-SESSION): one filter from each session that gave filter data.
TEST_F(EtwrtApi, FilterDataHoldsOneBlockPerFilteringSession) {
  Recorder& r = recorded_provider().r;
  const TRACEHANDLE s1 = start("per-session-1");
  const TRACEHANDLE s2 = start("per-session-2");
  const std::vector<std::uint8_t> a = {0xa1, 0xa2, 0xa3, 0xa4, 0xa5};
  const std::vector<std::uint8_t> b = {0xb1, 0xb2};
  auto enable = [&](TRACEHANDLE s, const std::vector<std::uint8_t>* bytes) {
    EVENT_FILTER_DESCRIPTOR d{};
    ENABLE_TRACE_PARAMETERS p{};
    p.Version = ENABLE_TRACE_PARAMETERS_VERSION_2;
    if (bytes != nullptr) {
      d = {reinterpret_cast<ULONGLONG>(bytes->data()), static_cast<ULONG>(bytes->size()), 7};
      p.EnableFilterDesc = &d;
      p.FilterDescCount = 1;
    }
    return EnableTraceEx2(s, &kProvider, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 4, 0, 0, 10000, &p);
  };
  ASSERT_EQ(enable(s1, &a), ERROR_SUCCESS);
  ASSERT_EQ(enable(s2, &b), ERROR_SUCCESS);
  auto calls = r.wait_for(2);
  ASSERT_EQ(calls.size(), 2u);
  auto blocks = blocks_of(calls[1]);
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0].data, a);
  EXPECT_EQ(blocks[1].data, b);
  EXPECT_EQ(blocks[0].id, 0);
  EXPECT_NE(blocks[0].instance, 0u);
  EXPECT_NE(blocks[1].instance, 0u);
  EXPECT_EQ(blocks[0].instance & blocks[1].instance, 0u);
  const ULONGLONG second_instance = blocks[1].instance;
  // s1 leaves: the provider stays enabled and sees only s2's filter.
  ASSERT_EQ(
      EnableTraceEx2(s1, &kProvider, EVENT_CONTROL_CODE_DISABLE_PROVIDER, 0, 0, 0, 10000, nullptr),
      ERROR_SUCCESS);
  calls = r.wait_for(3);
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[2].is_enabled, 1u);
  blocks = blocks_of(calls[2]);
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].data, b);
  EXPECT_EQ(blocks[0].instance, second_instance);
  // s2 enables again without filter data: no session gives any, FilterData is NULL.
  ASSERT_EQ(enable(s2, nullptr), ERROR_SUCCESS);
  calls = r.wait_for(4);
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_FALSE(calls[3].has_filter);
  EXPECT_EQ(stop(s1), ERROR_SUCCESS);
  EXPECT_EQ(stop(s2), ERROR_SUCCESS);
}

TEST_F(EtwrtApi, CaptureStateCarriesOnlyTheCallersFilter) {
  Recorder& r = recorded_provider().r;
  const TRACEHANDLE s1 = start("capture-1");
  const TRACEHANDLE s2 = start("capture-2");
  const std::vector<std::uint8_t> a = {1, 2, 3};
  const std::vector<std::uint8_t> c = {9, 8};
  EVENT_FILTER_DESCRIPTOR d{reinterpret_cast<ULONGLONG>(a.data()), 3, 7};
  ENABLE_TRACE_PARAMETERS p{};
  p.Version = ENABLE_TRACE_PARAMETERS_VERSION_2;
  p.EnableFilterDesc = &d;
  p.FilterDescCount = 1;
  ASSERT_EQ(EnableTraceEx2(s1, &kProvider, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 4, 0, 0, 10000, &p),
            ERROR_SUCCESS);
  d = {reinterpret_cast<ULONGLONG>(c.data()), 2, 7};
  ASSERT_EQ(EnableTraceEx2(s2, &kProvider, EVENT_CONTROL_CODE_CAPTURE_STATE, 4, 0, 0, 10000, &p),
            ERROR_SUCCESS);
  const auto calls = r.wait_for(2);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[1].is_enabled, 2u);
  ASSERT_TRUE(calls[1].has_filter);
  EXPECT_EQ(calls[1].filter_type, 7u);
  EXPECT_EQ(calls[1].filter, c);
  EXPECT_EQ(stop(s1), ERROR_SUCCESS);
  EXPECT_EQ(stop(s2), ERROR_SUCCESS);
}

// What a realtime consumer saw, in delivery order.
struct Seen {
  GUID provider{};
  EVENT_DESCRIPTOR descriptor{};
  ULONG pid = 0;
  ULONG tid = 0;
  LONGLONG time = 0;
  USHORT flags = 0;
  GUID activity{};
  std::vector<std::uint8_t> data;
  std::vector<std::pair<USHORT, std::vector<std::uint8_t>>> extended;
  void* context = nullptr;
};

// OpenTraceA + ProcessTrace on a thread of its own, recording every EVENT_RECORD.
class RealtimeConsumer {
 public:
  explicit RealtimeConsumer(const std::string& session, void* context = nullptr,
                            std::chrono::milliseconds per_event_delay = 0ms)
      : name_(session), delay_(per_event_delay) {
    logfile_.LoggerName = name_.data();
    logfile_.ProcessTraceMode = PROCESS_TRACE_MODE_REAL_TIME | PROCESS_TRACE_MODE_EVENT_RECORD;
    logfile_.EventRecordCallback = &RealtimeConsumer::on_event;
    logfile_.Context = context;
    // The context is the test's; the recorder finds itself through a side table.
    {
      std::lock_guard lock(registry_mu());
      registry()[context == nullptr ? this : context] = this;
    }
    if (context == nullptr) logfile_.Context = this;
    handle_ = OpenTraceA(&logfile_);
  }
  ~RealtimeConsumer() {
    if (thread_.joinable()) thread_.join();
    if (handle_ != INVALID_PROCESSTRACE_HANDLE && !closed_) CloseTrace(handle_);
    std::lock_guard lock(registry_mu());
    registry().erase(logfile_.Context);
  }
  bool opened() const { return handle_ != INVALID_PROCESSTRACE_HANDLE; }
  void start() {
    thread_ = std::thread([this] { status_ = ProcessTrace(&handle_, 1, nullptr, nullptr); });
  }
  // Waits (generous bound) until ProcessTrace returned; its status.
  ULONG join() {
    thread_.join();
    return status_;
  }
  ULONG close() {
    closed_ = true;
    return CloseTrace(handle_);
  }
  std::vector<Seen> wait_for(std::size_t n) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, 20s, [&] { return seen_.size() >= n; });
    return seen_;
  }
  std::vector<Seen> seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }
  // Called on the consumer's thread with each event of kProvider (its index) before it is
  // recorded: a test can hold the callback there. Set before start().
  void on_index(std::function<void(std::uint32_t)> hook) { hook_ = std::move(hook); }

 private:
  static std::mutex& registry_mu() {
    static std::mutex mu;
    return mu;
  }
  static std::map<void*, RealtimeConsumer*>& registry() {
    static std::map<void*, RealtimeConsumer*> r;
    return r;
  }
  static void WINAPI on_event(PEVENT_RECORD r) {
    RealtimeConsumer* self;
    {
      std::lock_guard lock(registry_mu());
      self = registry().at(r->UserContext);
    }
    Seen s;
    s.provider = r->EventHeader.ProviderId;
    s.descriptor = r->EventHeader.EventDescriptor;
    s.pid = r->EventHeader.ProcessId;
    s.tid = r->EventHeader.ThreadId;
    s.time = r->EventHeader.TimeStamp.QuadPart;
    s.flags = r->EventHeader.Flags;
    s.activity = r->EventHeader.ActivityId;
    const auto* p = static_cast<const std::uint8_t*>(r->UserData);
    s.data.assign(p, p + r->UserDataLength);
    for (USHORT i = 0; i < r->ExtendedDataCount; ++i) {
      const auto& item = r->ExtendedData[i];
      const auto* q = reinterpret_cast<const std::uint8_t*>(item.DataPtr);
      s.extended.emplace_back(item.ExtType, std::vector<std::uint8_t>(q, q + item.DataSize));
    }
    s.context = r->UserContext;
    if (self->hook_ && s.provider == kProvider && s.data.size() >= sizeof(std::uint32_t)) {
      std::uint32_t index;
      std::memcpy(&index, s.data.data(), sizeof index);
      self->hook_(index);
    }
    if (self->delay_ > 0ms) std::this_thread::sleep_for(self->delay_);
    std::lock_guard lock(self->mu_);
    self->seen_.push_back(std::move(s));
    self->cv_.notify_all();
  }

  std::string name_;
  std::chrono::milliseconds delay_;
  std::function<void(std::uint32_t)> hook_;
  EVENT_TRACE_LOGFILEA logfile_{};
  TRACEHANDLE handle_ = INVALID_PROCESSTRACE_HANDLE;
  std::thread thread_;
  ULONG status_ = 0xffffffffu;
  bool closed_ = false;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Seen> seen_;
};

bool is_header(const Seen& s) { return s.provider == EventTraceGuid; }
bool is_lost(const Seen& s) { return s.provider == RTLostEventGuid; }

// EventWrite's answers counted: a write to a full pool is refused with ERROR_NOT_ENOUGH_MEMORY.
struct Writes {
  std::uint64_t written = 0, refused = 0;
  void count(ULONG status) {
    if (status == ERROR_SUCCESS) {
      ++written;
    } else {
      EXPECT_EQ(status, ULONG{ERROR_NOT_ENOUGH_MEMORY});
      ++refused;
    }
  }
};

// A session of one 1 KB buffer (a few events fill it) with kProvider enabled; 0 on failure.
TRACEHANDLE start_one_small_buffer(const char* name) {
  Properties props;
  props.get()->BufferSize = 1;
  props.get()->MinimumBuffers = 1;
  props.get()->MaximumBuffers = 1;
  TRACEHANDLE s = 0;
  if (StartTraceA(&s, name, props.get()) != ERROR_SUCCESS) return 0;
  EXPECT_EQ(EnableTraceEx2(s, &kProvider, 1, 5, 0, 0, 10000, nullptr), ERROR_SUCCESS);
  return s;
}

// What a realtime consumer saw of kProvider's indexed events written 0, 1, 2 ... with the
// RT_LostEvent counts summed. On the way it checks that by each event, as many events were
// announced lost as are missing before it. `marker`, when given, is an index written again and
// again at the end: each one is counted as delivered, none is ordered.
struct LossTally {
  std::uint64_t delivered = 0, lost_in_buffers = 0, lost_buffers = 0, lost_at_write = 0;
};
LossTally tally_losses(const std::vector<Seen>& seen,
                       std::optional<std::uint32_t> marker = std::nullopt) {
  LossTally t;
  std::uint64_t ordered = 0;  // delivered, the marker's copies aside
  for (const Seen& e : seen) {
    if (is_lost(e)) {
      const bool buffers = e.descriptor.Opcode == 33;  // else 32: refused at the write
      EXPECT_TRUE(buffers || e.descriptor.Opcode == 32) << "opcode " << int{e.descriptor.Opcode};
      EXPECT_EQ(e.data.size(), buffers ? 16u : 8u);
      std::uint64_t counts[2] = {};
      std::memcpy(counts, e.data.data(), std::min(e.data.size(), sizeof counts));
      if (buffers) {
        t.lost_buffers += counts[0];
        t.lost_in_buffers += counts[1];
      } else {
        t.lost_at_write += counts[0];
      }
      continue;
    }
    if (!(e.provider == kProvider)) continue;
    std::uint32_t i;
    std::memcpy(&i, e.data.data(), sizeof i);
    ++t.delivered;
    if (marker && i == *marker) continue;
    if (i < ordered) {
      ADD_FAILURE() << "event " << i << " after " << ordered << " others";
      continue;
    }
    EXPECT_LE(i - ordered, t.lost_in_buffers + t.lost_at_write) << "gap before " << i;
    ++ordered;
  }
  return t;
}

// The events of `kProvider` only, each as the index it carried.
std::vector<std::uint32_t> indices(const std::vector<Seen>& seen) {
  std::vector<std::uint32_t> out;
  for (const Seen& s : seen) {
    if (!(s.provider == kProvider)) continue;
    std::uint32_t i = 0;
    if (s.data.size() >= sizeof i) std::memcpy(&i, s.data.data(), sizeof i);
    out.push_back(i);
  }
  return out;
}

ULONG write_indexed(REGHANDLE h, UCHAR level, ULONGLONG keyword, std::uint32_t index,
                    std::size_t payload = 4) {
  EVENT_DESCRIPTOR d;
  EventDescCreate(&d, static_cast<USHORT>(100 + index % 7), 1, 0, level, 2, 0, keyword);
  std::vector<std::uint8_t> bytes(payload, 0x5a);
  std::memcpy(bytes.data(), &index, sizeof index);
  EVENT_DATA_DESCRIPTOR data;
  EventDataDescCreate(&data, bytes.data(), static_cast<ULONG>(bytes.size()));
  return EventWrite(h, &d, 1, &data);
}

// The argument checks come before the session test: a bad call fails whether or not a session
// listens, and nothing else about the disabled path may change the answer.
TEST_F(EtwrtApi, EventWriteRefusesBadArgumentsWithOrWithoutASession) {
  const auto [r, h] = recorded_provider();
  EVENT_DESCRIPTOR d;
  EventDescCreate(&d, 1, 0, 0, 4, 0, 0, 0x1);
  unsigned char byte = 0;
  EVENT_DATA_DESCRIPTOR data;
  EventDataDescCreate(&data, &byte, 1);
  const auto check = [&](const char* when) {
    SCOPED_TRACE(when);
    EXPECT_EQ(EventWrite(h, nullptr, 0, nullptr), ERROR_INVALID_PARAMETER);
    EXPECT_EQ(EventWrite(h, &d, 1, nullptr), ERROR_INVALID_PARAMETER);
    EXPECT_EQ(EventWrite(h, &d, MAX_EVENT_DATA_DESCRIPTORS + 1, &data), ERROR_INVALID_PARAMETER);
    EXPECT_EQ(EventWriteTransfer(h, nullptr, nullptr, nullptr, 0, nullptr),
              ERROR_INVALID_PARAMETER);
    EXPECT_EQ(EventWriteEx(h, &d, 0, 1, nullptr, nullptr, 1, &data), ERROR_INVALID_PARAMETER);
    EXPECT_EQ(EventWrite(0, &d, 1, &data), ERROR_INVALID_HANDLE);
    EXPECT_EQ(EventWrite(h, &d, 0, nullptr), ERROR_SUCCESS);
    EXPECT_EQ(EventWrite(h, &d, 1, &data), ERROR_SUCCESS);
  };
  check("no session");
  start_enabled("bad-arguments");
  check("one session");
}

// The descriptors of this process that map the pool named after session `name` (the memfd
// of a pool is named after the session that made it).
int pool_descriptors(const std::string& name) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    const std::string target = std::filesystem::read_symlink(entry.path(), ec).string();
    if (!ec && target.rfind("/memfd:etwrt-" + name + " ", 0) == 0) ++count;
  }
  return count;
}

// The mappings of that pool in this process (/proc/self/maps).
int pool_mappings(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  int count = 0;
  for (std::string line; std::getline(maps, line);) {
    if (line.find("/memfd:etwrt-" + name + " ") != std::string::npos) ++count;
  }
  return count;
}

// Both sessions have the same geometry, so they share one pool (docs/etwrt/internals.md,
// "Event path"): each event is written once, with the bits of the sessions that accept it.
TEST_F(EtwrtApi, EachConsumerGetsExactlyItsSessionsAcceptedEvents) {
  const auto [r, h] = recorded_provider();
  EVENT_DESCRIPTOR d;
  EventDescCreate(&d, 1, 0, 0, 4, 0, 0, 0x1);
  EXPECT_EQ(EventWrite(h, &d, 0, nullptr), ERROR_SUCCESS);  // Nobody listens: dropped.
  const TRACEHANDLE s1 = start("path-1");
  const TRACEHANDLE s2 = start("path-2");
  ASSERT_EQ(EnableTraceEx2(s1, &kProvider, 1, 3, 0x1, 0, 10000, nullptr), ERROR_SUCCESS);
  ASSERT_EQ(EnableTraceEx2(s2, &kProvider, 1, 5, 0x6, 0x4, 10000, nullptr), ERROR_SUCCESS);
  const struct {
    UCHAR level;
    ULONGLONG keyword;
  } kinds[] = {{2, 0x1}, {4, 0x1}, {5, 0x4}, {5, 0x6}, {1, 0x0}, {3, 0x2}, {0, 0x5}, {6, 0x4}};
  std::vector<std::uint32_t> want1, want2;
  auto write_all = [&](std::uint32_t from, std::uint32_t to) {
    for (std::uint32_t i = from; i < to; ++i) {
      const auto& k = kinds[i % std::size(kinds)];
      ASSERT_EQ(write_indexed(h, k.level, k.keyword, i), ERROR_SUCCESS) << i;
      const bool a1 = (k.level == 0 || k.level <= 3) && (k.keyword == 0 || (k.keyword & 0x1) != 0);
      const bool a2 = (k.level == 0 || k.level <= 5) &&
                      (k.keyword == 0 || ((k.keyword & 0x6) != 0 && (k.keyword & 0x4) == 0x4));
      if (a1) want1.push_back(i);
      if (a2) want2.push_back(i);
    }
  };
  // Written before any consumer attached: the first consumer still gets them (buffered).
  write_all(0, 40);
  int context1 = 0;
  int context2 = 0;
  RealtimeConsumer c1("path-1", &context1);
  RealtimeConsumer c2("path-2", &context2);
  ASSERT_TRUE(c1.opened());
  ASSERT_TRUE(c2.opened());
  // Both sessions are in path-1's pool, which this process maps once (Pool::alias): mapped once
  // per session, eight sessions' consumers counted it eight times in their RSS.
  EXPECT_EQ(pool_descriptors("path-1"), 1);
  EXPECT_EQ(pool_mappings("path-1"), 1);
  EXPECT_EQ(pool_descriptors("path-2"), 0);
  EXPECT_EQ(pool_mappings("path-2"), 0);
  c1.start();
  c2.start();
  write_all(40, 400);
  c1.wait_for(want1.size() + 1);
  c2.wait_for(want2.size() + 1);
  EXPECT_EQ(stop(s1), ERROR_SUCCESS);
  EXPECT_EQ(c1.join(), ERROR_SUCCESS);  // Returned because the session stopped.
  // path-1 drained, its consumer took it out of the pool: every buffer path-2 has read is
  // free again, and only the provider thread's own buffer is in use.
  Properties q;
  ASSERT_EQ(ControlTraceA(s2, nullptr, q.get(), EVENT_TRACE_CONTROL_QUERY), ERROR_SUCCESS);
  EXPECT_LE(q.get()->NumberOfBuffers - q.get()->FreeBuffers, 1u);
  EXPECT_EQ(stop(s2), ERROR_SUCCESS);
  EXPECT_EQ(c2.join(), ERROR_SUCCESS);
  const auto seen1 = c1.seen();
  const auto seen2 = c2.seen();
  ASSERT_FALSE(seen1.empty());
  ASSERT_FALSE(seen2.empty());
  EXPECT_TRUE(is_header(seen1.front()));
  EXPECT_TRUE(is_header(seen2.front()));
  EXPECT_EQ(seen1.front().descriptor.Opcode, 0);
  EXPECT_GE(seen1.front().data.size(), sizeof(TRACE_LOGFILE_HEADER));
  EXPECT_EQ(indices(seen1), want1);
  EXPECT_EQ(indices(seen2), want2);
  LONGLONG previous = 0;
  for (const Seen& s : seen1) {
    EXPECT_EQ(s.context, &context1);
    if (!(s.provider == kProvider)) continue;
    EXPECT_EQ(s.pid, static_cast<ULONG>(::getpid()));
    EXPECT_EQ(s.tid, static_cast<ULONG>(::gettid()));  // Written on this thread.
    // EVENT_HEADER page: a 64-bit provider; EXTENDED_INFO when ExtendedData contains data.
    EXPECT_NE(s.flags & EVENT_HEADER_FLAG_64_BIT_HEADER, 0);
    EXPECT_EQ((s.flags & EVENT_HEADER_FLAG_EXTENDED_INFO) != 0, !s.extended.empty());
    EXPECT_GE(s.time, previous);
    previous = s.time;
    std::uint32_t i;
    std::memcpy(&i, s.data.data(), sizeof i);
    EXPECT_EQ(s.descriptor.Id, 100 + i % 7);
    EXPECT_EQ(s.descriptor.Keyword, kinds[i % std::size(kinds)].keyword);
  }
  for (const Seen& s : seen2) EXPECT_EQ(s.context, &context2);
}

// In use of the pool session `s` shares: NumberOfBuffers - FreeBuffers of its QUERY (its share
// of the pool's, in proportion to its MaximumBuffers: all of it, up to its MaximumBuffers, once
// it is the pool's only one).
ULONG buffers_in_use(TRACEHANDLE s) {
  Properties q;
  if (ControlTraceA(s, nullptr, q.get(), EVENT_TRACE_CONTROL_QUERY) != ERROR_SUCCESS) return ~0u;
  return q.get()->NumberOfBuffers - q.get()->FreeBuffers;
}

// A provider in another process writes for two sessions sharing a pool until it hears that one
// stopped. Its records for the stopped one that its consumer did not drain (the rest of the
// buffer it was writing, and what it writes before it hears) are nobody's to read: the stopped
// session's index must leave the pool (docs/etwrt/internals.md, "Event path"), or each buffer
// holding such a record stays in use for good. The provider is SIGSTOPped over the stop and the
// drain, so that it resumes writing before it reads the news. With the hub not taking the index
// out, 1-4 buffers stayed in use in 23 of 24 runs (in the 24th, none).
TEST_F(EtwrtApi, AStoppedSessionsLateRecordsHoldNoBuffer) {
  // 1 KB buffers (a dozen records each): the late records fill several. late-b's MaximumBuffers
  // is nearly all of the pool's, so its QUERY shows nearly all of the pool's buffers (its share),
  // and it makes the pool, which late-a's joins (laid out for 8 sessions of late-b's size).
  auto start_small = [](const std::string& name, ULONG maximum_buffers) {
    Properties p;
    p.get()->BufferSize = 1;
    p.get()->MaximumBuffers = maximum_buffers;
    TRACEHANDLE h = 0;
    EXPECT_EQ(StartTraceA(&h, name.c_str(), p.get()), ERROR_SUCCESS) << name;
    return h;
  };
  // Pools stay mapped as long as the process: names of their own for each --gtest_repeat.
  static int run = 0;
  const std::string name_a = "late-a" + std::to_string(run);
  const std::string name_b = "late-b" + std::to_string(run++);
  const TRACEHANDLE b = start_small(name_b, 300);
  const TRACEHANDLE a = start_small(name_a, 2);
  ASSERT_EQ(EnableTraceEx2(a, &kProvider, 1, 5, 0, 0, 10000, nullptr), ERROR_SUCCESS);
  ASSERT_EQ(EnableTraceEx2(b, &kProvider, 1, 5, 0, 0, 10000, nullptr), ERROR_SUCCESS);
  RealtimeConsumer ca(name_a);
  RealtimeConsumer cb(name_b);
  // They share late-b's pool, mapped once.
  ASSERT_EQ(pool_descriptors(name_b), 1);
  ASSERT_EQ(pool_descriptors(name_a), 0);
  ca.start();
  cb.start();
  ca.wait_for(1);
  cb.wait_for(1);
  void* shared = ::mmap(nullptr, sizeof(std::atomic<int>), PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(shared, MAP_FAILED);
  auto* enough = new (shared) std::atomic<int>(0);
  ForkedChild child([enough](ForkedChild& self) {
    REGHANDLE h = 0;
    if (EventRegister(&kProvider, nullptr, nullptr, &h) != ERROR_SUCCESS) return 2;
    for (std::uint32_t i = 0; i < 100'000'000; ++i) {  // bounded, should the test die
      if (write_indexed(h, 4, 0, i) != ERROR_SUCCESS) return 3;
      if (i == 1000 && !self.signal_ready()) return 4;
      if (i % 256 == 0 && enough->load() != 0) break;
      if (i % 16 == 0) std::this_thread::sleep_for(1us);  // A steady writer, not a flood.
    }
    EventUnregister(h);
    return 0;
  });
  ASSERT_TRUE(child.ready());
  ASSERT_EQ(::kill(child.pid(), SIGSTOP), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child.pid(), &status, WUNTRACED), child.pid());
  EXPECT_EQ(stop(a), ERROR_SUCCESS);
  EXPECT_EQ(ca.join(), ERROR_SUCCESS);  // Drained: what the provider writes now is late.
  ASSERT_EQ(::kill(child.pid(), SIGCONT), 0);
  std::this_thread::sleep_for(50ms);
  enough->store(1);
  EXPECT_TRUE(child.exited_cleanly());
  // late-b's consumer reads everything (the provider's last buffer too, once its exit is
  // noticed); then no buffer is needed any more.
  ULONG in_use = buffers_in_use(b);
  for (int i = 0; i < 500 && in_use > 0; ++i) {
    std::this_thread::sleep_for(10ms);
    in_use = buffers_in_use(b);
  }
  EXPECT_EQ(in_use, 0u);
  EXPECT_EQ(stop(b), ERROR_SUCCESS);
  EXPECT_EQ(cb.join(), ERROR_SUCCESS);
  ::munmap(shared, sizeof(std::atomic<int>));
}

// Stops `s`; its consumer `c` must then return and have got exactly the indices `want`.
// CON-RT-SECOND's start: the running session `name` buffers kProvider's indexed events 0..9
// (written through `h`) before a first consumer attaches; that consumer has then read them, after
// the header.
std::unique_ptr<RealtimeConsumer> first_reader_of_ten_buffered(REGHANDLE h,
                                                               const std::string& name) {
  for (std::uint32_t i = 0; i < 10; ++i) EXPECT_EQ(write_indexed(h, 4, 0, i), ERROR_SUCCESS);
  auto first = std::make_unique<RealtimeConsumer>(name);
  first->start();
  first->wait_for(11);
  return first;
}

// A realtime consumer of one session, and the indexed events it must get, in order.
struct ExpectingReader {
  explicit ExpectingReader(const std::string& session) : c(session) {}
  // Opened, then reading.
  bool start() {
    if (!c.opened()) return false;
    c.start();
    return true;
  }
  void wait() { c.wait_for(want.size() + 1); }  // the header event, then those wanted
  void stop_expecting(TRACEHANDLE s) {
    EXPECT_EQ(stop(s), ERROR_SUCCESS);
    EXPECT_EQ(c.join(), ERROR_SUCCESS);  // Returned because the session stopped.
    EXPECT_EQ(indices(c.seen()), want);
  }
  RealtimeConsumer c;
  std::vector<std::uint32_t> want;
};

// EventWrite keeps each thread's resolved sessions per (table version, level, keyword): every
// change of the enabling sessions must reach the same thread's very next event of that kind.
// Between two changes the thread writes one kind only, so that its next event of that kind
// finds the entry it left, whatever entries the kinds share.
TEST_F(EtwrtApi, EachEnableChangeReachesTheSameThreadsNextEvent) {
  const auto [r, h] = recorded_provider();
  const TRACEHANDLE s1 = start("route-1");
  const TRACEHANDLE s2 = start("route-2");
  ExpectingReader r1("route-1");
  ExpectingReader r2("route-2");
  ASSERT_TRUE(r1.start());
  ASSERT_TRUE(r2.start());
  std::uint32_t i = 0;
  auto write = [&](UCHAR level, bool to1, bool to2) {
    for (int twice = 0; twice < 2; ++twice, ++i) {
      ASSERT_EQ(write_indexed(h, level, 0x1, i), ERROR_SUCCESS);
      if (to1) r1.want.push_back(i);
      if (to2) r2.want.push_back(i);
    }
  };
  auto enable = [&](TRACEHANDLE s, UCHAR level, ULONGLONG any) {
    ASSERT_EQ(EnableTraceEx2(s, &kProvider, EVENT_CONTROL_CODE_ENABLE_PROVIDER, level, any, 0,
                             10000, nullptr),
              ERROR_SUCCESS);
  };
  enable(s1, 5, 0x1);
  write(4, true, false);
  enable(s1, 3, 0x1);  // level lowered
  write(4, false, false);
  enable(s2, 4, 0x1);  // a second session
  write(4, false, true);
  enable(s1, 5, 0x1);  // level raised again
  write(4, true, true);
  enable(s1, 5, 0x2);  // keyword no longer matches
  write(4, false, true);
  ASSERT_EQ(
      EnableTraceEx2(s2, &kProvider, EVENT_CONTROL_CODE_DISABLE_PROVIDER, 0, 0, 0, 10000, nullptr),
      ERROR_SUCCESS);
  write(4, false, false);
  enable(s1, 4, 0x1);
  write(4, true, false);
  write(2, true, false);  // another kind, then the first one's entry again
  enable(s2, 2, 0x1);
  write(2, true, true);
  write(4, true, false);
  r1.wait();
  r2.wait();
  r1.stop_expecting(s1);
  r2.stop_expecting(s2);
}

// One event to two sessions is encoded once and copied (docs/etwrt/internals.md, "Event path"). A
// session whose buffers cannot hold it refuses it alone: the call answers ERROR_MORE_DATA, the
// other session still gets the event's own bytes, and each session counts what it refused.
// The small session is enabled first, so that it is the first the event goes to.
TEST_F(EtwrtApi, AnEventTooLargeForOneSessionStillReachesTheOther) {
  const auto [r, h] = recorded_provider();
  Properties small;
  small.get()->BufferSize = 1;  // KB
  small.get()->MinimumBuffers = 4;
  small.get()->MaximumBuffers = 4;
  TRACEHANDLE s1 = 0;
  ASSERT_EQ(StartTraceA(&s1, "copy-small", small.get()), ERROR_SUCCESS);
  const TRACEHANDLE s2 = start("copy-roomy");
  ASSERT_EQ(EnableTraceEx2(s1, &kProvider, 1, 5, 0, 0, 10000, nullptr), ERROR_SUCCESS);
  ASSERT_EQ(EnableTraceEx2(s2, &kProvider, 1, 5, 0, 0, 10000, nullptr), ERROR_SUCCESS);
  ExpectingReader small_reader("copy-small");
  ExpectingReader roomy_reader("copy-roomy");
  ASSERT_TRUE(small_reader.start());
  ASSERT_TRUE(roomy_reader.start());
  for (std::uint32_t i = 0; i < 20; ++i) {
    const bool large = i % 2 == 0;  // 2000 bytes: over the small session's 1 KB buffers
    EXPECT_EQ(write_indexed(h, 4, 0, i, large ? 2000 : 32),
              large ? ULONG{ERROR_MORE_DATA} : ULONG{ERROR_SUCCESS})
        << i;
    if (!large) small_reader.want.push_back(i);
    roomy_reader.want.push_back(i);
  }
  small_reader.wait();
  roomy_reader.wait();
  Properties q1, q2;
  ASSERT_EQ(ControlTraceA(s1, nullptr, q1.get(), EVENT_TRACE_CONTROL_QUERY), ERROR_SUCCESS);
  ASSERT_EQ(ControlTraceA(s2, nullptr, q2.get(), EVENT_TRACE_CONTROL_QUERY), ERROR_SUCCESS);
  EXPECT_EQ(q1.get()->EventsLost, 10u);
  EXPECT_EQ(q2.get()->EventsLost, 0u);
  small_reader.stop_expecting(s1);
  roomy_reader.stop_expecting(s2);
  for (const Seen& e : roomy_reader.c.seen()) {
    if (!(e.provider == kProvider)) continue;
    std::uint32_t i = 0;
    std::memcpy(&i, e.data.data(), sizeof i);
    EXPECT_EQ(e.data.size(), i % 2 == 0 ? 2000u : 32u) << i;
  }
}

// The control codes themselves: Audit.ActivityIdControlCodes.
TEST_F(EtwrtApi, ActivityIdsTransferAndTraitsTravelWithEvents) {
  GUID a{};
  GUID b{};
  ASSERT_EQ(EventActivityIdControl(EVENT_ACTIVITY_CTRL_CREATE_ID, &a), ERROR_SUCCESS);
  ASSERT_EQ(EventActivityIdControl(EVENT_ACTIVITY_CTRL_CREATE_ID, &b), ERROR_SUCCESS);
  ASSERT_EQ(EventActivityIdControl(EVENT_ACTIVITY_CTRL_SET_ID, &a), ERROR_SUCCESS);

  const auto [r, h] = recorded_provider();
  std::vector<std::uint8_t> traits = {0, 0, 'P', 0};
  traits[0] = static_cast<std::uint8_t>(traits.size());
  ASSERT_EQ(EventSetInformation(h, EventProviderSetTraits, traits.data(),
                                static_cast<ULONG>(traits.size())),
            ERROR_SUCCESS);
  const TRACEHANDLE s = start_enabled("activity");
  RealtimeConsumer c("activity");
  ASSERT_TRUE(c.opened());
  c.start();
  EVENT_DESCRIPTOR d;
  EventDescCreate(&d, 7, 0, 0, 4, 0, 0, 0);
  ASSERT_EQ(EventWrite(h, &d, 0, nullptr), ERROR_SUCCESS);  // The thread's activity: a.
  ASSERT_EQ(EventWriteTransfer(h, &d, &b, &a, 0, nullptr), ERROR_SUCCESS);
  c.wait_for(3);
  EXPECT_EQ(stop(s), ERROR_SUCCESS);
  EXPECT_EQ(c.join(), ERROR_SUCCESS);
  std::vector<Seen> events;
  for (const Seen& e : c.seen()) {
    if (e.provider == kProvider) events.push_back(e);
  }
  ASSERT_EQ(events.size(), 2u);
  EXPECT_TRUE(events[0].activity == a);
  EXPECT_TRUE(events[1].activity == b);
  auto find = [](const Seen& e, USHORT type) -> const std::vector<std::uint8_t>* {
    for (const auto& [t, bytes] : e.extended) {
      if (t == type) return &bytes;
    }
    return nullptr;
  };
  EXPECT_EQ(find(events[0], EVENT_HEADER_EXT_TYPE_RELATED_ACTIVITYID), nullptr);
  const auto* related = find(events[1], EVENT_HEADER_EXT_TYPE_RELATED_ACTIVITYID);
  ASSERT_NE(related, nullptr);
  ASSERT_EQ(related->size(), sizeof(GUID));
  EXPECT_EQ(std::memcmp(related->data(), &a, sizeof a), 0);
  for (const Seen& e : events) {
    EXPECT_NE(e.flags & EVENT_HEADER_FLAG_EXTENDED_INFO, 0);
    const auto* t = find(e, EVENT_HEADER_EXT_TYPE_PROV_TRAITS);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(*t, traits);
  }
  GUID null_id = GUID_NULL;
  EventActivityIdControl(EVENT_ACTIVITY_CTRL_SET_ID, &null_id);
}

TEST_F(EtwrtApi, EventWriteExFilterExcludesSessionsByInstanceId) {
  const auto [r, h] = recorded_provider();
  const TRACEHANDLE s1 = start("exclude-1");
  const TRACEHANDLE s2 = start("exclude-2");
  const std::vector<std::uint8_t> f = {1};
  EVENT_FILTER_DESCRIPTOR desc{reinterpret_cast<ULONGLONG>(f.data()), 1, 7};
  ENABLE_TRACE_PARAMETERS p{};
  p.Version = ENABLE_TRACE_PARAMETERS_VERSION_2;
  p.EnableFilterDesc = &desc;
  p.FilterDescCount = 1;
  ASSERT_EQ(EnableTraceEx2(s1, &kProvider, 1, 5, 0, 0, 10000, &p), ERROR_SUCCESS);
  ASSERT_EQ(EnableTraceEx2(s2, &kProvider, 1, 5, 0, 0, 10000, &p), ERROR_SUCCESS);
  // The provider learns each session's InstanceId from its filter block.
  const auto blocks = blocks_of(r.wait_for(2)[1]);
  ASSERT_EQ(blocks.size(), 2u);
  RealtimeConsumer c1("exclude-1");
  RealtimeConsumer c2("exclude-2");
  c1.start();
  c2.start();
  EVENT_DESCRIPTOR d;
  EventDescCreate(&d, 1, 0, 0, 4, 0, 0, 0);
  std::uint32_t index = 1;
  EVENT_DATA_DESCRIPTOR data;
  EventDataDescCreate(&data, &index, sizeof index);
  ASSERT_EQ(EventWriteEx(h, &d, blocks[0].instance, 0, nullptr, nullptr, 1, &data), ERROR_SUCCESS);
  index = 2;
  ASSERT_EQ(EventWriteEx(h, &d, blocks[1].instance, 0, nullptr, nullptr, 1, &data), ERROR_SUCCESS);
  index = 3;
  ASSERT_EQ(EventWriteEx(h, &d, 0, 0, nullptr, nullptr, 1, &data), ERROR_SUCCESS);
  c1.wait_for(3);
  c2.wait_for(3);
  EXPECT_EQ(stop(s1), ERROR_SUCCESS);
  EXPECT_EQ(stop(s2), ERROR_SUCCESS);
  c1.join();
  c2.join();
  EXPECT_EQ(indices(c1.seen()), (std::vector<std::uint32_t>{2, 3}));
  EXPECT_EQ(indices(c2.seen()), (std::vector<std::uint32_t>{1, 3}));
}

TEST_F(EtwrtApi, SlowConsumerLosesOldBuffersAndTheCountsAddUp) {
  const auto [r, h] = recorded_provider();
  const TRACEHANDLE s = start_one_small_buffer("slow");
  ASSERT_NE(s, TRACEHANDLE{0});
  RealtimeConsumer c("slow", nullptr, 2ms);
  ASSERT_TRUE(c.opened());
  c.start();
  c.wait_for(1);  // The header event: the consumer is attached.
  Writes w;
  for (std::uint32_t i = 0; i < 3000; ++i) w.count(write_indexed(h, 4, 0, i, 32));
  const std::uint64_t written = w.written, refused = w.refused;
  Properties q;
  ASSERT_EQ(ControlTraceA(s, nullptr, q.get(), EVENT_TRACE_CONTROL_QUERY), ERROR_SUCCESS);
  EXPECT_EQ(q.get()->EventsLost, refused);
  EXPECT_GT(q.get()->BuffersWritten, 0u);
  EXPECT_GE(q.get()->NumberOfBuffers, q.get()->FreeBuffers);
  EXPECT_EQ(stop(s), ERROR_SUCCESS);
  EXPECT_EQ(c.join(), ERROR_SUCCESS);
  const LossTally t = tally_losses(c.seen());
  EXPECT_GT(t.lost_buffers + t.lost_at_write, 0u);  // The consumer was too slow for 3000 events.
  EXPECT_EQ(written, t.delivered + t.lost_in_buffers);
  EXPECT_EQ(refused, t.lost_at_write);
  // Writers reclaim buffers: every reclaim happened before the query.
  EXPECT_EQ(t.lost_buffers, q.get()->RealTimeBuffersLost);
}

// A ProcessTrace that is alone on its session reads the pool on its own thread (the direct
// path, docs/etwrt/internals.md). Held inside its callback while the pool overflows, it must
// announce each gap (RT_LostEvent) ahead of the data after it and the counts must add up, as on the
// hub's path (the slow consumer above never leaves it: its queue holds the hub back).
TEST_F(EtwrtApi, ConsumerReadingThePoolItselfAnnouncesGapsAndTheCountsAddUp) {
  const auto [r, h] = recorded_provider();
  const TRACEHANDLE s = start_one_small_buffer("direct-gaps");
  ASSERT_NE(s, TRACEHANDLE{0});
  RealtimeConsumer c("direct-gaps");
  ASSERT_TRUE(c.opened());
  constexpr std::uint32_t kHeld = 20;     // the callback waits at this event...
  constexpr std::uint32_t kBurst = 3000;  // ...while these are written
  std::mutex gate_mu;
  std::condition_variable gate_cv;
  bool holding = false;
  bool released = false;
  c.on_index([&](std::uint32_t i) {
    if (i != kHeld) return;
    std::unique_lock lock(gate_mu);
    holding = true;
    gate_cv.notify_all();
    gate_cv.wait_for(lock, 20s, [&] { return released; });
  });
  c.start();
  c.wait_for(1);
  Writes w;
  const auto write = [&](std::uint32_t i) { w.count(write_indexed(h, 4, 0, i, 32)); };
  // A steady trickle first: the hub hands the reader to this consumer after a poll.
  for (std::uint32_t i = 0; i < kHeld; ++i) {
    write(i);
    c.wait_for(i + 2);
    std::this_thread::sleep_for(1ms);
  }
  write(kHeld);
  {
    std::unique_lock lock(gate_mu);
    ASSERT_TRUE(gate_cv.wait_for(lock, 20s, [&] { return holding; }));
  }
  for (std::uint32_t i = kHeld + 1; i <= kHeld + kBurst; ++i) write(i);
  {
    std::lock_guard lock(gate_mu);
    released = true;
  }
  gate_cv.notify_all();
  // Caught up on its own thread (a marker written after the burst arrives) before the stop,
  // whose drain is the hub thread's.
  const std::uint32_t marker = kHeld + kBurst + 1;
  std::vector<std::uint32_t> got;
  for (int tries = 0; tries < 2000; ++tries) {
    write(marker);
    got = indices(c.seen());
    if (!got.empty() && got.back() == marker) break;
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_EQ(got.back(), marker);
  Properties q;
  ASSERT_EQ(ControlTraceA(s, nullptr, q.get(), EVENT_TRACE_CONTROL_QUERY), ERROR_SUCCESS);
  EXPECT_EQ(stop(s), ERROR_SUCCESS);
  EXPECT_EQ(c.join(), ERROR_SUCCESS);
  const LossTally t = tally_losses(c.seen(), marker);
  EXPECT_GT(t.lost_buffers + t.lost_at_write, 0u);  // The burst overflowed the pool.
  EXPECT_EQ(w.written, t.delivered + t.lost_in_buffers);
  EXPECT_EQ(w.refused, t.lost_at_write);
  EXPECT_EQ(t.lost_buffers, q.get()->RealTimeBuffersLost);
  EXPECT_EQ(w.refused, q.get()->EventsLost);
}

TEST_F(EtwrtApi, SecondConsumerGetsOnlyNewEvents) {
  const auto [r, h] = recorded_provider();
  const TRACEHANDLE s = start_enabled("second");
  const auto first = first_reader_of_ten_buffered(h, "second");
  for (std::uint32_t i = 10; i < 20; ++i) ASSERT_EQ(write_indexed(h, 4, 0, i), ERROR_SUCCESS);
  first->wait_for(21);
  RealtimeConsumer second("second");
  ASSERT_TRUE(second.opened());
  second.start();
  second.wait_for(1);  // Its header: it is attached.
  for (std::uint32_t i = 20; i < 30; ++i) ASSERT_EQ(write_indexed(h, 4, 0, i), ERROR_SUCCESS);
  first->wait_for(31);
  second.wait_for(11);
  EXPECT_EQ(stop(s), ERROR_SUCCESS);
  EXPECT_EQ(first->join(), ERROR_SUCCESS);
  EXPECT_EQ(second.join(), ERROR_SUCCESS);
  std::vector<std::uint32_t> all(30);
  for (std::uint32_t i = 0; i < 30; ++i) all[i] = i;
  EXPECT_EQ(indices(first->seen()), all);
  EXPECT_EQ(indices(second.seen()), std::vector<std::uint32_t>(all.begin() + 20, all.end()));
  EXPECT_TRUE(is_header(second.seen().front()));
}

TEST_F(EtwrtApi, ConsumerThatDiesBlocksNobody) {
  const auto [r, h] = recorded_provider();
  const TRACEHANDLE s = start_enabled("dead-consumer");
  ForkedChild child([](ForkedChild& self) {
    RealtimeConsumer c("dead-consumer");
    if (!c.opened()) return 2;
    c.start();
    c.wait_for(1);  // Attached.
    self.signal_ready();
    ::pause();
    return 0;
  });
  ASSERT_TRUE(child.ready());
  child.kill();
  // Writers never wait for a consumer, dead or alive: these all return.
  for (std::uint32_t i = 0; i < 2000; ++i) {
    const ULONG st = write_indexed(h, 4, 0, i, 32);
    ASSERT_TRUE(st == ERROR_SUCCESS || st == ERROR_NOT_ENOUGH_MEMORY) << st;
  }
  // The dead reader is recovered: a new consumer attaches and gets new events.
  RealtimeConsumer c("dead-consumer");
  c.start();
  c.wait_for(1);
  ASSERT_EQ(write_indexed(h, 4, 0, 5000), ERROR_SUCCESS);
  bool got = false;
  for (int i = 0; i < 2000 && !got; ++i) {
    for (const Seen& e : c.seen()) {
      std::uint32_t index = 0;
      if (e.provider == kProvider && e.data.size() >= 4) std::memcpy(&index, e.data.data(), 4);
      got = got || index == 5000;
    }
    if (!got) std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(got);
  EXPECT_EQ(stop(s), ERROR_SUCCESS);
  EXPECT_EQ(c.join(), ERROR_SUCCESS);
}

std::mutex g_classic_mu;
std::vector<EVENT_TRACE_HEADER> g_classic;
std::vector<std::vector<std::uint8_t>> g_classic_data;

TEST_F(EtwrtApi, ClassicCallbackAndBufferCallbackCancel) {
  {
    std::lock_guard lock(g_classic_mu);
    g_classic.clear();
    g_classic_data.clear();
  }
  const auto [r, h] = recorded_provider();
  const TRACEHANDLE s = start_enabled("classic");
  ASSERT_EQ(write_indexed(h, 4, 0, 77), ERROR_SUCCESS);
  std::string name = "classic";
  EVENT_TRACE_LOGFILEA l{};
  l.LoggerName = name.data();
  l.ProcessTraceMode = PROCESS_TRACE_MODE_REAL_TIME;  // No EVENT_RECORD: the EVENT_TRACE form.
  l.EventCallback = [](PEVENT_TRACE e) {
    std::lock_guard lock(g_classic_mu);
    g_classic.push_back(e->Header);
    const auto* p = static_cast<const std::uint8_t*>(e->MofData);
    g_classic_data.emplace_back(p, p + e->MofLength);
  };
  // Ends processing at the first batch of events.
  l.BufferCallback = [](PEVENT_TRACE_LOGFILEA) -> ULONG { return FALSE; };
  TRACEHANDLE t = OpenTraceA(&l);
  ASSERT_NE(t, INVALID_PROCESSTRACE_HANDLE);
  EXPECT_EQ(l.LogfileHeader.BufferSize, 64u * 1024);
  EXPECT_EQ(ProcessTrace(&t, 1, nullptr, nullptr), ULONG{ERROR_CANCELLED});
  EXPECT_EQ(CloseTrace(t), ERROR_SUCCESS);
  EXPECT_EQ(CloseTrace(t), ULONG{ERROR_INVALID_HANDLE});
  std::lock_guard lock(g_classic_mu);
  ASSERT_EQ(g_classic.size(), 2u);
  EXPECT_TRUE(g_classic[0].Guid == EventTraceGuid);
  EXPECT_EQ(g_classic_data[0].size(), sizeof(TRACE_LOGFILE_HEADER));
  EXPECT_TRUE(g_classic[1].Guid == kProvider);
  EXPECT_EQ(g_classic[1].Class.Level, 4);
  EXPECT_EQ(g_classic[1].ProcessId, static_cast<ULONG>(::getpid()));
  ASSERT_EQ(g_classic_data[1].size(), 4u);
  std::uint32_t index;
  std::memcpy(&index, g_classic_data[1].data(), 4);
  EXPECT_EQ(index, 77u);
  EXPECT_EQ(stop(s), ERROR_SUCCESS);
}

// A consumer in another process while one reads (CON-RT-SECOND across processes): it is fed
// through a relay slot by the reading process, and gets its header, then exactly the events
// written after it attached; the first consumer is unaffected.
TEST_F(EtwrtApi, SecondConsumerInAnotherProcessGetsOnlyNewEvents) {
  const auto [r, h] = recorded_provider();
  const TRACEHANDLE s = start_enabled("two-processes");
  const auto first = first_reader_of_ten_buffered(h, "two-processes");
  ForkedChild child([](ForkedChild& self) {
    RealtimeConsumer c("two-processes");
    if (!c.opened()) return 2;
    c.start();
    c.wait_for(1);  // Its header: attached.
    if (!self.signal_ready()) return 2;
    const std::uint64_t status = c.join();
    const std::vector<Seen> seen = c.seen();
    std::vector<std::uint64_t> out = {status, !seen.empty() && is_header(seen.front())};
    for (const std::uint32_t i : indices(seen)) out.push_back(i);
    return self.report(out) ? 0 : 2;
  });
  ASSERT_TRUE(child.ready());
  for (std::uint32_t i = 10; i < 20; ++i) ASSERT_EQ(write_indexed(h, 4, 0, i), ERROR_SUCCESS);
  first->wait_for(21);
  EXPECT_EQ(stop(s), ERROR_SUCCESS);
  EXPECT_EQ(first->join(), ERROR_SUCCESS);
  const std::vector<std::uint64_t> got = child.reported();
  EXPECT_TRUE(child.exited_cleanly());
  ASSERT_GE(got.size(), 2u);
  EXPECT_EQ(got[0], ERROR_SUCCESS);
  EXPECT_EQ(got[1], 1u);  // The header event came first.
  std::vector<std::uint64_t> expected;
  for (std::uint32_t i = 10; i < 20; ++i) expected.push_back(i);
  EXPECT_EQ(std::vector<std::uint64_t>(got.begin() + 2, got.end()), expected);
  std::vector<std::uint32_t> all;
  for (std::uint32_t i = 0; i < 20; ++i) all.push_back(i);
  EXPECT_EQ(indices(first->seen()), all);
}

// Events of kProvider delivered, and events announced lost (RTLostBuffer's events plus
// RTLostEvent's), with each gap announced ahead of the first event after it.
struct Tally {
  std::uint64_t delivered = 0;
  std::uint64_t lost = 0;
  bool gaps_announced = true;
};
Tally tally(const std::vector<Seen>& seen) {
  Tally t;
  std::uint64_t next = 0;
  for (const Seen& e : seen) {
    if (is_lost(e)) {
      std::uint64_t counts[2] = {0, 0};
      std::memcpy(counts, e.data.data(), std::min(e.data.size(), sizeof counts));
      t.lost += e.descriptor.Opcode == 33 ? counts[1] : counts[0];
      continue;
    }
    if (!(e.provider == kProvider) || e.data.size() < 4) continue;
    std::uint32_t i;
    std::memcpy(&i, e.data.data(), sizeof i);
    // Missing before i: i - delivered so far, all of which must have been announced.
    if (i < next || i - t.delivered > t.lost) t.gaps_announced = false;
    next = i + 1;
    ++t.delivered;
  }
  return t;
}

// A slow consumer in another process loses alone, counted (its ring is full), and every
// consumer's accounting balances exactly: delivered + announced lost = written.
TEST_F(EtwrtApi, SlowConsumerInAnotherProcessLosesAloneCountedExactly) {
  const auto [r, h] = recorded_provider();
  // 16 MB of buffers hold all 5 MB written: the session itself loses nothing.
  Properties props;
  props.get()->BufferSize = 1024;
  props.get()->MinimumBuffers = 4;
  props.get()->MaximumBuffers = 16;
  TRACEHANDLE s = 0;
  ASSERT_EQ(StartTraceA(&s, "relay-slow", props.get()), ERROR_SUCCESS);
  ASSERT_EQ(EnableTraceEx2(s, &kProvider, 1, 5, 0, 0, 10000, nullptr), ERROR_SUCCESS);
  RealtimeConsumer first("relay-slow");
  first.start();
  first.wait_for(1);
  ForkedChild child([](ForkedChild& self) {
    RealtimeConsumer c("relay-slow", nullptr, 1ms);
    if (!c.opened()) return 2;
    c.start();
    c.wait_for(1);
    if (!self.signal_ready()) return 2;
    const std::uint64_t status = c.join();
    const Tally t = tally(c.seen());
    return self.report({status, t.delivered, t.lost, t.gaps_announced}) ? 0 : 2;
  });
  ASSERT_TRUE(child.ready());
  // About 2 KB each: 5 MB through the other process's 1 MB ring, read at 1 ms per event.
  constexpr std::uint32_t kEvents = 2500;
  for (std::uint32_t i = 0; i < kEvents; ++i) {
    ASSERT_EQ(write_indexed(h, 4, 0, i, 2000), ERROR_SUCCESS) << i;
  }
  EXPECT_EQ(stop(s), ERROR_SUCCESS);
  EXPECT_EQ(first.join(), ERROR_SUCCESS);
  const std::vector<std::uint64_t> got = child.reported();
  EXPECT_TRUE(child.exited_cleanly());
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0], ERROR_SUCCESS);
  EXPECT_EQ(got[1] + got[2], kEvents);  // the slow consumer: delivered + lost
  EXPECT_GT(got[2], 0u);
  EXPECT_EQ(got[3], 1u);
  const Tally t = tally(first.seen());
  EXPECT_EQ(t.delivered, kEvents);  // the reading process's consumer lost nothing
  EXPECT_EQ(t.lost, 0u);
  EXPECT_TRUE(t.gaps_announced);
}

// A consumer that opened the session before its stop and calls ProcessTrace only after it gets
// what the session buffered, then ERROR_SUCCESS (etwrt keeps a stopped session's records while
// a process that opened it is connected: docs/etwrt/internals.md, "Event path"). The hub used to
// start its thread when made, and a thread that ran before ProcessTrace joined found a stopped
// session and nobody listening, and finished: the consumer got nothing (2 in 150 runs of the
// installed TraceLogging sample under two CPU hogs). Several sessions give the race its chances.
TEST_F(EtwrtApi, ProcessTraceAfterTheStopGetsWhatTheSessionBuffered) {
  const auto [r, h] = recorded_provider();
  for (int round = 0; round < 20; ++round) {
    const std::string name = "late-" + std::to_string(round);
    const TRACEHANDLE s = start_enabled(name);
    RealtimeConsumer c(name);
    ASSERT_TRUE(c.opened());
    for (std::uint32_t i = 0; i < 3; ++i) ASSERT_EQ(write_indexed(h, 4, 0, i), ERROR_SUCCESS);
    ASSERT_EQ(stop(s), ERROR_SUCCESS);
    c.start();
    EXPECT_EQ(c.join(), ERROR_SUCCESS) << name;
    EXPECT_EQ(indices(c.seen()), (std::vector<std::uint32_t>{0, 1, 2})) << name;
  }
}

TEST_F(EtwrtApi, CloseTraceEndsProcessTrace) {
  const TRACEHANDLE s = start("close");
  RealtimeConsumer c("close");
  ASSERT_TRUE(c.opened());
  c.start();
  c.wait_for(1);
  EXPECT_EQ(c.close(), ULONG{ERROR_CTX_CLOSE_PENDING});
  EXPECT_EQ(c.join(), ERROR_SUCCESS);
  EVENT_TRACE_LOGFILEA bad{};
  EXPECT_EQ(OpenTraceA(&bad), INVALID_PROCESSTRACE_HANDLE);
  // A session not running opens (as on Windows); ProcessTrace then finds it not running.
  std::string missing = "no-such-session";
  bad.LoggerName = missing.data();
  bad.ProcessTraceMode = PROCESS_TRACE_MODE_REAL_TIME | PROCESS_TRACE_MODE_EVENT_RECORD;
  TRACEHANDLE pending = OpenTraceA(&bad);
  ASSERT_NE(pending, INVALID_PROCESSTRACE_HANDLE);
  EXPECT_EQ(ProcessTrace(&pending, 1, nullptr, nullptr), ULONG{ERROR_WMI_INSTANCE_NOT_FOUND});
  EXPECT_EQ(CloseTrace(pending), ULONG{ERROR_SUCCESS});
  TRACEHANDLE unknown = 12345;
  EXPECT_EQ(ProcessTrace(&unknown, 1, nullptr, nullptr), ULONG{ERROR_INVALID_HANDLE});
  EXPECT_EQ(stop(s), ERROR_SUCCESS);
}

// A child forked after its parent wrote keeps the parent's registration, but the parent's
// writers own the parent's buffers: the child's events go through writers of its own, and
// every event of both arrives once (neither overwrites the other's records).
TEST_F(EtwrtApi, AForkedChildWritesThroughWritersOfItsOwn) {
  const auto [r, h] = recorded_provider();
  const TRACEHANDLE s = start_enabled("forked");
  RealtimeConsumer c("forked");
  ASSERT_TRUE(c.opened());
  c.start();
  std::uint32_t i = 0;
  for (; i < 5; ++i) ASSERT_EQ(write_indexed(h, 4, 0x1, i), ERROR_SUCCESS);
  // The child's buffer is delivered after its exit, as a dead writer's.
  ForkedChild child([h](ForkedChild&) {
    int failed = 0;
    for (std::uint32_t j = 100; j < 120; ++j) failed |= write_indexed(h, 4, 0x1, j) != 0;
    return failed;
  });
  EXPECT_TRUE(child.exited_cleanly());
  for (; i < 25; ++i) ASSERT_EQ(write_indexed(h, 4, 0x1, i), ERROR_SUCCESS);
  c.wait_for(1 + 25 + 20);
  EXPECT_EQ(stop(s), ERROR_SUCCESS);
  EXPECT_EQ(c.join(), ERROR_SUCCESS);
  std::vector<std::uint32_t> got = indices(c.seen());
  std::sort(got.begin(), got.end());
  std::vector<std::uint32_t> want;
  for (std::uint32_t j = 0; j < 25; ++j) want.push_back(j);
  for (std::uint32_t j = 100; j < 120; ++j) want.push_back(j);
  EXPECT_EQ(got, want);
}

TEST_F(EtwrtApi, ProviderThatDiesKeepsWhatItCommitted) {
  const TRACEHANDLE s = start_enabled("dies");
  ForkedChild child([](ForkedChild& self) {
    REGHANDLE h = 0;
    if (EventRegister(&kProvider, nullptr, nullptr, &h) != ERROR_SUCCESS) return 2;
    bool ok = true;
    for (std::uint32_t i = 0; i < 25; ++i) ok = write_indexed(h, 4, 0, i) == ERROR_SUCCESS && ok;
    self.signal_ready(ok);
    ::pause();  // Killed with its buffer still open.
    return 0;
  });
  ASSERT_TRUE(child.ready());
  child.kill();
  RealtimeConsumer c("dies");
  c.start();
  c.wait_for(26);
  EXPECT_EQ(stop(s), ERROR_SUCCESS);
  c.join();
  std::vector<std::uint32_t> want(25);
  for (std::uint32_t i = 0; i < 25; ++i) want[i] = i;
  EXPECT_EQ(indices(c.seen()), want);
}

TEST_F(EtwrtApi, ProviderReattachesWhenTheBrokerComesBack) {
  const auto [r, h] = recorded_provider();
  ASSERT_EQ(EventSetInformation(h, static_cast<EVENT_INFO_CLASS>(EventProviderSetTraits),
                                std::vector<std::uint8_t>{4, 0, 'P', 0}.data(), 4),
            ERROR_SUCCESS);
  const pid_t first = broker_pid();
  ASSERT_GT(first, 0);
  stop_broker();
  // The client reconnects in the background, starting a new broker, and registers again.
  pid_t second = 0;
  for (int i = 0; i < 2000 && (second <= 0 || second == first); ++i) {
    std::this_thread::sleep_for(10ms);
    second = broker_pid();
  }
  ASSERT_GT(second, 0);
  ASSERT_NE(second, first);
  const TRACEHANDLE s = start("reattach");
  // Registration may land just after this enable; either way the callback comes.
  ASSERT_EQ(EnableTraceEx2(s, &kProvider, 1, 4, 0, 0, 10000, nullptr), ERROR_SUCCESS);
  const auto calls = r.wait_for(1);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].level, 4);
  EXPECT_EQ(stop(s), ERROR_SUCCESS);
}

// Several processes that find no broker start one each; one wins the lock, all reach it.
TEST_F(EtwrtApi, ConcurrentStartersShareOneBroker) {
  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  std::vector<pid_t> children;
  for (int i = 0; i < 4; ++i) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      char c;
      ::close(go[1]);
      if (::read(go[0], &c, 1) != 0) ::_exit(4);  // Released by the parent closing the pipe.
      REGHANDLE h = 0;
      if (EventRegister(&kProvider, nullptr, nullptr, &h) != ERROR_SUCCESS) ::_exit(2);
      Properties p;
      TRACEHANDLE s = 0;
      const std::string name = "starter-" + std::to_string(i);
      if (StartTraceA(&s, name.c_str(), p.get()) != ERROR_SUCCESS) ::_exit(3);
      ::_exit(0);
    }
    children.push_back(child);
  }
  ::close(go[0]);
  ::close(go[1]);
  for (pid_t child : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  // All four sessions live in the one broker that owns this home.
  Properties q;
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(QueryTraceA(0, ("starter-" + std::to_string(i)).c_str(), q.get()), ERROR_SUCCESS)
        << i;
  }
  // A broker that lost the race for the home's lock exits on its own, maybe not yet: it is
  // given 5 s to go (seen once under load, a loser still exiting when /proc was read).
  const auto count_brokers = [&] {
    int brokers = 0;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      std::ifstream cmdline(entry.path() / "cmdline");
      std::string text((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
      if (text.find("etwrt-broker") != std::string::npos && text.find(home_) != std::string::npos &&
          alive(std::stoi(entry.path().filename().string()))) {
        ++brokers;
      }
    }
    return brokers;
  };
  int brokers = count_brokers();
  for (int i = 0; i < 100 && brokers > 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    brokers = count_brokers();
  }
  EXPECT_EQ(brokers, 1);
}

}  // namespace
