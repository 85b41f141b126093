// etwrt's own calls into Linux, in one place (as googletest's internal::posix): the futex the
// data plane's readers sleep on, the memfd a session's pool lives in, descriptors passed over
// the broker's socket (SCM_RIGHTS), and the lock that keeps one broker per ETWRT_HOME. Internal
// to etwrt (the library, the broker, the data plane); not installed. Everything is inline: the
// EventWrite path reaches futex_wake_all() and must not pay a call for it.
#pragma once

#include <linux/futex.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>

namespace etwrt::os {

// Wakes every waiter on `word`. Shared (not FUTEX_PRIVATE): writers and the reader are
// different processes mapping one memfd.
inline void futex_wake_all(std::atomic<std::uint32_t>& word) {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE, INT32_MAX, nullptr,
            nullptr, 0);
}

// Sleeps while `word` still holds `token`, at most `timeout_ns`; true when it changed.
inline bool futex_wait_change(std::atomic<std::uint32_t>& word, std::uint32_t token,
                              std::uint64_t timeout_ns) {
  if (word.load(std::memory_order_acquire) != token) return true;
  const timespec timeout{static_cast<time_t>(timeout_ns / 1000000000ull),
                         static_cast<long>(timeout_ns % 1000000000ull)};
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT, token, &timeout,
            nullptr, 0);
  return word.load(std::memory_order_acquire) != token;
}

// An anonymous file for shared memory, close-on-exec and sealable; -1 with errno on failure.
inline int shared_memory_file(const char* name) {
  return ::memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
}

// One send() of `size` bytes at `data`, with `pass_fd` riding on the first byte (SCM_RIGHTS)
// when >= 0. Never raises SIGPIPE. Returns what send() returns.
inline ssize_t send_with_fd(int socket, const void* data, std::size_t size, int pass_fd) {
  if (pass_fd < 0) return ::send(socket, data, size, MSG_NOSIGNAL);
  iovec io{const_cast<void*>(data), size};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &io;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
  return ::sendmsg(socket, &msg, MSG_NOSIGNAL);
}

// recv() that also collects the descriptors passed with SCM_RIGHTS (close-on-exec), in order.
inline ssize_t receive_with_fds(int socket, char* buffer, std::size_t size, std::deque<int>& fds) {
  iovec io{buffer, size};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 16)];
  msghdr msg{};
  msg.msg_iov = &io;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  const ssize_t n = ::recvmsg(socket, &msg, MSG_CMSG_CLOEXEC);
  if (n < 0) return n;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int received;
      std::memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      fds.push_back(received);
    }
  }
  return n;
}

// A descriptor that becomes readable when process `pid` ends (pidfd_open; close-on-exec);
// -1 with errno (ESRCH: no such process; ENOSYS: a kernel before 5.3).
inline int process_exit_fd(pid_t pid) {
#if defined(SYS_pidfd_open)
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

// Takes the exclusive lock of `fd`'s file without waiting; false when another process holds it.
inline bool try_lock_exclusive(int fd) { return ::flock(fd, LOCK_EX | LOCK_NB) == 0; }

}  // namespace etwrt::os
