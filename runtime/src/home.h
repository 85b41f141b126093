// etwrt: the broker's home (ETWRT_HOME), where its socket, lock, pid file and log live. Both
// the library and the broker open it the same way: without following a link, checked (a
// directory of this user that nobody else can reach) and refused when wrong, never repaired;
// the files in it are then reached through that verified descriptor only.
#pragma once

#include <string>

namespace etwrt {

inline constexpr const char* kSocketName = "broker.sock";
inline constexpr const char* kLockName = "broker.lock";
inline constexpr const char* kPidName = "broker.pid";
inline constexpr const char* kLogName = "broker.log";

// broker.log is emptied when a broker starts and finds it larger than this.
inline constexpr long kMaxLogBytes = 1L << 20;

// The directory of the broker: $ETWRT_HOME, else $XDG_RUNTIME_DIR/etwrt, else /tmp/etwrt-<uid>.
std::string broker_home();

// Opens `home` (creating it with mode 0700 when absent; its parent must exist) as an
// O_DIRECTORY descriptor (close-on-exec), refusing a symbolic link, anything but a directory,
// a directory owned by another user and one with any group or other permission bit. On
// refusal returns -1 and sets `error` to the path, what is wrong and the remedy.
int open_private_dir(const std::string& home, std::string& error);

// open_private_dir without keeping the descriptor (for tests and tools).
bool ensure_private_dir(const std::string& home, std::string& error);

// Checks the broker's files present in the verified home `dir_fd`: none may be a symbolic
// link, and each must be owned by this user (a socket, the lock, the pid file, the log). False
// with `error` naming the file and the remedy.
bool check_home_files(int dir_fd, const std::string& home, std::string& error);

// A path that reaches `name` inside `dir_fd` (for the calls that take paths only: bind,
// connect): "/proc/self/fd/<dir_fd>/<name>".
std::string path_in(int dir_fd, const char* name);

// Paths for messages.
std::string socket_path(const std::string& home);
std::string lock_path(const std::string& home);
std::string pid_path(const std::string& home);

}  // namespace etwrt
