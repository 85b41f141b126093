// libetwrt through its Win32 API against a real broker: aggregation, SourceIds, timeouts,
// limits, process lifetimes. Each test gets its own ETWRT_HOME (so ctest -j2 is safe) and
// stops its broker at the end.
#include <windows.h>
#include <evntprov.h>
#include <evntrace.h>

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;

const GUID kProvider = {0x1d3c5a11, 0x7b2e, 0x4c4f, {0x9a, 0x10, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77}};
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

// An EVENT_TRACE_PROPERTIES buffer with room for the session name.
struct Properties {
  Properties() : bytes(sizeof(EVENT_TRACE_PROPERTIES) + 1024) {
    get()->Wnode.BufferSize = static_cast<ULONG>(bytes.size());
    get()->Wnode.Flags = WNODE_FLAG_TRACED_GUID;
    get()->LoggerNameOffset = sizeof(EVENT_TRACE_PROPERTIES);
    get()->LogFileMode = EVENT_TRACE_REAL_TIME_MODE;
  }
  EVENT_TRACE_PROPERTIES* get() { return reinterpret_cast<EVENT_TRACE_PROPERTIES*>(bytes.data()); }
  std::string logger_name() { return bytes.data() + get()->LoggerNameOffset; }
  std::vector<char> bytes;
};

TRACEHANDLE start(const std::string& name, const GUID* guid = nullptr) {
  Properties p;
  if (guid != nullptr) p.get()->Wnode.Guid = *guid;
  TRACEHANDLE h = 0;
  EXPECT_EQ(StartTraceA(&h, name.c_str(), p.get()), ERROR_SUCCESS) << name;
  return h;
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
  Recorder& r = new_recorder();
  const REGHANDLE h = register_provider(r);
  EXPECT_FALSE(EventProviderEnabled(h, 0, 0));
  const TRACEHANDLE s1 = start("agg-1");
  const TRACEHANDLE s2 = start("agg-2");
  const TRACEHANDLE s3 = start("agg-3");
  ASSERT_EQ(EnableTraceEx2(s1, &kProvider, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 2, 0x1, 0x1,
                           10000, nullptr),
            ERROR_SUCCESS);
  ASSERT_EQ(EnableTraceEx2(s2, &kProvider, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 5, 0x6, 0x3,
                           10000, nullptr),
            ERROR_SUCCESS);
  ASSERT_EQ(EnableTraceEx2(s3, &kProvider, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 3, 0x8, 0x7,
                           10000, nullptr),
            ERROR_SUCCESS);
  auto calls = r.wait_for(3);
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].level, 2);
  EXPECT_EQ(calls[1].level, 5);
  EXPECT_EQ(calls[1].any, 0x7u);
  EXPECT_EQ(calls[1].all, 0x1u);
  EXPECT_EQ(calls[2].is_enabled, 1u);
  EXPECT_EQ(calls[2].level, 5);
  EXPECT_EQ(calls[2].any, 0xfu);
  EXPECT_EQ(calls[2].all, 0x1u);
  // Per-session acceptance: level 5 needs keywords s2 accepts (any 0x6, all 0x3).
  EXPECT_TRUE(EventProviderEnabled(h, 5, 0x3));
  EXPECT_FALSE(EventProviderEnabled(h, 5, 0x1));
  EXPECT_TRUE(EventProviderEnabled(h, 2, 0x1));
  EXPECT_FALSE(EventProviderEnabled(h, 6, 0x3));

  ASSERT_EQ(EnableTraceEx2(s2, &kProvider, EVENT_CONTROL_CODE_DISABLE_PROVIDER, 0, 0, 0, 10000,
                           nullptr),
            ERROR_SUCCESS);
  calls = r.wait_for(4);
  EXPECT_EQ(calls[3].is_enabled, 1u);  // Stays enabled while a session remains.
  EXPECT_EQ(calls[3].level, 3);
  EXPECT_EQ(calls[3].any, 0x9u);
  EXPECT_EQ(calls[3].all, 0x1u);
  EXPECT_FALSE(EventProviderEnabled(h, 5, 0x3));

  EXPECT_EQ(stop(s1), ERROR_SUCCESS);
  calls = r.wait_for(5);
  EXPECT_TRUE(calls[4].source == GUID_NULL);  // Session stop: SourceId GUID_NULL.
  EXPECT_EQ(calls[4].is_enabled, 1u);
  EXPECT_EQ(calls[4].level, 3);
  EXPECT_EQ(calls[4].any, 0x8u);
  EXPECT_EQ(calls[4].all, 0x7u);

  EXPECT_EQ(stop(s3), ERROR_SUCCESS);
  calls = r.wait_for(6);
  EXPECT_EQ(calls[5].is_enabled, 0u);
  EXPECT_EQ(calls[5].level, 0);
  EXPECT_EQ(calls[5].any, 0u);
  EXPECT_EQ(calls[5].all, 0u);
  EXPECT_FALSE(EventProviderEnabled(h, 0, 0));
  EXPECT_EQ(stop(s2), ERROR_SUCCESS);
}

