// The stale-session rule and the right probe against the platform's API (etwrt here, in a
// private broker home of the test's own).
#include "harness/environment/stale_sessions.h"

#include "tests/lib/scratch_dir.h"

#include <windows.h>
#include <evntrace.h>

#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace etwh {
namespace {

// A fresh ETWRT_HOME for the test; its broker ends with this process (ETWRT_BROKER_OWNER_PID).
class TestHome {
 public:
  TestHome() {
    ::setenv("ETWRT_HOME", dir_.path().c_str(), 1);
    ::setenv("ETWRT_BROKER_OWNER_PID", std::to_string(::getpid()).c_str(), 1);
  }

 private:
  test_support::ScratchDir dir_{"etwh-stale"};
};

struct Properties {
  Properties() : bytes((sizeof(EVENT_TRACE_PROPERTIES) + 1024 + 7) / 8) {
    get()->Wnode.BufferSize = static_cast<ULONG>(bytes.size() * 8);
    get()->Wnode.Flags = WNODE_FLAG_TRACED_GUID;
    get()->LoggerNameOffset = sizeof(EVENT_TRACE_PROPERTIES);
    get()->LogFileMode = EVENT_TRACE_REAL_TIME_MODE;
    get()->BufferSize = 4;
  }
  EVENT_TRACE_PROPERTIES* get() { return reinterpret_cast<EVENT_TRACE_PROPERTIES*>(bytes.data()); }
  std::vector<std::uint64_t> bytes;
};

ULONG start(const std::string& name) {
  Properties p;
  TRACEHANDLE handle = 0;
  return StartTraceA(&handle, name.c_str(), p.get());
}

bool running(const std::string& name) {
  Properties p;
  return ControlTraceA(0, name.c_str(), p.get(), EVENT_TRACE_CONTROL_QUERY) == ERROR_SUCCESS;
}

// The pid of a process that has ended (and been reaped).
unsigned long dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return static_cast<unsigned long>(child);
}

TEST(StaleSessions, TheRunPidIsReadFromEtwhSessionNamesOnly) {
  EXPECT_EQ(etwh_run_pid("etwh-4242-3-s1"), 4242ul);
  EXPECT_EQ(etwh_run_pid("etwh-4242-probe"), 4242ul);
  EXPECT_EQ(etwh_run_pid("etwh-4242"), std::nullopt);
  EXPECT_EQ(etwh_run_pid("etwh--1-s"), std::nullopt);
  EXPECT_EQ(etwh_run_pid("etwh-x-1-s"), std::nullopt);
  EXPECT_EQ(etwh_run_pid("etwh-0-1-s"), std::nullopt);
  EXPECT_EQ(etwh_run_pid("etwh-99999999999-1-s"), std::nullopt);
  EXPECT_EQ(etwh_run_pid("xetwh-4242-1-s"), std::nullopt);
  EXPECT_EQ(etwh_run_pid("NT Kernel Logger"), std::nullopt);
}

// Only the sessions of ended runs go: not this run's, not a live process's, not another
// program's.
TEST(StaleSessions, OnlyTheSessionsOfEndedRunsAreStoppedAndSaid) {
  TestHome home;
  const unsigned long dead = dead_pid();
  const std::string stale = "etwh-" + std::to_string(dead) + "-1-a";
  const std::string stale_probe = "etwh-" + std::to_string(dead) + "-probe";
  const std::string own = "etwh-" + std::to_string(::getpid()) + "-1-a";
  const std::string live = "etwh-" + std::to_string(::getppid()) + "-1-a";
  for (const std::string& name : {stale, stale_probe, own, live, std::string("someone-else")}) {
    ASSERT_EQ(start(name), ERROR_SUCCESS) << name;
  }
  std::ostringstream log;
  const std::vector<StaleSession> stopped = stop_stale_sessions(::getpid(), log);
  std::set<std::string> names;
  for (const StaleSession& s : stopped) {
    names.insert(s.name);
    EXPECT_EQ(s.pid, dead);
    EXPECT_EQ(s.stop_status, ERROR_SUCCESS);
  }
  EXPECT_EQ(names, (std::set<std::string>{stale, stale_probe}));
  EXPECT_FALSE(running(stale));
  EXPECT_FALSE(running(stale_probe));
  EXPECT_TRUE(running(own));
  EXPECT_TRUE(running(live));
  EXPECT_TRUE(running("someone-else"));
  EXPECT_NE(log.str().find("etwh: stopped session " + stale +
                           ", left running by an earlier "
                           "etwh run (process " +
                           std::to_string(dead) + " has ended)"),
            std::string::npos)
      << log.str();
  std::ostringstream again;
  EXPECT_TRUE(stop_stale_sessions(::getpid(), again).empty());
  EXPECT_EQ(again.str(), "");
}

TEST(StaleSessions, WithoutTheRightToControlSessionsTheRunMustNotStart) {
  TestHome home;
  std::ostringstream log;
  ::setenv("ETWRT_DENY_CONTROL", "1", 1);
  const bool may = prepare_sessions_for_run("etwh-1-", ::getpid(), log).has_value();
  ::unsetenv("ETWRT_DENY_CONTROL");
  EXPECT_FALSE(may);
  EXPECT_NE(log.str().find("may not control event tracing sessions"), std::string::npos);
  std::ostringstream allowed;
  EXPECT_TRUE(prepare_sessions_for_run("etwh-1-", ::getpid(), allowed).has_value());
  EXPECT_FALSE(running("etwh-1-probe")) << "the probe session is stopped again";
}

}  // namespace
}  // namespace etwh
