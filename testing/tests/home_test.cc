// The capture's homes on etwrt (HomeScope): a broker per capture, one shared on request, and
// what a test process killed mid-capture leaves behind (no broker; its folder swept by the next
// test process).
#include "etwh/testing/capture.h"
#include "etwh/testing/matchers.h"
#include "tl_writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <evntrace.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace etwh::testing {
namespace {

using test::TlProvider;

const char kName[] = "Etwh.Testing.Homes";

CaptureOptions options_in(HomeScope scope) {
  CaptureOptions o;
  o.provider = provider_id_from_name(kName);
  o.home = scope;
  return o;
}

pid_t broker_pid(const std::string& home) {
  std::ifstream in(home + "/broker.pid");
  long pid = 0;
  in >> pid;
  return static_cast<pid_t>(pid);
}

// StartTrace's status for a realtime session named `name`; stopped again when `stop`.
ULONG start_session(const char* name, bool stop) {
  std::vector<std::uint8_t> bytes(sizeof(EVENT_TRACE_PROPERTIES) + 1024);
  auto* p = reinterpret_cast<EVENT_TRACE_PROPERTIES*>(bytes.data());
  p->Wnode.BufferSize = static_cast<ULONG>(bytes.size());
  p->Wnode.Flags = WNODE_FLAG_TRACED_GUID;
  p->LoggerNameOffset = sizeof(EVENT_TRACE_PROPERTIES);
  p->LogFileMode = EVENT_TRACE_REAL_TIME_MODE;
  TRACEHANDLE handle = 0;
  const ULONG status = StartTraceA(&handle, name, p);
  if (status == ERROR_SUCCESS && stop) ControlTraceA(handle, nullptr, p, EVENT_TRACE_CONTROL_STOP);
  return status;
}

TEST(TestingHome, EachCaptureRunsOnABrokerOfItsOwn) {
  std::string first_home, second_home;
  pid_t first_broker = 0, second_broker = 0;
  // A session the first capture's code leaves running, as a careless test would.
  const CaptureResult first = capture(options_in(HomeScope::capture), [&] {
    first_home = private_home();
    first_broker = broker_pid(first_home);
    EXPECT_EQ(start_session("etwh-test-leftover", false), static_cast<ULONG>(ERROR_SUCCESS));
  });
  const CaptureResult second = capture(options_in(HomeScope::capture), [&] {
    second_home = private_home();
    second_broker = broker_pid(second_home);
    // The leftover is the first broker's: this capture's home has no such session.
    EXPECT_EQ(start_session("etwh-test-leftover", true), static_cast<ULONG>(ERROR_SUCCESS));
  });
  ASSERT_THAT(first, CaptureOk());
  ASSERT_THAT(second, CaptureOk());
  EXPECT_NE(first_home, second_home);
  EXPECT_GT(first_broker, 0);
  EXPECT_GT(second_broker, 0);
  EXPECT_NE(first_broker, second_broker);
  // Both homes are in the process's folder, which goes at exit.
  EXPECT_EQ(std::filesystem::path(first_home).parent_path(),
            std::filesystem::path(second_home).parent_path());
}

TEST(TestingHome, AProviderRegisteredOnceNeedsTheProcessScope) {
  TlProvider provider(provider_id_from_name(kName), kName);
  ASSERT_TRUE(provider.registered());
  const auto write = [&] { provider.write("Tick", 4, 0x1, 1, "a"); };
  const CaptureResult shared1 = capture(options_in(HomeScope::process), write);
  const CaptureResult shared2 = capture(options_in(HomeScope::process), write);
  EXPECT_THAT(shared1.events, EventCount(EventSpec().named("Tick"), 1));
  EXPECT_THAT(shared2.events, EventCount(EventSpec().named("Tick"), 1));
  EXPECT_EQ(shared1.sessions.at(0).delivered, 1u);
}

// As a child (ETWH_TESTING_KILL_ME set): start a capture, print the home, wait to be killed.
// The parent kills it with SIGKILL, as ctest's timeout does: the child's broker ends, and the
// next test process (another child) removes the dead child's folder.
TEST(TestingHome, ATestKilledMidCaptureLeavesNoBrokerAndItsFolderIsSwept) {
  if (std::getenv("ETWH_TESTING_KILL_ME") != nullptr) {
    Capture c(options_in(HomeScope::capture));
    std::printf("HOME=%s\n", private_home().c_str());
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::seconds(60));
    return;
  }
  if (std::getenv("ETWH_TESTING_JUST_START") != nullptr) return;
  const std::string self = "/proc/" + std::to_string(::getpid()) + "/exe";
  const std::string test =
      "--gtest_filter=" +
      std::string(::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name()) +
      "." + ::testing::UnitTest::GetInstance()->current_test_info()->name();
  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::dup2(out[1], 1);
    ::setenv("ETWH_TESTING_KILL_ME", "1", 1);
    ::execl(self.c_str(), self.c_str(), test.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out[1]);
  std::string text;
  char buffer[512];
  while (text.find('\n', text.find("HOME=")) == std::string::npos) {
    const ssize_t n = ::read(out[0], buffer, sizeof buffer);
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  const std::size_t at = text.find("HOME=");
  ASSERT_NE(at, std::string::npos) << text;
  const std::string home = text.substr(at + 5, text.find('\n', at) - at - 5);
  const pid_t broker = broker_pid(home);
  ASSERT_GT(broker, 0);
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  int status = 0;
  ::waitpid(child, &status, 0);
  ::close(out[0]);
  // Its broker noticed its owner ended (about half a second).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (::kill(broker, 0) == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_NE(::kill(broker, 0), 0) << "the killed test's broker " << broker << " still runs";
  const std::filesystem::path folder = std::filesystem::path(home).parent_path();
  // No exit handler ran: the folder stays until a test process starts (under ctest -j, one of
  // the other tests may have swept it already).
  const std::string next = "ETWH_TESTING_JUST_START=1 " + self + " " + test + " > /dev/null";
  ASSERT_EQ(std::system(next.c_str()), 0);
  EXPECT_FALSE(std::filesystem::exists(folder)) << folder;
}

}  // namespace
}  // namespace etwh::testing
