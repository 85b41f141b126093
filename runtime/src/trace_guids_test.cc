// EnumerateTraceGuidsEx as the documentation's sample calls it (MicrosoftDocs/sdk-api,
// sdk-api-src/content/evntrace/nf-evntrace-enumeratetraceguidsex.md): the size first, then
// the GUID list; for each GUID its TRACE_GUID_INFO, instances and the sessions enabling them.
#include "test_broker_home.h"
#include "test_properties.h"

#include <windows.h>
#include <evntprov.h>
#include <evntrace.h>

#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace {

using etwrt::testing::PrivateBrokerHome;
using etwrt::testing::TraceProperties;

const GUID kProvider = {
    0x7d2c4e10, 0x5a6b, 0x4c7d, {0x8e, 0x9f, 0xa0, 0xb1, 0xc2, 0xd3, 0xe4, 0xf5}};
const GUID kUnregistered = {
    0x7d2c4e11, 0x5a6b, 0x4c7d, {0x8e, 0x9f, 0xa0, 0xb1, 0xc2, 0xd3, 0xe4, 0xf5}};

TRACEHANDLE start(const std::string& name) {
  TraceProperties p;
  p.get()->BufferSize = 4;
  TRACEHANDLE h = 0;
  EXPECT_EQ(StartTraceA(&h, name.c_str(), p.get()), ERROR_SUCCESS);
  return h;
}

// The sample's loop: ask, grow the buffer to the size returned, ask again.
ULONG query(TRACE_QUERY_INFO_CLASS what, const GUID* guid, std::vector<unsigned char>& out) {
  ULONG needed = 0;
  PVOID in = const_cast<GUID*>(guid);
  const ULONG in_size = guid != nullptr ? sizeof(GUID) : 0;
  ULONG status = EnumerateTraceGuidsEx(what, in, in_size, nullptr, 0, &needed);
  while (status == ERROR_INSUFFICIENT_BUFFER) {
    out.assign(needed, 0);
    status = EnumerateTraceGuidsEx(what, in, in_size, out.data(), needed, &needed);
  }
  if (status == ERROR_SUCCESS) out.resize(needed);
  return status;
}

bool lists(const std::vector<unsigned char>& list, const GUID& g) {
  for (std::size_t at = 0; at + sizeof(GUID) <= list.size(); at += sizeof(GUID)) {
    if (std::memcmp(list.data() + at, &g, sizeof g) == 0) return true;
  }
  return false;
}

