#include "etwh/platform.h"

#ifdef _WIN32
#include <windows.h>
#else
#include <unistd.h>
#endif

#include <cstdlib>
#include <ctime>
#include <stdexcept>
#include <string>

namespace etwh {

namespace fs = std::filesystem;

std::string executable_name(std::string_view stem) {
#ifdef _WIN32
  return std::string(stem) + ".exe";
#else
  return std::string(stem);
#endif
}

fs::path self_dir(const char* argv0) {
  fs::path self;
#ifdef _WIN32
  char buf[MAX_PATH] = {};
  if (GetModuleFileNameA(nullptr, buf, MAX_PATH) > 0) self = buf;
#else
  std::error_code ec;
  self = fs::read_symlink("/proc/self/exe", ec);
#endif
  if (self.empty()) self = fs::absolute(argv0);
  return self.parent_path();
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
#ifdef _WIN32
  gmtime_s(&tm, &t);
#else
  gmtime_r(&t, &tm);
#endif
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string host_name() {
  char buf[256] = {};
#ifdef _WIN32
  DWORD size = sizeof buf;
  if (!GetComputerNameA(buf, &size)) return "";
#else
  gethostname(buf, sizeof buf - 1);
#endif
  return buf;
}

unsigned long process_id() {
#ifdef _WIN32
  return GetCurrentProcessId();
#else
  return static_cast<unsigned long>(getpid());
#endif
}

PrivateEtwrtHome::PrivateEtwrtHome() {
#ifndef _WIN32
  // A broker this process starts ends with it, however it ends (a SIGKILL too): it stops the
  // sessions and exits (docs/etwrt/use.md, ETWRT_BROKER_OWNER_PID). In a home the caller gave,
  // too: a broker already running there is not started by us and keeps its own owner.
  if (std::getenv("ETWRT_HOME") != nullptr) {
    if (std::getenv("ETWRT_BROKER_OWNER_PID") == nullptr) {
      setenv("ETWRT_BROKER_OWNER_PID", std::to_string(getpid()).c_str(), 1);
    }
    return;
  }
  std::string templ = (fs::temp_directory_path() / "etwh-home-XXXXXX").string();
  if (mkdtemp(templ.data()) == nullptr) throw std::runtime_error("cannot create ETWRT_HOME");
  dir_ = templ;
  setenv("ETWRT_HOME", dir_.c_str(), 1);
  setenv("ETWRT_BROKER_OWNER_PID", std::to_string(getpid()).c_str(), 1);
#endif
}

PrivateEtwrtHome::~PrivateEtwrtHome() {
  if (dir_.empty()) return;
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

}  // namespace etwh
