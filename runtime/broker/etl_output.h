// How a trace file's bytes reach the disk (docs/etwrt/internals.md, "Trace files (writing)"):
// whole buffers from page-aligned memory, several at once, with O_DIRECT where the file system
// takes it. A buffered write copies every byte into page-cache pages the kernel must first
// find; on a virtual machine whose free pages go back to the host, touching those pages is
// most of the logger's time, and a disk slower than the writers lets gigabytes of dirty pages
// pile up until the kernel stops the logger for seconds.
#pragma once

#include <sys/uio.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace etwrt::broker {

struct AlignedFree {
  void operator()(std::byte* p) const { std::free(p); }
};
using AlignedBytes = std::unique_ptr<std::byte[], AlignedFree>;

// `bytes` rounded up to whole pages, page-aligned (what O_DIRECT asks of memory).
AlignedBytes aligned_bytes(std::size_t bytes);

// Turns O_DIRECT on for `fd`; false when the file system refuses it (the writes stay buffered).
bool use_direct_io(int fd);

// Writes all `n` bytes at `offset` (short writes and EINTR resumed). A direct write refused with
// EINVAL (alignment the file system wants more of) turns O_DIRECT off and is made buffered:
// `direct` says which mode the descriptor is in. False on failure, errno set.
bool write_fully(int fd, bool& direct, const std::byte* p, std::size_t n, std::uint64_t offset);
// The same for `parts` one after the other in the file from `offset` (pwritev: whole buffers
// from wherever they are in memory, with no copy into one block first).
bool write_fully(int fd, bool& direct, std::vector<iovec> parts, std::uint64_t offset);

// One write at a time (write_fully) in a thread of its own, so that the logger formats the next
// buffers while the disk takes the last ones. Its owner uses it from one thread; the memory given
// to start() stays untouched until wait() returned.
class BackgroundWriter {
 public:
  struct Outcome {
    bool ok = true;
    int error = 0;            // errno when !ok
    bool direct = false;      // whether the descriptor has O_DIRECT after the write
    std::uint64_t bytes = 0;  // the bytes written
  };
  BackgroundWriter() = default;
  ~BackgroundWriter();  // waits for the write in progress
  BackgroundWriter(const BackgroundWriter&) = delete;
  BackgroundWriter& operator=(const BackgroundWriter&) = delete;

  // Starts writing; the write started before must have been waited for.
  void start(int fd, bool direct, const std::byte* p, std::size_t n, std::uint64_t offset);
  void start(int fd, bool direct, std::vector<iovec> parts, std::uint64_t offset);
  // Waits for the write started last and says how it went.
  Outcome wait();

 private:
  void run();

  struct Job {
    int fd = -1;
    bool direct = false;
    std::vector<iovec> parts;
    std::uint64_t offset = 0;
  };
  std::mutex mu_;
  std::condition_variable cv_;
  Job job_;
  bool queued_ = false;  // job_ waits for the thread
  bool done_ = true;     // the last job is finished (outcome_ holds its result)
  bool quit_ = false;
  Outcome outcome_;
  std::thread thread_;  // started with the first write
};

}  // namespace etwrt::broker
