// Linux: private etwrt homes (docs/etwrt/use.md, "ENVIRONMENT") in one folder of the test
// process, the first made before main: etwrt's library follows ETWRT_HOME at its next call, but
// a provider registered with another broker never meets the capture's sessions. Each capture
// (HomeScope::capture) runs in a home no capture used before, and leaves a fresh one for what
// comes after it. Every broker is owned by the process (ETWRT_BROKER_OWNER_PID), so a test
// killed by ctest's timeout leaves no broker and no session behind; the folder goes at exit,
// and the folders of killed test processes go when the next test process starts.
#include "platform_home.h"

#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>

namespace etwh::testing {
namespace {

// The folder of a test process: /tmp/etwh-testing-<pid>-XXXXXX (mkdtemp's suffix), its pid in
// the name so that a later process can tell a dead process's folder from a live one's.
constexpr char kFolderPrefix[] = "etwh-testing-";

struct PrivateHome {
  std::mutex mu;
  std::string dir;  // what mkdtemp made; each home is dir/home-N, which etwrt creates 0700
  std::string home;
  unsigned next = 0;
  bool used = false;  // a capture ran in `home`
  std::string error;
  bool inherited = false;  // ETWH_TESTING_HOME=inherit
};

// Removes the folders of test processes that ended without their exit handlers (killed by a
// signal, as ctest's timeout does): theirs by the name, this user's, their process gone.
void sweep_dead_folders(const std::filesystem::path& tmp) {
  DIR* d = ::opendir(tmp.c_str());
  if (d == nullptr) return;
  while (const dirent* entry = ::readdir(d)) {
    const std::string name = entry->d_name;
    if (name.rfind(kFolderPrefix, 0) != 0) continue;
    const std::string rest = name.substr(sizeof kFolderPrefix - 1);
    const std::size_t dash = rest.find('-');
    if (dash == 0 || dash == std::string::npos || dash > 9) continue;
    if (rest.find_first_not_of("0123456789") != dash) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(rest.substr(0, dash)));
    struct stat st {};
    if (::lstat((tmp / name).c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid())
      continue;
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to ask
    std::error_code ignored;
    std::filesystem::remove_all(tmp / name, ignored);
  }
  ::closedir(d);
}

// Points ETWRT_HOME at a home no one used yet. Caller holds h.mu.
void switch_home(PrivateHome& h) {
  h.home = h.dir + "/home-" + std::to_string(h.next++);
  h.used = false;
  ::setenv("ETWRT_HOME", h.home.c_str(), 1);
}

// Never destroyed: the exit handler that removes the folder runs after the destructors of
// statics made after its registration, this one among them.
PrivateHome& the_home() {
  static PrivateHome& home = *[] {
    auto* made = new PrivateHome;
    PrivateHome& h = *made;
    const char* mode = std::getenv("ETWH_TESTING_HOME");
    if (mode != nullptr && std::string(mode) == "inherit") {
      h.inherited = true;
      return made;
    }
    const std::filesystem::path tmp = std::filesystem::temp_directory_path();
    sweep_dead_folders(tmp);
    std::string pattern = (tmp / (kFolderPrefix + std::to_string(::getpid()) + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      h.error = "cannot make a private etwrt home under " + pattern;
      return made;
    }
    h.dir = pattern;
    switch_home(h);
    ::setenv("ETWRT_BROKER_OWNER_PID", std::to_string(::getpid()).c_str(), 1);
    std::atexit([] {
      std::error_code ignored;
      if (!the_home().dir.empty()) std::filesystem::remove_all(the_home().dir, ignored);
    });
    return made;
  }();
  return home;
}

// Before main, before any provider registers (this file comes with every capture and check,
// so every user of the library has it).
[[maybe_unused]] const bool g_home_made_before_main = (the_home(), true);

}  // namespace

std::optional<std::string> prepare_platform() {
  const PrivateHome& h = the_home();
  if (!h.error.empty()) return h.error;
  return std::nullopt;
}

void enter_home(HomeScope scope) {
  PrivateHome& h = the_home();
  std::lock_guard lock(h.mu);
  if (h.dir.empty()) return;
  if (scope == HomeScope::capture && h.used) switch_home(h);
  h.used = true;
}

void leave_home(HomeScope scope) {
  PrivateHome& h = the_home();
  std::lock_guard lock(h.mu);
  if (h.dir.empty() || scope != HomeScope::capture) return;
  switch_home(h);
}

std::string session_prefix() { return "etwh-" + std::to_string(::getpid()) + "-"; }

std::string private_home() {
  PrivateHome& h = the_home();
  std::lock_guard lock(h.mu);
  return h.home;
}

}  // namespace etwh::testing
