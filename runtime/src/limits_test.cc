// Windows' operational limits as etwrt simulates them, against real brokers: the system-wide
// session limit (ETWRT_MAX_SESSIONS, read by the broker), a caller without the right to control
// sessions (ETWRT_DENY_CONTROL, read by each process's library), and QueryAllTraces.
#include "test_broker_home.h"
#include "test_properties.h"

#include <windows.h>
#include <evntprov.h>
#include <evntrace.h>

#include <gtest/gtest.h>

#include <stdlib.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

using etwrt::testing::PrivateBrokerHome;
using etwrt::testing::TraceProperties;

const GUID kProvider = {
    0x3c1e2a90, 0x6d1b, 0x4e0f, {0x9a, 0x11, 0x52, 0x73, 0x04, 0xe5, 0x16, 0x27}};

ULONG start(const std::string& name, TRACEHANDLE* handle = nullptr, ULONG mode = 0) {
  TraceProperties p;
  p.get()->BufferSize = 4;  // Small pools: some tests start 64 sessions.
  if (mode != 0) p.get()->LogFileMode = mode;
  TRACEHANDLE h = 0;
  const ULONG status = StartTraceA(&h, name.c_str(), p.get());
  if (handle != nullptr) *handle = h;
  return status;
}

ULONG stop(const std::string& name) {
  TraceProperties p;
  return ControlTraceA(0, name.c_str(), p.get(), EVENT_TRACE_CONTROL_STOP);
}

// An environment variable set for one test (the broker a test's first call starts inherits it).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

// QueryAllTracesA over `count` structures with room for names; the names it wrote.
struct AllTraces {
  explicit AllTraces(ULONG count) : buffers(count) {
    for (TraceProperties& b : buffers) pointers.push_back(b.get());
  }
  ULONG query() {
    return QueryAllTracesA(pointers.data(), static_cast<ULONG>(pointers.size()), &logger_count);
  }
  std::vector<std::string> names(ULONG n) {
    std::vector<std::string> out;
    for (ULONG i = 0; i < n; ++i) out.push_back(buffers[i].logger_name());
    return out;
  }
  std::vector<TraceProperties> buffers;
  std::vector<PEVENT_TRACE_PROPERTIES> pointers;
  ULONG logger_count = 12345;
};

TEST(SessionLimit, StartBeyondEtwrtMaxSessionsIsNoSystemResourcesUntilOneStops) {
  ScopedEnv limit("ETWRT_MAX_SESSIONS", "3");
  PrivateBrokerHome home("etwrt-limits");
  for (const char* name : {"limit-a", "limit-b", "limit-c"}) ASSERT_EQ(start(name), ERROR_SUCCESS);
  EXPECT_EQ(start("limit-d"), ERROR_NO_SYSTEM_RESOURCES);
  ASSERT_EQ(stop("limit-b"), ERROR_SUCCESS);
  EXPECT_EQ(start("limit-d"), ERROR_SUCCESS);
  EXPECT_EQ(start("limit-e"), ERROR_NO_SYSTEM_RESOURCES);
}

TEST(SessionLimit, TheDefaultIs64) {
  PrivateBrokerHome home("etwrt-limits");
  for (int i = 0; i < 64; ++i) ASSERT_EQ(start("many-" + std::to_string(i)), ERROR_SUCCESS) << i;
  EXPECT_EQ(start("many-64"), ERROR_NO_SYSTEM_RESOURCES);
}

