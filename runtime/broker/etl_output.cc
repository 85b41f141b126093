#include "etl_output.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <new>

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
  while (n > 0) {
    const ssize_t w = ::pwrite(fd, p, n, static_cast<off_t>(offset));
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
    p += w;
    n -= static_cast<std::size_t>(w);
    offset += static_cast<std::uint64_t>(w);
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
  {
    std::lock_guard lock(mu_);
    job_ = Job{fd, direct, p, n, offset};
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
    outcome.ok = write_fully(job.fd, job.direct, job.p, job.n, job.offset);
    outcome.error = outcome.ok ? 0 : errno;
    outcome.direct = job.direct;
    outcome.bytes = outcome.ok ? job.n : 0;
    lock.lock();
    outcome_ = outcome;
    done_ = true;
    cv_.notify_all();
  }
}

}  // namespace etwrt::broker
