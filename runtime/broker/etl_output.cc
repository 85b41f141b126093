#include "etl_output.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <new>

namespace etwrt::broker {
namespace {

constexpr std::size_t kPage = 4096;

}  // namespace

AlignedBytes aligned_bytes(std::size_t bytes) {
  const std::size_t rounded = (bytes + kPage - 1) / kPage * kPage;
  void* p = std::aligned_alloc(kPage, rounded == 0 ? kPage : rounded);
  if (p == nullptr) throw std::bad_alloc();
  return AlignedBytes(static_cast<std::byte*>(p));
}

bool use_direct_io(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  return flags >= 0 && ::fcntl(fd, F_SETFL, flags | O_DIRECT) == 0;
}

bool write_fully(int fd, bool& direct, const std::byte* p, std::size_t n, std::uint64_t offset) {
  while (n > 0) {
    const ssize_t w = ::pwrite(fd, p, n, static_cast<off_t>(offset));
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno == EINVAL && direct) {
      direct = false;
      const int flags = ::fcntl(fd, F_GETFL);
      if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_DIRECT) != 0) return false;
      continue;
    }
    if (w <= 0) {
      if (w == 0) errno = EIO;
      return false;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
    offset += static_cast<std::uint64_t>(w);
  }
  return true;
}

}  // namespace etwrt::broker
