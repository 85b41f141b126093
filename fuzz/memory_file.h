// For loaders that take only a path (load_catalog, load_expectations have no text form): the
// input is written to an anonymous in-memory file, reused for every input of the process, and
// named by its /proc/self/fd path. Linux only, as the fuzz build is.
#pragma once

#include "fuzz_target.h"

#include <sys/mman.h>
#include <unistd.h>

namespace etwh::fuzz {

// The path of a file holding exactly `data` (the previous input's file, rewritten).
inline std::string memory_file(const std::uint8_t* data, std::size_t size) {
  static const int fd = memfd_create("fuzz-input", MFD_CLOEXEC);
  if (fd < 0) finding("memfd_create failed");
  if (ftruncate(fd, 0) != 0) finding("ftruncate failed");
  std::size_t written = 0;
  while (written < size) {
    const ssize_t n = pwrite(fd, data + written, size - written, static_cast<off_t>(written));
    if (n <= 0) finding("pwrite failed");
    written += static_cast<std::size_t>(n);
  }
  return "/proc/self/fd/" + std::to_string(fd);
}

}  // namespace etwh::fuzz
