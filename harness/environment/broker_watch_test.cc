// How a broker's death or restart is told from its pid file (harness/environment/broker_watch.h).
#include "harness/environment/broker_watch.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#ifndef _WIN32
#include <sys/wait.h>
#include <unistd.h>
#endif

namespace etwh {
namespace {

namespace fs = std::filesystem;

#ifndef _WIN32
class BrokerWatch : public ::testing::Test {
 protected:
  void SetUp() override {
    home_ = fs::temp_directory_path() / ("etwh-broker-watch-" + std::to_string(::getpid()));
    fs::remove_all(home_);
    fs::create_directories(home_);
  }
  void TearDown() override { fs::remove_all(home_); }
  void write_pid(long pid) {
    fs::remove(home_ / "broker.pid");
    std::ofstream(home_ / "broker.pid") << pid << "\n";
  }
  // The pid of a process that has ended (and been reaped).
  static long dead_pid() {
    const pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    ::waitpid(child, nullptr, 0);
    return child;
  }
  fs::path home_;
};

TEST_F(BrokerWatch, NoPidFileIsNoBroker) {
  EXPECT_FALSE(broker_of(home_).has_value());
  EXPECT_EQ(broker_change(std::nullopt, std::nullopt, "the case"), "");
}

TEST_F(BrokerWatch, TheSameLiveBrokerIsNoChange) {
  write_pid(::getpid());
  const auto before = broker_of(home_);
  ASSERT_TRUE(before.has_value());
  EXPECT_TRUE(before->alive);
  EXPECT_EQ(broker_change(before, broker_of(home_), "the case"), "");
  // The first call of a case may start the broker: nothing was there to lose.
  EXPECT_EQ(broker_change(std::nullopt, broker_of(home_), "the case"), "");
}

TEST_F(BrokerWatch, ABrokerKilledOrReplacedIsNamed) {
  write_pid(::getpid());
  const auto before = broker_of(home_);
  const long dead = dead_pid();
  write_pid(dead);  // SIGKILLed: its pid file stays
  const auto after_kill = broker_of(home_);
  ASSERT_TRUE(after_kill.has_value());
  EXPECT_FALSE(after_kill->alive);
  const std::string me = std::to_string(::getpid());
  EXPECT_EQ(broker_change(before, after_kill, "the case"),
            "the etwrt broker (pid " + me + ") ended during the case and pid " +
                std::to_string(dead) + " replaced it");
  EXPECT_EQ(broker_change(after_kill, after_kill, "the case"),
            "the etwrt broker (pid " + std::to_string(dead) +
                ") had died before the case began, without removing its pid file");
  EXPECT_EQ(broker_change(before, std::nullopt, "the run"),
            "the etwrt broker (pid " + me + ") ended during the run");
  // The same pid again, written anew: another broker (pids are reused).
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  write_pid(::getpid());
  EXPECT_NE(broker_change(before, broker_of(home_), "the case"), "");
}
#endif

}  // namespace
}  // namespace etwh