TEST(EnumerateTraceGuidsEx, ListsProvidersAndWhichSessionsEnableThemHow) {
  PrivateBrokerHome home("etwrt-trace-guids");
  REGHANDLE provider = 0;
  ASSERT_EQ(EventRegister(&kProvider, nullptr, nullptr, &provider), ERROR_SUCCESS);
  const TRACEHANDLE a = start("guids-a");
  const TRACEHANDLE b = start("guids-b");
  ASSERT_EQ(
      EnableTraceEx2(a, &kProvider, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 4, 0x10, 0, 0, nullptr),
      ERROR_SUCCESS);
  ENABLE_TRACE_PARAMETERS parameters{};
  parameters.Version = ENABLE_TRACE_PARAMETERS_VERSION_2;
  parameters.EnableProperty = EVENT_ENABLE_PROPERTY_SID;
  ASSERT_EQ(EnableTraceEx2(b, &kProvider, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 2, 0x3, 0x1, 0,
                           &parameters),
            ERROR_SUCCESS);

  std::vector<unsigned char> list;
  ASSERT_EQ(query(TraceGuidQueryList, nullptr, list), ERROR_SUCCESS);
  EXPECT_TRUE(lists(list, kProvider));
  EXPECT_EQ(list.size() % sizeof(GUID), 0u);

  std::vector<unsigned char> info;
  ASSERT_EQ(query(TraceGuidQueryInfo, &kProvider, info), ERROR_SUCCESS);
  ASSERT_GE(info.size(), sizeof(TRACE_GUID_INFO) + sizeof(TRACE_PROVIDER_INSTANCE_INFO));
  const auto* head = reinterpret_cast<const TRACE_GUID_INFO*>(info.data());
  ASSERT_EQ(head->InstanceCount, 1u);
  const auto* instance =
      reinterpret_cast<const TRACE_PROVIDER_INSTANCE_INFO*>(info.data() + sizeof *head);
  EXPECT_EQ(instance->Pid, static_cast<ULONG>(::getpid()));
  EXPECT_EQ(instance->Flags, 0u) << "EventRegister: neither LEGACY nor PRE_ENABLE";
  ASSERT_EQ(instance->EnableCount, 2u);
  EXPECT_EQ(instance->NextOffset, sizeof *instance + 2 * sizeof(TRACE_ENABLE_INFO));
  ASSERT_EQ(info.size(), sizeof *head + instance->NextOffset);
  std::vector<TRACE_ENABLE_INFO> enables(2);
  std::memcpy(enables.data(), instance + 1, 2 * sizeof(TRACE_ENABLE_INFO));
  std::sort(enables.begin(), enables.end(),
            [](const auto& x, const auto& y) { return x.LoggerId < y.LoggerId; });
  EXPECT_EQ(enables[0].LoggerId, static_cast<USHORT>(a & 0xFFFF));
  EXPECT_EQ(enables[0].IsEnabled, 1u);
  EXPECT_EQ(enables[0].Level, 4);
  EXPECT_EQ(enables[0].MatchAnyKeyword, 0x10u);
  EXPECT_EQ(enables[0].EnableProperty, 0u);
  EXPECT_EQ(enables[1].LoggerId, static_cast<USHORT>(b & 0xFFFF));
  EXPECT_EQ(enables[1].Level, 2);
  EXPECT_EQ(enables[1].MatchAnyKeyword, 0x3u);
  EXPECT_EQ(enables[1].MatchAllKeyword, 0x1u);
  EXPECT_EQ(enables[1].EnableProperty, ULONG{EVENT_ENABLE_PROPERTY_SID});

  // Enabled before anyone registered it: one instance, PRE_ENABLE, no process.
  ASSERT_EQ(
      EnableTraceEx2(a, &kUnregistered, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 5, 0, 0, 0, nullptr),
      ERROR_SUCCESS);
  ASSERT_EQ(query(TraceGuidQueryInfo, &kUnregistered, info), ERROR_SUCCESS);
  instance = reinterpret_cast<const TRACE_PROVIDER_INSTANCE_INFO*>(info.data() + sizeof *head);
  EXPECT_EQ(reinterpret_cast<const TRACE_GUID_INFO*>(info.data())->InstanceCount, 1u);
  EXPECT_EQ(instance->Flags, ULONG{TRACE_PROVIDER_FLAG_PRE_ENABLE});
  EXPECT_EQ(instance->Pid, 0u);
  EXPECT_EQ(instance->EnableCount, 1u);

  // TRACE_QUERY_INFO_CLASS page, TraceGuidQueryProcess: "Query for an array of GUIDs of the
  // providers that registered themselves in the same process as the calling process."
  std::vector<unsigned char> mine;
  ASSERT_EQ(query(TraceGuidQueryProcess, nullptr, mine), ERROR_SUCCESS);
  EXPECT_TRUE(lists(mine, kProvider));
  EXPECT_FALSE(lists(mine, kUnregistered)) << "enabled, never registered";
  ASSERT_EQ(query(TraceGuidQueryList, nullptr, list), ERROR_SUCCESS);
  EXPECT_TRUE(lists(list, kUnregistered)) << "the list names GUIDs only enabled too";
  EXPECT_EQ(EventUnregister(provider), ERROR_SUCCESS);
  ASSERT_EQ(query(TraceGuidQueryProcess, nullptr, mine), ERROR_SUCCESS);
  EXPECT_FALSE(lists(mine, kProvider)) << "unregistered";
}

