#include "broker_link.h"

#include "home.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace etwrt {
namespace {

std::string broker_executable() {
  if (const char* path = std::getenv("ETWRT_BROKER"); path != nullptr && *path != '\0') {
    return path;
  }
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&broker_executable), &info) == 0 ||
      info.dli_fname == nullptr) {
    return {};
  }
  char resolved[PATH_MAX];
  if (::realpath(info.dli_fname, resolved) == nullptr) return {};
  std::string dir(resolved);
  dir.erase(dir.find_last_of('/'));
  // The installed layout (LIBDIR may be multiarch), then the build tree's lib/ -> libexec/.
  for (const std::string& candidate :
       {dir + "/" ETWRT_BROKER_FROM_LIBDIR, dir + "/../libexec/etwrt-broker"}) {
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

}  // namespace

bool spawn_broker(const std::string& home, int dir_fd) {
  const std::string path = broker_executable();
  if (path.empty()) {
    std::fprintf(stderr, "etwrt: cannot find etwrt-broker (set ETWRT_BROKER)\n");
    return false;
  }
  const int log_fd =
      ::openat(dir_fd, kLogName, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
  struct stat log_stat {};
  if (log_fd >= 0 && ::fstat(log_fd, &log_stat) == 0 && log_stat.st_size > kMaxLogBytes) {
    (void)::ftruncate(log_fd, 0);  // Bounded: a broker that keeps failing cannot fill the disk.
  }
  // Everything the child needs is prepared before fork: only async-signal-safe calls after.
  std::array<char*, 4> argv{const_cast<char*>(path.c_str()), const_cast<char*>("--home"),
                            const_cast<char*>(home.c_str()), nullptr};
  const pid_t child = ::fork();
  if (child < 0) {
    if (log_fd >= 0) ::close(log_fd);
    return false;
  }
  if (child == 0) {
    ::setsid();
    if (::fork() != 0) ::_exit(0);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, 0);
    if (log_fd >= 0) {
      ::dup2(log_fd, 1);
      ::dup2(log_fd, 2);
    }
    ::close_range(3, ~0u, 0);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  if (log_fd >= 0) ::close(log_fd);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return true;
}

int connect_to(int dir_fd, const std::string& home, std::string& error, bool& refused) {
  refused = !check_home_files(dir_fd, home, error);
  if (refused) return -1;
  const std::string path = path_in(dir_fd, kSocketName);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof address.sun_path) return -1;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  ucred cred{};
  socklen_t length = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) != 0 ||
      (cred.uid != ::geteuid() && cred.uid != 0)) {
    ::close(fd);
    refused = true;
    error = socket_path(home) + " is served by uid " + std::to_string(cred.uid) +
            ", not by this user: nothing was sent to it; remove it (the next call starts this " +
            "user's broker), or set ETWRT_HOME to another directory of your own with mode 0700";
    return -1;
  }
  return fd;
}

}  // namespace etwrt
