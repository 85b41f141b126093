// Test support: a private ETWRT_HOME per test, so each test gets its own broker, which is
// stopped (and waited for) and whose folder is removed afterwards. The broker is owned by the
// test process (ETWRT_BROKER_OWNER_PID, docs/etwrt/use.md): a test that crashes or is killed
// before its destructor runs leaves no broker (nor its sessions) behind.
#pragma once

#include <signal.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>

namespace etwrt::testing {

class PrivateBrokerHome {
 public:
  explicit PrivateBrokerHome(const std::string& prefix) {
    std::string pattern = "/tmp/" + prefix + "-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp " + pattern);
    dir_ = pattern;
    ::setenv("ETWRT_HOME", home().c_str(), 1);
    ::setenv("ETWRT_BROKER_OWNER_PID", std::to_string(::getpid()).c_str(), 1);
  }
  ~PrivateBrokerHome() {
    std::ifstream in(home() + "/broker.pid");
    pid_t pid = 0;
    if (in >> pid && pid > 0) {
      ::kill(pid, SIGTERM);
      // The next test must not meet this broker's socket or files.
      for (int i = 0; i < 1000 && ::kill(pid, 0) == 0 && !zombie(pid); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  PrivateBrokerHome(const PrivateBrokerHome&) = delete;
  PrivateBrokerHome& operator=(const PrivateBrokerHome&) = delete;

  const std::string& dir() const { return dir_; }
  std::string home() const { return dir_ + "/home"; }

 private:
  static bool zombie(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string a, b, state;
    return !(stat >> a >> b >> state) || state == "Z";
  }
  std::string dir_;
};

}  // namespace etwrt::testing
