// How a trace file's bytes reach the disk (docs/etwrt/internals.md, "Trace files (writing)"):
// whole buffers from page-aligned memory, several at once, with O_DIRECT where the file system
// takes it. A buffered write copies every byte into page-cache pages the kernel must first
// find; on a virtual machine whose free pages go back to the host, touching those pages is
// most of the logger's time, and a disk slower than the writers lets gigabytes of dirty pages
// pile up until the kernel stops the logger for seconds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

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

}  // namespace etwrt::broker
