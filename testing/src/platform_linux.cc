// Linux: a private etwrt home per test process (docs/etwrt/use.md, "ENVIRONMENT"), made before
// main: etwrt's library follows ETWRT_HOME at its next call, but a provider registered with
// another broker never meets the capture's sessions. The broker is owned by the process
// (ETWRT_BROKER_OWNER_PID), so a test killed by ctest's timeout leaves no broker and no session
// behind; the folder goes at exit.
#include "platform_home.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <cstdlib>
#include <string>

namespace etwh::testing {
namespace {

struct PrivateHome {
  std::string dir;  // what mkdtemp made; the home is dir/home, which etwrt creates 0700
  std::string error;
  bool inherited = false;  // ETWH_TESTING_HOME=inherit
};

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
    std::string pattern = (std::filesystem::temp_directory_path() / "etwh-testing-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      h.error = "cannot make a private etwrt home under " + pattern;
      return made;
    }
    h.dir = pattern;
    ::setenv("ETWRT_HOME", (h.dir + "/home").c_str(), 1);
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

std::string session_prefix() { return "etwh-" + std::to_string(::getpid()) + "-"; }

std::string private_home() {
  const PrivateHome& h = the_home();
  return h.dir.empty() ? std::string{} : h.dir + "/home";
}

}  // namespace etwh::testing
