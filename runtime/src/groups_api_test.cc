// etwrt's provider groups through the Win32 API: group enables reach members, the disallow
// list applies while the session runs, private sessions are refused, TraceSetInformation's
// argument checks. Each test has its own broker (ETWRT_HOME).
#include <windows.h>
#include <evntprov.h>
#include <evntrace.h>

#include <gtest/gtest.h>

#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "test_broker_home.h"
#include "test_properties.h"

namespace {

using namespace std::chrono_literals;

constexpr GUID kMember = {0xe7c00901, 0, 0x4000, {0x80, 0, 0, 0, 0, 0, 0, 1}};
constexpr GUID kGroup = {0xe7c009ff, 0, 0x4000, {0x80, 0, 0, 0, 0, 0, 0, 1}};

// Traits blob: size, name "g", then one group trait (size 19, type 1, the GUID).
std::vector<std::uint8_t> traits_with_group(const GUID& group) {
  std::vector<std::uint8_t> b(7 + sizeof(GUID));
  const std::uint8_t head[7] = {static_cast<std::uint8_t>(b.size()), 0, 'g', 0, 19, 0, 1};
  std::memcpy(b.data(), head, sizeof head);
  std::memcpy(b.data() + sizeof head, &group, sizeof(GUID));
  return b;
}

TRACEHANDLE start(const std::string& name, ULONG mode) {
  etwrt::testing::TraceProperties p;
  p.get()->LogFileMode = mode;
  TRACEHANDLE h = 0;
  EXPECT_EQ(StartTraceA(&h, name.c_str(), p.get()), ERROR_SUCCESS) << name;
  return h;
}

// kMember, registered with traits that name kGroup as its provider group; 0 when that fails.
REGHANDLE register_group_member() {
  REGHANDLE member = 0;
  if (EventRegister(&kMember, nullptr, nullptr, &member) != ERROR_SUCCESS) return 0;
  std::vector<std::uint8_t> blob = traits_with_group(kGroup);
  EXPECT_EQ(EventSetInformation(member, EventProviderSetTraits, blob.data(),
                                static_cast<ULONG>(blob.size())),
            ERROR_SUCCESS);
  return member;
}

ENABLE_TRACE_PARAMETERS group_parameters() {
  ENABLE_TRACE_PARAMETERS p{};
  p.Version = ENABLE_TRACE_PARAMETERS_VERSION_2;
  p.EnableProperty = EVENT_ENABLE_PROPERTY_PROVIDER_GROUP;
  return p;
}

// Waits (bounded, against hangs only) until EventProviderEnabled says `want`.
bool becomes(REGHANDLE h, UCHAR level, ULONGLONG keyword, bool want) {
  for (int i = 0; i < 1000; ++i) {
    if ((EventProviderEnabled(h, level, keyword) != FALSE) == want) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

class EtwrtGroups : public ::testing::Test {
 protected:
  etwrt::testing::PrivateBrokerHome home_{"etwrt-groups-test"};
};

TEST_F(EtwrtGroups, TraceSetInformationArguments) {
  GUID list[1] = {kMember};
  EXPECT_EQ(TraceSetInformation(0, TraceSetDisallowList, list, sizeof list), ERROR_INVALID_HANDLE);
  EXPECT_EQ(TraceSetInformation(1, TraceStackTracingInfo, list, sizeof list), ERROR_NOT_SUPPORTED);
  EXPECT_EQ(TraceSetInformation(1, TraceSetDisallowList, list, sizeof list - 1),
            ERROR_INVALID_PARAMETER);
  EXPECT_EQ(TraceSetInformation(1, TraceSetDisallowList, nullptr, sizeof list),
            ERROR_INVALID_PARAMETER);
}

TEST_F(EtwrtGroups, GroupEnableReachesMembersAndTheDisallowListAppliesWhileRunning) {
  const REGHANDLE member = register_group_member();
  ASSERT_NE(member, REGHANDLE{0});
  const TRACEHANDLE s = start("groups-a", EVENT_TRACE_REAL_TIME_MODE);
  ENABLE_TRACE_PARAMETERS p = group_parameters();
  ASSERT_EQ(EnableTraceEx2(s, &kGroup, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 4, 0x1, 0, 10000, &p),
            ERROR_SUCCESS);
  EXPECT_TRUE(becomes(member, 4, 0x1, true));
  EXPECT_FALSE(EventProviderEnabled(member, 5, 0x1));  // the group's level applies
  GUID list[1] = {kMember};
  ASSERT_EQ(TraceSetInformation(s, TraceSetDisallowList, list, sizeof list), ERROR_SUCCESS);
  EXPECT_TRUE(becomes(member, 4, 0x1, false));
  ASSERT_EQ(TraceSetInformation(s, TraceSetDisallowList, nullptr, 0), ERROR_SUCCESS);
  EXPECT_TRUE(becomes(member, 4, 0x1, true));
  ASSERT_EQ(EnableTraceEx2(s, &kGroup, EVENT_CONTROL_CODE_DISABLE_PROVIDER, 0, 0, 0, 10000, &p),
            ERROR_SUCCESS);
  EXPECT_TRUE(becomes(member, 4, 0x1, false));
  EXPECT_EQ(EventUnregister(member), ERROR_SUCCESS);
}

TEST_F(EtwrtGroups, PrivateSessionCannotEnableAGroup) {
  const REGHANDLE member = register_group_member();
  ASSERT_NE(member, REGHANDLE{0});
  const TRACEHANDLE s =
      start("groups-private", EVENT_TRACE_REAL_TIME_MODE | EVENT_TRACE_PRIVATE_LOGGER_MODE);
  ENABLE_TRACE_PARAMETERS p = group_parameters();
  EXPECT_EQ(EnableTraceEx2(s, &kGroup, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 4, 0x1, 0, 10000, &p),
            ERROR_NOT_SUPPORTED);
  EXPECT_FALSE(EventProviderEnabled(member, 1, 0x1));
  EXPECT_EQ(EventUnregister(member), ERROR_SUCCESS);
}

}  // namespace