TEST(EnumerateSessions, ListsEverySessionButPrivateOnesWithTheirProperties) {
  PrivateBrokerHome home("etwrt-limits");
  ASSERT_EQ(start("query-one"), ERROR_SUCCESS);
  ASSERT_EQ(
      start("query-private", nullptr, EVENT_TRACE_REAL_TIME_MODE | EVENT_TRACE_PRIVATE_LOGGER_MODE),
      ERROR_SUCCESS);
  TRACEHANDLE two = 0;
  ASSERT_EQ(start("query-two", &two), ERROR_SUCCESS);
  AllTraces all(64);
  all.pointers[2]->BufferSize = 0xABCD;
  ASSERT_EQ(all.query(), ERROR_SUCCESS);
  ASSERT_EQ(all.logger_count, 2u);
  EXPECT_EQ(all.names(2), (std::vector<std::string>{"query-one", "query-two"}));
  const EVENT_TRACE_PROPERTIES& p = *all.pointers[1];
  EXPECT_EQ(p.Wnode.HistoricalContext, two);
  EXPECT_EQ(p.LogFileMode, ULONG{EVENT_TRACE_REAL_TIME_MODE});
  EXPECT_GT(p.BufferSize, 0u);
  EXPECT_EQ(all.pointers[2]->BufferSize, 0xABCDu) << "an entry past LoggerCount is left as it was";
  EXPECT_EQ(all.buffers[2].logger_name(), "");
}

TEST(EnumerateSessions, ATooSmallArrayIsFilledAndSaysMoreData) {
  PrivateBrokerHome home("etwrt-limits");
  for (const char* name : {"more-a", "more-b", "more-c"}) ASSERT_EQ(start(name), ERROR_SUCCESS);
  AllTraces two(2);
  EXPECT_EQ(two.query(), ERROR_MORE_DATA);
  EXPECT_EQ(two.logger_count, 3u);  // "SessionCount is greater than PropertyArrayCount"
  EXPECT_EQ(two.names(2), (std::vector<std::string>{"more-a", "more-b"}));
}

// QueryAllTraces' page: each structure receives "the properties and statistics" of a session
// as ControlTrace(QUERY) does, the log file name too. The structures in the documentation
// sample's shape: the session name's room right after the fixed part, the log file name's
// after it (LoggerNameOffset, LogFileNameOffset set by the caller).
struct SampleShapedProperties {
  static constexpr ULONG kNameRoom = 1024;
  SampleShapedProperties() : bytes(sizeof(EVENT_TRACE_PROPERTIES) + 2 * kNameRoom) {
    get()->Wnode.BufferSize = static_cast<ULONG>(bytes.size());
    get()->LoggerNameOffset = sizeof(EVENT_TRACE_PROPERTIES);
    get()->LogFileNameOffset = sizeof(EVENT_TRACE_PROPERTIES) + kNameRoom;
  }
  EVENT_TRACE_PROPERTIES* get() { return reinterpret_cast<EVENT_TRACE_PROPERTIES*>(bytes.data()); }
  std::string at(ULONG offset) const { return bytes.data() + offset; }
  std::u16string wide_at(ULONG offset) const {
    std::u16string text;
    for (ULONG at = offset; at + 1 < bytes.size(); at += 2) {
      char16_t unit;
      std::memcpy(&unit, bytes.data() + at, 2);
      if (unit == 0) break;
      text.push_back(unit);
    }
    return text;
  }
  std::vector<char> bytes;
};

TEST(EnumerateSessions, GivesTheLogFileNameAsControlTraceQueryDoes) {
  PrivateBrokerHome home("etwrt-limits");
  const std::string file = home.dir() + "/query.etl";
  TraceProperties start_with_file(2048);
  EVENT_TRACE_PROPERTIES* sp = start_with_file.get();
  sp->LogFileMode = EVENT_TRACE_REAL_TIME_MODE | EVENT_TRACE_FILE_MODE_SEQUENTIAL;
  sp->LogFileNameOffset = sizeof(EVENT_TRACE_PROPERTIES) + 1024;
  std::memcpy(start_with_file.bytes.data() + sp->LogFileNameOffset, file.c_str(), file.size() + 1);
  TRACEHANDLE handle = 0;
  ASSERT_EQ(StartTraceA(&handle, "query-file", sp), ERROR_SUCCESS);
  ASSERT_EQ(start("query-no-file"), ERROR_SUCCESS);

  std::vector<SampleShapedProperties> a(2);
  EVENT_TRACE_PROPERTIES* pa[2] = {a[0].get(), a[1].get()};
  ULONG count = 0;
  ASSERT_EQ(QueryAllTracesA(pa, 2, &count), ERROR_SUCCESS);
  ASSERT_EQ(count, 2u);
  EXPECT_EQ(a[0].at(pa[0]->LoggerNameOffset), "query-file");
  EXPECT_EQ(a[0].at(pa[0]->LogFileNameOffset), file);
  EXPECT_EQ(a[1].at(pa[1]->LoggerNameOffset), "query-no-file");
  EXPECT_EQ(a[1].at(pa[1]->LogFileNameOffset), "") << "no log file: an empty name";

  // ControlTrace(QUERY) gives the same name.
  SampleShapedProperties q;
  ASSERT_EQ(ControlTraceA(handle, nullptr, q.get(), EVENT_TRACE_CONTROL_QUERY), ERROR_SUCCESS);
  EXPECT_EQ(q.at(q.get()->LogFileNameOffset), file);

  std::vector<SampleShapedProperties> w(2);
  EVENT_TRACE_PROPERTIES* pw[2] = {w[0].get(), w[1].get()};
  ASSERT_EQ(QueryAllTracesW(pw, 2, &count), ERROR_SUCCESS);
  EXPECT_EQ(w[0].wide_at(pw[0]->LoggerNameOffset), u"query-file");
  EXPECT_EQ(w[0].wide_at(pw[0]->LogFileNameOffset),
            std::u16string(file.begin(), file.end()));  // The path is ASCII.
  EXPECT_EQ(stop("query-file"), ERROR_SUCCESS);
}

