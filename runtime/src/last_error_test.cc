// The thread's last error (errhandlingapi.h) and the entry points whose reference page says
// "call GetLastError" when they fail. Pages: MicrosoftDocs/sdk-api, sdk-api-src/content/
// errhandlingapi/nf-errhandlingapi-getlasterror.md, evntrace/nf-evntrace-opentracew.md,
// evntrace/nf-evntrace-gettraceloggerhandle.md, evntrace/nf-evntrace-gettraceenablelevel.md,
// evntrace/nf-evntrace-gettraceenableflags.md, winnls/nf-winnls-lcmapstringex.md.
#include "test_broker_home.h"

#include <windows.h>
#include <evntcons.h>
#include <evntrace.h>

#include <gtest/gtest.h>

#include <stdlib.h>

#include <thread>

namespace {

using etwrt::testing::PrivateBrokerHome;

// GetLastError's page: "The last-error code is maintained on a per-thread basis. Multiple
// threads do not overwrite each other's last-error code."
TEST(LastError, IsPerThreadAndStartsAtZero) {
  SetLastError(ERROR_ACCESS_DENIED);
  DWORD other = 12345;
  std::thread t([&] {
    other = GetLastError();
    SetLastError(ERROR_INVALID_HANDLE);
  });
  t.join();
  EXPECT_EQ(other, DWORD{ERROR_SUCCESS});
  EXPECT_EQ(GetLastError(), DWORD{ERROR_ACCESS_DENIED});
  SetLastError(ERROR_SUCCESS);
  EXPECT_EQ(GetLastError(), DWORD{ERROR_SUCCESS});
}

// OpenTrace's page: "If the function fails, you can use the GetLastError function to obtain
// extended error information": ERROR_INVALID_PARAMETER "The Logfile parameter is NULL";
// ERROR_BAD_PATHNAME "If you did not specify the LoggerName member of EVENT_TRACE_LOGFILE, you
// must specify a valid log file name"; ERROR_ACCESS_DENIED for a caller without the right.
TEST(LastError, OpenTraceFailuresSetIt) {
  PrivateBrokerHome home("etwrt-last-error");
  SetLastError(ERROR_SUCCESS);
  EXPECT_EQ(OpenTraceA(nullptr), INVALID_PROCESSTRACE_HANDLE);
  EXPECT_EQ(GetLastError(), DWORD{ERROR_INVALID_PARAMETER});
  SetLastError(ERROR_SUCCESS);
  EXPECT_EQ(OpenTraceW(nullptr), INVALID_PROCESSTRACE_HANDLE);
  EXPECT_EQ(GetLastError(), DWORD{ERROR_INVALID_PARAMETER});

  EVENT_TRACE_LOGFILEA neither{};
  neither.ProcessTraceMode = PROCESS_TRACE_MODE_REAL_TIME | PROCESS_TRACE_MODE_EVENT_RECORD;
  SetLastError(ERROR_SUCCESS);
  EXPECT_EQ(OpenTraceA(&neither), INVALID_PROCESSTRACE_HANDLE);
  EXPECT_EQ(GetLastError(), DWORD{ERROR_BAD_PATHNAME});
  EVENT_TRACE_LOGFILEW neither_w{};
  neither_w.ProcessTraceMode = PROCESS_TRACE_MODE_REAL_TIME | PROCESS_TRACE_MODE_EVENT_RECORD;
  SetLastError(ERROR_SUCCESS);
  EXPECT_EQ(OpenTraceW(&neither_w), INVALID_PROCESSTRACE_HANDLE);
  EXPECT_EQ(GetLastError(), DWORD{ERROR_BAD_PATHNAME});

  char name[] = "last-error-denied";
  EVENT_TRACE_LOGFILEA denied{};
  denied.LoggerName = name;
  denied.ProcessTraceMode = PROCESS_TRACE_MODE_REAL_TIME | PROCESS_TRACE_MODE_EVENT_RECORD;
  ::setenv("ETWRT_DENY_CONTROL", "1", 1);
  SetLastError(ERROR_SUCCESS);
  EXPECT_EQ(OpenTraceA(&denied), INVALID_PROCESSTRACE_HANDLE);
  EXPECT_EQ(GetLastError(), DWORD{ERROR_ACCESS_DENIED});
  ::unsetenv("ETWRT_DENY_CONTROL");

  // Success leaves it alone (a session not running yet still opens: see ConsumerOpen.*).
  SetLastError(ERROR_BUSY);
  const TRACEHANDLE handle = OpenTraceA(&denied);
  EXPECT_NE(handle, INVALID_PROCESSTRACE_HANDLE);
  EXPECT_EQ(GetLastError(), DWORD{ERROR_BUSY});
  EXPECT_EQ(CloseTrace(handle), ULONG{ERROR_SUCCESS});
}

// GetTraceLoggerHandle's page: "If the function fails, it returns INVALID_HANDLE_VALUE. To get
// extended error information, call the GetLastError function." GetTraceEnableLevel's and
// GetTraceEnableFlags' pages: set ERROR_SUCCESS first; a 0 result with another last error is a
// failure. The codes are etwrt's (the pages name none): docs/etwrt/conformance.md, "Choices".
TEST(LastError, ClassicLoggerHandleQueriesSetItOnFailure) {
  SetLastError(ERROR_SUCCESS);
  EXPECT_EQ(GetTraceLoggerHandle(nullptr), static_cast<TRACEHANDLE>(-1));
  EXPECT_EQ(GetLastError(), DWORD{ERROR_INVALID_PARAMETER});
  WNODE_HEADER unknown{};
  unknown.HistoricalContext = 0x1234567;
  SetLastError(ERROR_SUCCESS);
  EXPECT_EQ(GetTraceLoggerHandle(&unknown), static_cast<TRACEHANDLE>(-1));
  EXPECT_EQ(GetLastError(), DWORD{ERROR_INVALID_HANDLE});
  SetLastError(ERROR_SUCCESS);
  EXPECT_EQ(GetTraceEnableLevel(0x1234567), 0);
  EXPECT_EQ(GetLastError(), DWORD{ERROR_INVALID_HANDLE});
  SetLastError(ERROR_SUCCESS);
  EXPECT_EQ(GetTraceEnableFlags(0x1234567), 0u);
  EXPECT_EQ(GetLastError(), DWORD{ERROR_INVALID_HANDLE});
}

// LCMapStringEx's page: "returns 0 if it does not succeed. To get extended error information,
// the application can call GetLastError, which can return one of the following error codes:
// ERROR_INSUFFICIENT_BUFFER ... ERROR_INVALID_FLAGS ... ERROR_INVALID_PARAMETER".
TEST(LastError, LCMapStringExFailuresSetIt) {
  const WCHAR text[] = {u'a', u'b', 0};
  WCHAR out[3] = {};
  SetLastError(ERROR_SUCCESS);
  EXPECT_EQ(
      LCMapStringEx(LOCALE_NAME_INVARIANT, LCMAP_UPPERCASE, text, -1, out, 2, nullptr, nullptr, 0),
      0);
  EXPECT_EQ(GetLastError(), DWORD{ERROR_INSUFFICIENT_BUFFER});
  SetLastError(ERROR_SUCCESS);
  EXPECT_EQ(LCMapStringEx(LOCALE_NAME_INVARIANT, LCMAP_UPPERCASE | LCMAP_LOWERCASE, text, -1, out,
                          3, nullptr, nullptr, 0),
            0);
  EXPECT_EQ(GetLastError(), DWORD{ERROR_INVALID_FLAGS});
  SetLastError(ERROR_SUCCESS);
  EXPECT_EQ(LCMapStringEx(LOCALE_NAME_INVARIANT, LCMAP_UPPERCASE, nullptr, -1, out, 3, nullptr,
                          nullptr, 0),
            0);
  EXPECT_EQ(GetLastError(), DWORD{ERROR_INVALID_PARAMETER});
  SetLastError(ERROR_BUSY);
  EXPECT_EQ(
      LCMapStringEx(LOCALE_NAME_INVARIANT, LCMAP_UPPERCASE, text, -1, out, 3, nullptr, nullptr, 0),
      3);
  EXPECT_EQ(out[0], u'A');
  EXPECT_EQ(GetLastError(), DWORD{ERROR_BUSY});
}

}  // namespace