TEST(EnumerateTraceGuidsEx, ArgumentsAndUnknownProviders) {
  PrivateBrokerHome home("etwrt-trace-guids");
  ULONG needed = 0;
  GUID g = kUnregistered;
  EXPECT_EQ(EnumerateTraceGuidsEx(TraceGuidQueryList, nullptr, 0, nullptr, 0, nullptr),
            ULONG{ERROR_INVALID_PARAMETER});
  EXPECT_EQ(EnumerateTraceGuidsEx(TraceGuidQueryList, nullptr, 0, nullptr, 16, &needed),
            ULONG{ERROR_INVALID_PARAMETER});
  EXPECT_EQ(EnumerateTraceGuidsEx(TraceGuidQueryInfo, &g, 8, nullptr, 0, &needed),
            ULONG{ERROR_INVALID_PARAMETER});
  EXPECT_EQ(EnumerateTraceGuidsEx(TraceGuidQueryInfo, &g, sizeof g, nullptr, 0, &needed),
            ULONG{ERROR_WMI_GUID_NOT_FOUND});
  EXPECT_EQ(EnumerateTraceGuidsEx(TraceStackTracingInfo, nullptr, 0, nullptr, 0, &needed),
            ULONG{ERROR_NOT_SUPPORTED});
  // A buffer too small: the size needed, nothing written.
  REGHANDLE provider = 0;
  ASSERT_EQ(EventRegister(&kProvider, nullptr, nullptr, &provider), ERROR_SUCCESS);
  unsigned char small[8] = {0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE};
  EXPECT_EQ(EnumerateTraceGuidsEx(TraceGuidQueryList, nullptr, 0, small, sizeof small, &needed),
            ULONG{ERROR_INSUFFICIENT_BUFFER});
  EXPECT_EQ(needed, sizeof(GUID));
  EXPECT_EQ(small[0], 0xEE);
  EXPECT_EQ(EventUnregister(provider), ERROR_SUCCESS);
}

}  // namespace