// The EVENT_TRACE_PROPERTIES page's EnableFlags list, as system-logger controllers (tracelog,
// xperf-style tools) pass them.
TEST(ControllerNames, KernelEnableFlagsHaveThePagesValues) {
  EXPECT_EQ(EVENT_TRACE_FLAG_PROCESS, 0x00000001);
  EXPECT_EQ(EVENT_TRACE_FLAG_THREAD, 0x00000002);
  EXPECT_EQ(EVENT_TRACE_FLAG_IMAGE_LOAD, 0x00000004);
  EXPECT_EQ(EVENT_TRACE_FLAG_CSWITCH, 0x00000010);
  EXPECT_EQ(EVENT_TRACE_FLAG_DISK_IO, 0x00000100);
  EXPECT_EQ(EVENT_TRACE_FLAG_MEMORY_HARD_FAULTS, 0x00002000);
  EXPECT_EQ(EVENT_TRACE_FLAG_NETWORK_TCPIP, 0x00010000);
  EXPECT_EQ(EVENT_TRACE_FLAG_REGISTRY, 0x00020000);
  EXPECT_EQ(EVENT_TRACE_FLAG_ALPC, 0x00100000);
  EXPECT_EQ(EVENT_TRACE_FLAG_DRIVER, 0x00800000);
  EXPECT_EQ(EVENT_TRACE_FLAG_PROFILE, 0x01000000);
  EXPECT_EQ(EVENT_TRACE_FLAG_FILE_IO_INIT, 0x04000000);
  EXPECT_EQ(EVENT_TRACE_FLAG_NO_SYSCONFIG, 0x10000000);
}

TEST(EnumerateSessions, BadArgumentsAreRefusedBeforeAnythingIsWritten) {
  PrivateBrokerHome home("etwrt-limits");
  ASSERT_EQ(start("args-a"), ERROR_SUCCESS);
  AllTraces all(2);
  ULONG count = 7;
  EXPECT_EQ(QueryAllTracesA(nullptr, 2, &count), ERROR_INVALID_PARAMETER);
  EXPECT_EQ(QueryAllTracesA(all.pointers.data(), 0, &count), ERROR_INVALID_PARAMETER);
  EXPECT_EQ(QueryAllTracesA(all.pointers.data(), 2, nullptr), ERROR_INVALID_PARAMETER);
  EXPECT_EQ(count, 7u);
  all.pointers[1] = nullptr;
  EXPECT_EQ(all.query(), ERROR_INVALID_PARAMETER);
  all.pointers[1] = all.buffers[1].get();
  all.buffers[1].get()->Wnode.BufferSize = sizeof(EVENT_TRACE_PROPERTIES) - 1;
  EXPECT_EQ(all.query(), ERROR_BAD_LENGTH);
  EXPECT_EQ(all.buffers[0].logger_name(), "") << "nothing written on a refusal";
}