TEST_F(EtwrtApi, StateIsUpdatedBeforeTheCallbackAndUpdateRecomputes) {
  Recorder& r = new_recorder();
  const REGHANDLE h = register_provider(r);
  const TRACEHANDLE s = start("update");
  ASSERT_EQ(EnableTraceEx2(s, &kProvider, 1, 2, 0, 0, 10000, nullptr), ERROR_SUCCESS);
  EXPECT_TRUE(EventProviderEnabled(h, 2, 0));
  ASSERT_EQ(EnableTraceEx2(s, &kProvider, 1, 4, 0, 0, 10000, nullptr), ERROR_SUCCESS);
  const auto calls = r.wait_for(2);
  EXPECT_EQ(calls[1].level, 4);  // The same session re-enabling replaces its own entry.
  EXPECT_TRUE(EventProviderEnabled(h, 4, 0));
  EXPECT_FALSE(EventProviderEnabled(h, 5, 0));
  EXPECT_EQ(stop(s), ERROR_SUCCESS);
}

TEST_F(EtwrtApi, SourceIds) {
  Recorder& r = new_recorder();
  register_provider(r);
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
  Recorder& r = new_recorder();
  register_provider(r);
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
  Recorder& r = new_recorder();
  const REGHANDLE h = register_provider(r);
  ASSERT_EQ(r.count(), 1u);  // Before EventRegister returned.
  const Call c = r.wait_for(1)[0];
  EXPECT_EQ(c.thread, std::this_thread::get_id());
  EXPECT_TRUE(c.source == GUID_NULL);
  EXPECT_FALSE(c.has_filter);
  EXPECT_EQ(c.is_enabled, 1u);
  EXPECT_EQ(c.level, 4);
  EXPECT_EQ(c.any, 0x3u);
  EXPECT_EQ(c.all, 0x1u);
  EXPECT_TRUE(EventProviderEnabled(h, 4, 0x1));
  EXPECT_EQ(stop(s), ERROR_SUCCESS);
}