namespace {

// TraceQueryInformation's page: "provides information about an event tracing session";
// TRACE_QUERY_INFO_CLASS: TraceDisallowListQuery "Query an array of GUIDs that are disallowed
// for group enables on this session", TraceMaxLoggersQuery "Queries the currently configured
// maximum number of ETW logging sessions allowed by the operating system. Returns a ULONG."
TEST(TraceQueryInformation, DisallowListAndSessionLimitKernelClassesAreNotSupported) {
  ::setenv("ETWRT_MAX_SESSIONS", "7", 1);  // The broker this test starts reads it.
  PrivateBrokerHome home("etwrt-trace-guids");
  const TRACEHANDLE s = start("query-info");
  ::unsetenv("ETWRT_MAX_SESSIONS");
  GUID disallowed[2] = {kProvider, kUnregistered};
  ASSERT_EQ(TraceSetInformation(s, TraceSetDisallowList, disallowed, sizeof disallowed),
            ERROR_SUCCESS);

  ULONG needed = 0;
  unsigned char small[16] = {};
  EXPECT_EQ(TraceQueryInformation(s, TraceDisallowListQuery, small, sizeof small, &needed),
            ULONG{ERROR_BAD_LENGTH});
  EXPECT_EQ(needed, sizeof disallowed);
  std::vector<unsigned char> list(needed);
  ASSERT_EQ(TraceQueryInformation(s, TraceDisallowListQuery, list.data(), needed, &needed),
            ERROR_SUCCESS);
  EXPECT_TRUE(lists(list, kProvider));
  EXPECT_TRUE(lists(list, kUnregistered));

  ULONG limit = 0;
  ASSERT_EQ(TraceQueryInformation(s, TraceMaxLoggersQuery, &limit, sizeof limit, &needed),
            ERROR_SUCCESS);
  EXPECT_EQ(limit, 7u);
  EXPECT_EQ(needed, sizeof limit);
  limit = 0;
  ASSERT_EQ(EnumerateTraceGuidsEx(TraceMaxLoggersQuery, nullptr, 0, &limit, sizeof limit, &needed),
            ERROR_SUCCESS);
  EXPECT_EQ(limit, 7u);

  ULONG flags = 0;
  EXPECT_EQ(
      TraceQueryInformation(s, TraceSystemTraceEnableFlagsInfo, &flags, sizeof flags, &needed),
      ULONG{ERROR_NOT_SUPPORTED});
  EXPECT_EQ(TraceQueryInformation(s, TraceStackTracingInfo, &flags, sizeof flags, &needed),
            ULONG{ERROR_NOT_SUPPORTED});
  EXPECT_EQ(TraceQueryInformation(0, TraceMaxLoggersQuery, &limit, sizeof limit, &needed),
            ULONG{ERROR_INVALID_HANDLE});
  EXPECT_EQ(TraceQueryInformation(s + 100, TraceDisallowListQuery, list.data(), needed, &needed),
            ULONG{ERROR_WMI_INSTANCE_NOT_FOUND});
}

// Every class of TRACE_QUERY_INFO_CLASS (ne-evntrace-trace_query_info_class.md; "The
// TRACE_INFO_CLASS and TRACE_QUERY_INFO_CLASS enumerations both define the same values") in
// both calls on a running user-mode session. What etwrt does: TraceSetDisallowList ("Set the
// list of providers that are disabled for a provider group enable on this session") with
// TraceSetInformation; TraceDisallowListQuery and TraceMaxLoggersQuery with
// TraceQueryInformation. The rest get the pages' ERROR_NOT_SUPPORTED ("The request is not
// supported."): the kernel's classes (stack tracing "for kernel events", the "system trace
// provider"'s EnableFlags, sampled profile and PMC settings), those that belong to
// EnumerateTraceGuidsEx (the provider and group lists), a class in the other direction, and the
// user-mode ones etwrt does not implement (docs/etwrt/conformance.md, audit row 72).
TEST(TraceInformationClasses, EachClassInBothCalls) {
  PrivateBrokerHome home("etwrt-trace-classes");
  const TRACEHANDLE s = start("info-classes");
  struct Expected {
    TRACE_INFO_CLASS information_class;
    ULONG set;    // TraceSetInformation with a GUID's worth of data
    ULONG query;  // TraceQueryInformation with room for 64 GUIDs
  };
  const ULONG no = ERROR_NOT_SUPPORTED, ok = ERROR_SUCCESS;
  const Expected classes[] = {{TraceGuidQueryList, no, no},
                              {TraceGuidQueryInfo, no, no},
                              {TraceGuidQueryProcess, no, no},
                              {TraceStackTracingInfo, no, no},
                              {TraceSystemTraceEnableFlagsInfo, no, no},
                              {TraceSampledProfileIntervalInfo, no, no},
                              {TraceProfileSourceConfigInfo, no, no},
                              {TraceProfileSourceListInfo, no, no},
                              {TracePmcEventListInfo, no, no},
                              {TracePmcCounterListInfo, no, no},
                              {TraceSetDisallowList, ok, no},
                              {TraceVersionInfo, no, no},
                              {TraceGroupQueryList, no, no},
                              {TraceGroupQueryInfo, no, no},
                              {TraceDisallowListQuery, no, ok},
                              {TraceCompressionInfo, no, no},
                              {TracePeriodicCaptureStateListInfo, no, no},
                              {TracePeriodicCaptureStateInfo, no, no},
                              {TraceProviderBinaryTracking, no, no},
                              {TraceMaxLoggersQuery, no, ok},
                              {MaxTraceSetInfoClass, no, no}};
  static_assert(sizeof classes / sizeof classes[0] == MaxTraceSetInfoClass + 1);
  for (const Expected& e : classes) {
    SCOPED_TRACE(testing::Message() << "class " << static_cast<int>(e.information_class));
    GUID one = kUnregistered;
    EXPECT_EQ(TraceSetInformation(s, e.information_class, &one, sizeof one), e.set);
    std::vector<unsigned char> out(64 * sizeof(GUID));
    ULONG returned = 0;
    EXPECT_EQ(TraceQueryInformation(s, e.information_class, out.data(),
                                    static_cast<ULONG>(out.size()), &returned),
              e.query);
  }
  EXPECT_EQ(ControlTraceA(s, nullptr, TraceProperties().get(), EVENT_TRACE_CONTROL_STOP),
            ERROR_SUCCESS);
}

}  // namespace