TEST(EnumerateSessions, TheWideFormWritesTheNamesInUtf16) {
  PrivateBrokerHome home("etwrt-limits");
  ASSERT_EQ(start("wide-\xc3\xa9t\xc3\xa9"), ERROR_SUCCESS);  // "wide-été"
  AllTraces all(4);
  ULONG count = 0;
  ASSERT_EQ(QueryAllTracesW(all.pointers.data(), 4, &count), ERROR_SUCCESS);
  ASSERT_EQ(count, 1u);
  const EVENT_TRACE_PROPERTIES* p = all.pointers[0];
  std::u16string name;
  const auto* base = reinterpret_cast<const unsigned char*>(p) + p->LoggerNameOffset;
  for (std::size_t at = 0;; at += 2) {
    char16_t unit;
    std::memcpy(&unit, base + at, 2);
    if (unit == 0) break;
    name.push_back(unit);
  }
  EXPECT_EQ(name, u"wide-\u00e9t\u00e9");
}

// ETWRT_DENY_CONTROL=1: the process is a caller without the right (StartTrace, ControlTrace,
// EnableTraceEx2, OpenTrace: ERROR_ACCESS_DENIED); QueryAllTraces shows it no session;
// providers register and write as before; argument checks still come first.
TEST(DenyControl, ControlCallsAreDeniedAndProvidersAreNot) {
  PrivateBrokerHome home("etwrt-limits");
  TRACEHANDLE handle = 0;
  ASSERT_EQ(start("deny-running", &handle), ERROR_SUCCESS);
  {
    ScopedEnv deny("ETWRT_DENY_CONTROL", "1");
    EXPECT_EQ(start("deny-new"), ERROR_ACCESS_DENIED);
    TraceProperties p;
    EXPECT_EQ(StartTraceA(nullptr, "deny-new", p.get()), ERROR_INVALID_PARAMETER)
        << "the entry point's own checks come before the right";
    EXPECT_EQ(ControlTraceA(handle, nullptr, p.get(), EVENT_TRACE_CONTROL_QUERY),
              ERROR_ACCESS_DENIED);
    EXPECT_EQ(stop("deny-running"), ERROR_ACCESS_DENIED);
    EXPECT_EQ(
        EnableTraceEx2(handle, &kProvider, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 5, 0, 0, 0, nullptr),
        ERROR_ACCESS_DENIED);
    EVENT_TRACE_LOGFILEA logfile{};
    logfile.LoggerName = const_cast<char*>("deny-running");
    logfile.ProcessTraceMode = PROCESS_TRACE_MODE_REAL_TIME | PROCESS_TRACE_MODE_EVENT_RECORD;
    EXPECT_EQ(OpenTraceA(&logfile), INVALID_PROCESSTRACE_HANDLE);
    AllTraces all(4);
    EXPECT_EQ(all.query(), ERROR_SUCCESS);
    EXPECT_EQ(all.logger_count, 0u);
    REGHANDLE provider = 0;
    ASSERT_EQ(EventRegister(&kProvider, nullptr, nullptr, &provider), ERROR_SUCCESS);
    EVENT_DESCRIPTOR descriptor{};
    EXPECT_EQ(EventWrite(provider, &descriptor, 0, nullptr), ERROR_SUCCESS);
    EXPECT_EQ(EventUnregister(provider), ERROR_SUCCESS);
  }
  // The right back: the session was never touched.
  TraceProperties p;
  EXPECT_EQ(ControlTraceA(handle, nullptr, p.get(), EVENT_TRACE_CONTROL_QUERY), ERROR_SUCCESS);
  EXPECT_EQ(stop("deny-running"), ERROR_SUCCESS);
}

TEST(DenyControl, AValueOtherThan0Or1DeniesToo) {
  PrivateBrokerHome home("etwrt-limits");
  ScopedEnv deny("ETWRT_DENY_CONTROL", "yes");
  EXPECT_EQ(start("deny-odd"), ERROR_ACCESS_DENIED);
  ScopedEnv allow("ETWRT_DENY_CONTROL", "0");
  EXPECT_EQ(start("deny-odd"), ERROR_SUCCESS);
}

}  // namespace
