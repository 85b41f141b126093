#include "etl_output.h"

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <new>
#include <utility>

namespace etwrt::broker {
namespace {

constexpr std::size_t kPage = 4096;

// O_DIRECT on or off for `fd`; false when fcntl refuses.
bool set_direct(int fd, bool on) {
  const int flags = ::fcntl(fd, F_GETFL);
  return flags >= 0 && ::fcntl(fd, F_SETFL, on ? flags | O_DIRECT : flags & ~O_DIRECT) == 0;
}

}  // namespace

AlignedBytes aligned_bytes(std::size_t bytes) {
  const std::size_t rounded = (bytes + kPage - 1) / kPage * kPage;
  void* p = std::aligned_alloc(kPage, rounded == 0 ? kPage : rounded);
  if (p == nullptr) throw std::bad_alloc();
  return AlignedBytes(static_cast<std::byte*>(p));
}

bool use_direct_io(int fd) { return set_direct(fd, true); }

bool write_fully(int fd, bool& direct, const std::byte* p, std::size_t n, std::uint64_t offset) {
  return write_fully(fd, direct, {iovec{const_cast<std::byte*>(p), n}}, offset);
}

bool write_fully(int fd, bool& direct, std::vector<iovec> parts, std::uint64_t offset) {
  std::size_t first = 0;  // the first part not wholly written
  while (first < parts.size()) {
    if (parts[first].iov_len == 0) {
      ++first;
      continue;
    }
    const auto count = static_cast<int>(std::min<std::size_t>(parts.size() - first, IOV_MAX));
    const ssize_t w = ::pwritev(fd, parts.data() + first, count, static_cast<off_t>(offset));
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno == EINVAL && direct) {
      direct = false;
      if (!set_direct(fd, false)) return false;
      continue;
    }
    if (w <= 0) {
      if (w == 0) errno = EIO;
      return false;
    }
    offset += static_cast<std::uint64_t>(w);
    // A short write ends inside some part: the rest of it comes first next time.
    for (auto left = static_cast<std::size_t>(w); left > 0;) {
      iovec& part = parts[first];
      const std::size_t n = std::min(left, part.iov_len);
      part.iov_base = static_cast<std::byte*>(part.iov_base) + n;
      part.iov_len -= n;
      left -= n;
      if (part.iov_len == 0) ++first;
    }
  }
  return true;
}

BackgroundWriter::~BackgroundWriter() {
  {
    std::lock_guard lock(mu_);
    quit_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void BackgroundWriter::start(int fd, bool direct, const std::byte* p, std::size_t n,
                             std::uint64_t offset) {
  start(fd, direct, {iovec{const_cast<std::byte*>(p), n}}, offset);
}

void BackgroundWriter::start(int fd, bool direct, std::vector<iovec> parts, std::uint64_t offset) {
  {
    std::lock_guard lock(mu_);
    job_ = Job{fd, direct, std::move(parts), offset};
    queued_ = true;
    done_ = false;
  }
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  cv_.notify_all();
}

BackgroundWriter::Outcome BackgroundWriter::wait() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return done_; });
  return outcome_;
}

void BackgroundWriter::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return queued_ || quit_; });
    if (!queued_) return;  // quitting, nothing left to write
    Job job = std::move(job_);
    queued_ = false;
    lock.unlock();
    Outcome outcome;
    std::uint64_t bytes = 0;
    for (const iovec& part : job.parts) bytes += part.iov_len;
    outcome.ok = write_fully(job.fd, job.direct, std::move(job.parts), job.offset);
    outcome.error = outcome.ok ? 0 : errno;
    outcome.direct = job.direct;
    outcome.bytes = outcome.ok ? bytes : 0;
    lock.lock();
    outcome_ = outcome;
    done_ = true;
    cv_.notify_all();
  }
}

}  // namespace etwrt::broker
