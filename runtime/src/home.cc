#include "home.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace etwrt {
namespace {

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

const char* const kRemedy =
    "; set ETWRT_HOME to a directory of your own with mode 0700 (etwrt creates it when its "
    "parent exists)";

}  // namespace

std::string broker_home() {
  if (const char* home = std::getenv("ETWRT_HOME"); home != nullptr && *home != '\0') {
    return home;
  }
  if (const char* xdg = std::getenv("XDG_RUNTIME_DIR"); xdg != nullptr && *xdg != '\0') {
    return std::string(xdg) + "/etwrt";
  }
  return "/tmp/etwrt-" + std::to_string(::getuid());
}

int open_private_dir(const std::string& home, std::string& error) {
  if (::mkdir(home.c_str(), 0700) != 0 && errno != EEXIST) {
    error = "cannot create the broker home " + home + ": " + std::strerror(errno) + kRemedy;
    return -1;
  }
  const int fd = ::open(home.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    error = "the broker home " + home +
            (e == ELOOP || e == ENOTDIR ? std::string(" is a symbolic link or not a directory")
                                        : std::string(" cannot be opened: ") + std::strerror(e)) +
            kRemedy;
    return -1;
  }
  struct stat st {};
  std::string wrong;
  if (::fstat(fd, &st) != 0) {
    wrong = std::string(" cannot be examined: ") + std::strerror(errno);
  } else if (st.st_uid != ::geteuid()) {
    // Someone else made it (e.g. /tmp/etwrt-<uid> taken in advance): their directory, their
    // files, possibly their listener. Never used, never repaired.
    wrong = " belongs to uid " + std::to_string(st.st_uid) + ", not to this user (uid " +
            std::to_string(::geteuid()) + "): another user may have created it to take or " +
            "block this user's tracing";
  } else if ((st.st_mode & 077) != 0) {
    // Another user may have reached it while it was open: what is inside is not to be trusted.
    wrong = " has mode " + octal_mode(st.st_mode) +
            ", which lets other users in (etwrt needs 0700 and does not repair it: what " +
            "others may have put in it stays theirs)";
  }
  if (!wrong.empty()) {
    ::close(fd);
    error = "the broker home " + home + wrong + kRemedy;
    return -1;
  }
  return fd;
}

bool ensure_private_dir(const std::string& home, std::string& error) {
  const int fd = open_private_dir(home, error);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

bool check_home_files(int dir_fd, const std::string& home, std::string& error) {
  for (const char* name : {kSocketName, kLockName, kPidName, kLogName}) {
    struct stat st {};
    if (::fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // Absent.
    std::string wrong;
    if (S_ISLNK(st.st_mode)) {
      wrong = "is a symbolic link (etwrt never follows one there)";
    } else if (st.st_uid != ::geteuid()) {
      wrong = "belongs to uid " + std::to_string(st.st_uid) + ", not to this user";
    }
    if (!wrong.empty()) {
      error = home + "/" + name + " " + wrong + "; remove it, or set ETWRT_HOME to another " +
              "directory of your own with mode 0700";
      return false;
    }
  }
  return true;
}

std::string path_in(int dir_fd, const char* name) {
  return "/proc/self/fd/" + std::to_string(dir_fd) + "/" + name;
}

std::string socket_path(const std::string& home) { return home + "/" + kSocketName; }
std::string lock_path(const std::string& home) { return home + "/" + kLockName; }
std::string pid_path(const std::string& home) { return home + "/" + kPidName; }

}  // namespace etwrt