TEST_F(EtwrtApi, CaptureStateLeavesTheAggregatesAlone) {
  Recorder& r = new_recorder();
  const REGHANDLE h = register_provider(r);
  const TRACEHANDLE s = start("capture");
  ASSERT_EQ(EnableTraceEx2(s, &kProvider, 1, 2, 0x1, 0, 10000, nullptr), ERROR_SUCCESS);
  ENABLE_TRACE_PARAMETERS p{};
  p.Version = ENABLE_TRACE_PARAMETERS_VERSION;
  p.SourceId = kOther;
  ASSERT_EQ(EnableTraceEx2(s, &kProvider, EVENT_CONTROL_CODE_CAPTURE_STATE, 5, 0xf0, 0x10, 10000,
                           &p),
            ERROR_SUCCESS);
  const auto calls = r.wait_for(2);
  EXPECT_EQ(calls[1].is_enabled, 2u);
  EXPECT_EQ(calls[1].level, 5);
  EXPECT_EQ(calls[1].any, 0xf0u);
  EXPECT_EQ(calls[1].all, 0x10u);
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
  Recorder& r = new_recorder();
  register_provider(r);
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
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    REGHANDLE h = 0;
    const char ok = EventRegister(&kProvider, nullptr, nullptr, &h) == ERROR_SUCCESS ? 'y' : 'n';
    if (::write(ready[1], &ok, 1) != 1) ::_exit(2);
    ::pause();
    ::_exit(0);
  }
  char ok = 0;
  ASSERT_EQ(::read(ready[0], &ok, 1), 1);
  ASSERT_EQ(ok, 'y');
  // The child's callback thread acknowledges, so a waiting enable succeeds.
  EXPECT_EQ(EnableTraceEx2(s, &kProvider, 1, 1, 0, 0, 20000, nullptr), ERROR_SUCCESS);
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  // Its registration is gone: had it lingered, this waiting enable would time out.
  Recorder& r = new_recorder();
  register_provider(r, kOther);
  EXPECT_EQ(EnableTraceEx2(s, &kProvider, 1, 2, 0, 0, 20000, nullptr), ERROR_SUCCESS);
  EXPECT_EQ(stop(s), ERROR_SUCCESS);
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST_F(EtwrtApi, SessionOutlivesItsControllerProcess) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    Properties p;
    TRACEHANDLE h = 0;
    if (StartTraceA(&h, "persist", p.get()) != ERROR_SUCCESS) ::_exit(2);
    if (EnableTraceEx2(h, &kProvider, 1, 3, 0x5, 0, 0, nullptr) != ERROR_SUCCESS) ::_exit(3);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  Recorder& r = new_recorder();
  const REGHANDLE h = register_provider(r);
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
  Recorder& r = new_recorder();
  const REGHANDLE h = register_provider(r);
  std::vector<std::uint8_t> blob = {0, 0, 'P', 0, 3, 0, 130};
  blob[0] = static_cast<std::uint8_t>(blob.size());
  std::vector<std::uint8_t> bad = blob;
  bad[0] += 1;
  EXPECT_EQ(EventSetInformation(h, EventProviderSetTraits, bad.data(),
                                static_cast<ULONG>(bad.size())),
            ERROR_INVALID_PARAMETER);
  // A rejected blob does not use up the one allowed attempt.
  EXPECT_EQ(EventSetInformation(h, EventProviderSetTraits, blob.data(),
                                static_cast<ULONG>(blob.size())),
            ERROR_SUCCESS);
  EXPECT_EQ(EventSetInformation(h, EventProviderSetTraits, blob.data(),
                                static_cast<ULONG>(blob.size())),
            ERROR_ALREADY_EXISTS);
  EXPECT_EQ(EventSetInformation(h, static_cast<EVENT_INFO_CLASS>(42), blob.data(),
                                static_cast<ULONG>(blob.size())),
            ERROR_NOT_SUPPORTED);
  // Once per registration: a second registration of the same provider may set its own.
  Recorder& r2 = new_recorder();
  const REGHANDLE h2 = register_provider(r2);
  EXPECT_EQ(EventSetInformation(h2, EventProviderSetTraits, blob.data(),
                                static_cast<ULONG>(blob.size())),
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
  Recorder& r = new_recorder();
  register_provider(r);
  const TRACEHANDLE s1 = start("filter-1");
  const TRACEHANDLE s2 = start("filter-2");
  const auto f1 = schematized(1, 0x11);
  const auto f2 = schematized(2, 0x22);
  ULONG pid = static_cast<ULONG>(::getpid());
  EVENT_FILTER_DESCRIPTOR d1[2] = {
      {reinterpret_cast<ULONGLONG>(f1.data()), static_cast<ULONG>(f1.size()),
       EVENT_FILTER_TYPE_SCHEMATIZED},
      {reinterpret_cast<ULONGLONG>(&pid), sizeof pid, EVENT_FILTER_TYPE_PID}};
  EVENT_FILTER_DESCRIPTOR d2{reinterpret_cast<ULONGLONG>(f2.data()),
                             static_cast<ULONG>(f2.size()), EVENT_FILTER_TYPE_SCHEMATIZED};
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
  Recorder& r = new_recorder();
  register_provider(r);
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
  Recorder& r = new_recorder();
  register_provider(r);
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
  ASSERT_EQ(EnableTraceEx2(s1, &kProvider, EVENT_CONTROL_CODE_DISABLE_PROVIDER, 0, 0, 0, 10000,
                           nullptr),
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
  Recorder& r = new_recorder();
  register_provider(r);
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

TEST_F(EtwrtApi, EventWriteDoesNotPretendToDeliver) {
  Recorder& r = new_recorder();
  const REGHANDLE h = register_provider(r);
  EVENT_DESCRIPTOR d;
  EventDescCreate(&d, 1, 0, 0, 4, 0, 0, 0x1);
  EXPECT_EQ(EventWrite(h, &d, 0, nullptr), ERROR_SUCCESS);  // Nobody listens: dropped.
  EXPECT_FALSE(EventEnabled(h, &d));
  const TRACEHANDLE s = start("write");
  ASSERT_EQ(EnableTraceEx2(s, &kProvider, 1, 5, 0, 0, 10000, nullptr), ERROR_SUCCESS);
  EXPECT_TRUE(EventEnabled(h, &d));
  EXPECT_EQ(EventWrite(h, &d, 0, nullptr), ERROR_NOT_SUPPORTED);
  EXPECT_EQ(stop(s), ERROR_SUCCESS);
}

TEST_F(EtwrtApi, ProviderReattachesWhenTheBrokerComesBack) {
  Recorder& r = new_recorder();
  const REGHANDLE h = register_provider(r);
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
  int brokers = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::ifstream cmdline(entry.path() / "cmdline");
    std::string text((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
    if (text.find("etwrt-broker") != std::string::npos && text.find(home_) != std::string::npos &&
        alive(std::stoi(entry.path().filename().string()))) {
      ++brokers;
    }
  }
  EXPECT_EQ(brokers, 1);
}

}  // namespace
