#include "harness/environment/broker_watch.h"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>

#ifndef _WIN32
#include <climits>
#include <csignal>
#include <sys/types.h>
#endif

namespace etwh {

namespace fs = std::filesystem;

#ifndef _WIN32
// A broker killed but not yet reaped (a child of this process, when etwrt started it from here)
// still answers kill(pid, 0): its state in /proc says it is dead.
bool zombie(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(in, text)) return false;
  const auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() &&
         (text[close + 2] == 'Z' || text[close + 2] == 'X');
}
#endif

std::optional<BrokerIdentity> broker_of(const fs::path& home) {
  const fs::path file = home / "broker.pid";
  std::error_code ec;
  const auto time = fs::last_write_time(file, ec);
  if (ec) return std::nullopt;
  std::ifstream in(file);
  BrokerIdentity id;
  if (!(in >> id.pid) || id.pid <= 0) return std::nullopt;  // being written: not there yet
  id.pid_file_time =
      std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count();
#ifndef _WIN32
  id.alive = (::kill(static_cast<pid_t>(id.pid), 0) == 0 || errno == EPERM) && !zombie(id.pid);
#endif
  return id;
}

std::optional<BrokerIdentity> current_broker() {
  const char* home = std::getenv("ETWRT_HOME");
  if (home == nullptr || *home == '\0') return std::nullopt;
  return broker_of(home);
}

std::string broker_change(const std::optional<BrokerIdentity>& before,
                          const std::optional<BrokerIdentity>& after, const std::string& span) {
  if (before && !before->alive) {
    return "the etwrt broker (pid " + std::to_string(before->pid) + ") had died before " + span +
           " began, without removing its pid file";
  }
  if (!before) return "";  // none yet: the first call starts it
  const std::string was = "the etwrt broker (pid " + std::to_string(before->pid) + ")";
  if (!after) return was + " ended during " + span;
  if (!(*after == *before)) {
    return was + " ended during " + span + " and pid " + std::to_string(after->pid) +
           " replaced it";
  }
  if (!after->alive) return was + " died during " + span;
  return "";
}

std::string etwrt_environment_problem() {
#ifdef _WIN32
  return "";
#else
  const char* home = std::getenv("ETWRT_HOME");
  if (home == nullptr) return "";
  const std::string path = home;
  if (path.empty()) return "ETWRT_HOME is set but empty";
  if (path.size() + sizeof "/broker.sock" > PATH_MAX) {
    return "ETWRT_HOME is " + std::to_string(path.size()) +
           " characters long, too long for the broker's files (at most " +
           std::to_string(PATH_MAX - sizeof "/broker.sock") + ")";
  }
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) {
    return "ETWRT_HOME " + path + " cannot be reached: " + ec.message();
  }
  if (fs::exists(st) && !fs::is_directory(st)) {
    return "ETWRT_HOME " + path + " is not a directory";
  }
  if (!fs::exists(st) && !fs::is_directory(fs::path(path).parent_path(), ec)) {
    return "ETWRT_HOME " + path + " does not exist and its parent is not a directory";
  }
  return "";
#endif
}

}  // namespace etwh
