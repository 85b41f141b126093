// A session's trace files being opened (etl_file.h): the first one, NEWFILE's next ones, the
// one ControlTrace(UPDATE) switches to, and an existing file APPEND carries on.
#include "etl_file.h"

#if defined(ETWRT_MUTANTS)
#include "etwrt_mutant.h"
#endif

#include <evntrace.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace etwrt::broker {
namespace {

ULONG status_of_errno(int error) {
  switch (error) {
    case ENOENT:
    case ENOTDIR: return ERROR_PATH_NOT_FOUND;
    case EACCES:
    case EPERM:
    case EROFS: return ERROR_ACCESS_DENIED;
    case ENOSPC:
    case EFBIG: return ERROR_DISK_FULL;
    default: return ERROR_BAD_PATHNAME;
  }
}

// What a log file name is when it is there and is not a regular file etwrt may write: a symlink
// (never written through), a directory, a FIFO, a device or a socket; nullptr otherwise.
const char* unwritable_shape(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return nullptr;
}

// The name of NEWFILE's file number `index` (the pattern's one %d).
std::string numbered(const std::string& pattern, std::uint32_t index) {
  const auto at = pattern.find("%d");
  if (at == std::string::npos) return pattern;
  return pattern.substr(0, at) + std::to_string(index) + pattern.substr(at + 2);
}

}  // namespace

bool EtlFile::open_file(std::uint32_t index, ULONG& status, std::string& reason) {
  const bool newfile = (settings_.log_file_mode & EVENT_TRACE_FILE_MODE_NEWFILE) != 0;
  const std::string name = newfile ? numbered(settings_.file_name, index) : settings_.file_name;
  const int fd = open_descriptor(name, status, reason);
  return fd >= 0 && adopt(fd, name, index, status, reason);
}

// Only a regular file is written (docs/etwrt/conformance.md, "Choices where the documents are
// silent"): a name that is anything else is refused before it is opened (opening a device or a
// FIFO can act), and the descriptor is checked again (the name may change in between; O_NOFOLLOW,
// O_NONBLOCK: no link followed, no FIFO waited on). -1 on failure, the file being written (if
// any) untouched.
int EtlFile::open_descriptor(const std::string& name, ULONG& status, std::string& reason) const {
  const bool append = (settings_.log_file_mode & EVENT_TRACE_FILE_MODE_APPEND) != 0;
  struct stat st {};
  const char* shape = nullptr;
  const bool existed = ::lstat(name.c_str(), &st) == 0;
  if (existed) shape = unwritable_shape(st.st_mode);
  if (shape == nullptr && !room_for(name, existed ? &st : nullptr, status, reason)) return -1;
  int fd = -1;
  if (shape == nullptr) {
    const int flags =
        O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | (append ? 0 : O_TRUNC);
    fd = ::open(name.c_str(), flags, 0644);
    if (fd < 0 && errno != ELOOP) {
      status = status_of_errno(errno);
      reason = name + ": " + std::strerror(errno);
      return -1;
    }
    if (fd < 0) shape = "a symbolic link";
    if (fd >= 0 && (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
      shape = unwritable_shape(st.st_mode) != nullptr ? unwritable_shape(st.st_mode)
                                                      : "not a regular file";
    }
  }
  if (shape != nullptr) {
    if (fd >= 0) ::close(fd);
    status = ERROR_ACCESS_DENIED;
    reason = name + ": " + shape + ", not a regular file: no log file is written there";
    return -1;
  }
  // EVENT_TRACE_FILE_MODE_PREALLOCATE (Logging Mode Constants page): "Reserves
  // EVENT_TRACE_PROPERTIES.MaximumFileSize bytes of disk space for the log file in advance. The
  // file occupies the entire space during logging"; close_file() reduces it.
  if ((settings_.log_file_mode & EVENT_TRACE_FILE_MODE_PREALLOCATE) != 0) {
    const int error = ::posix_fallocate(fd, 0, static_cast<off_t>(maximum_bytes()));
    if (error != 0) {
      ::close(fd);
      if (!existed) ::unlink(name.c_str());
      status = status_of_errno(error);
      reason = name + ": " + std::to_string(maximum_bytes()) +
               " bytes (MaximumFileSize) not reserved: " + std::strerror(error);
      return -1;
    }
  }
  return fd;
}

// StartTrace page, ERROR_DISK_FULL: "MaximumFileSize is nonzero and there is not
// MaximumFileSize bytes available for the log file", or "MaximumFileSize is zero and there is
// not an additional 200 MB available". Asked of the file system that holds the file's folder,
// before the file is made or cut: a refusal leaves a file of that name as it was. An existing
// file's bytes count as room unless it is appended to (then its size counts towards
// MaximumFileSize). Whether the folder is on the system drive is not asked (docs/etwrt/
// conformance.md, "Choices where the documents are silent").
bool EtlFile::room_for(const std::string& name, const struct stat* existing, ULONG& status,
                       std::string& reason) const {
  const bool append = (settings_.log_file_mode & EVENT_TRACE_FILE_MODE_APPEND) != 0;
  const auto slash = name.rfind('/');
  const std::string folder = slash == std::string::npos ? "." : name.substr(0, slash + 1);
  struct statvfs fs {};
  if (::statvfs(folder.c_str(), &fs) != 0) return true;  // the open says why it cannot be made
  std::uint64_t room = std::uint64_t{fs.f_bavail} * fs.f_frsize;
  std::uint64_t needed = settings_.maximum_file_size != 0 ? maximum_bytes() : kRoomWithoutMaximum;
  if (existing != nullptr && append && settings_.maximum_file_size != 0) {
    needed -= std::min<std::uint64_t>(needed, static_cast<std::uint64_t>(existing->st_size));
  } else if (existing != nullptr && !append) {
    room += static_cast<std::uint64_t>(existing->st_blocks) * 512;  // freed when it is cut
  }
  if (room >= needed) return true;
  status = ERROR_DISK_FULL;
  reason = name + ": " + std::to_string(room) + " bytes free on its file system, " +
           std::to_string(needed) +
           (settings_.maximum_file_size != 0 ? " needed (MaximumFileSize)"
                                             : " needed (200 MB when MaximumFileSize is 0)");
  return false;
}

// The file being closed (a NEWFILE switch, an UPDATE's new name, the stop: `sync`): a
// preallocated one "is reduced to the size needed" (Logging Mode Constants page).
void EtlFile::close_file(bool sync) {
  if (fd_ < 0) return;
  if ((settings_.log_file_mode & EVENT_TRACE_FILE_MODE_PREALLOCATE) != 0) {
    const std::uint64_t used =
        compressed_ ? write_at_ : file_buffers_ * std::uint64_t{settings_.buffer_bytes};
    if (::ftruncate(fd_, static_cast<off_t>(used)) != 0) {
      std::fprintf(stderr, "etwrt-broker: %s: not reduced to %llu bytes: %s\n",
                   current_name_.c_str(), static_cast<unsigned long long>(used),
                   std::strerror(errno));
    }
  }
  if (sync) ::fsync(fd_);
  ::close(fd_);
  fd_ = -1;
}

// The file `fd` (opened as `name`, NEWFILE's number `index`) becomes the one written: the one
// before is closed, and the new one gets its header buffer (or, appending, carries on).
bool EtlFile::adopt(int fd, const std::string& name, std::uint32_t index, ULONG& status,
                    std::string& reason) {
  const bool append = (settings_.log_file_mode & EVENT_TRACE_FILE_MODE_APPEND) != 0;
  close_file(false);
  fd_ = fd;
  current_name_ = name;
  file_index_ = index;
  // O_DIRECT where every write is whole buffers at multiples of BufferSize from aligned memory;
  // a compressed file's buffers are not, and an appended file's header is read first.
  direct_ = !compressed_ && !append && settings_.buffer_bytes % 4096 == 0 && use_direct_io(fd_);
  slot_ = 1;
  write_at_ = settings_.buffer_bytes;
  file_buffers_ = 1;
  wrapped_ = false;
  slot_events_.assign(1, 0);
  if (append && !adopt_existing(status, reason)) return false;
  if (slot_ == 1) {
    write_header_buffer(0, 0);
    buffers_written_.fetch_add(1, std::memory_order_relaxed);
  }
  return true;
}

bool EtlFile::switch_to(const std::string& name, ULONG& status, std::string& reason) {
  const bool newfile = (settings_.log_file_mode & EVENT_TRACE_FILE_MODE_NEWFILE) != 0;
  const std::string first = newfile ? numbered(name, 1) : name;
  const int fd = open_descriptor(first, status, reason);
  if (fd < 0) return false;
  flush();  // what the session logged so far, to the file it logged it for
  if (fd_ >= 0) write_final_header();
  settings_.file_name = name;
  full_ = false;  // a sequential file that filled up: the new one has room
  return adopt(fd, first, 1, status, reason);
}

// EVENT_TRACE_FILE_MODE_APPEND: an existing file must have been written with the same
// BufferSize, NumberOfProcessors and clock (Logging Mode Constants page); its header's counts
// are carried on.
bool EtlFile::adopt_existing(ULONG& status, std::string& reason) {
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || st.st_size == 0) return true;  // a new file
  const std::uint32_t bs = settings_.buffer_bytes;
  std::vector<std::byte> head(bs);
  if (st.st_size % bs != 0 || ::pread(fd_, head.data(), bs, 0) != static_cast<ssize_t>(bs)) {
    status = ERROR_INVALID_PARAMETER;
    reason = current_name_ + ": not a trace file of BufferSize " + std::to_string(bs);
    return false;
  }
  const std::byte* h = head.data() + kBufferHeaderBytes + kSystemHeaderBytes;
  auto u32 = [&](std::size_t off) {
    std::uint32_t v;
    std::memcpy(&v, h + off, 4);
    return v;
  };
  if (u32(0x00) != bs || u32(0x0C) != settings_.processors || u32(0x110) != settings_.clock) {
    status = ERROR_INVALID_PARAMETER;
    reason = current_name_ + ": BufferSize, NumberOfProcessors or clock differ from the file's";
    return false;
  }
  appended_lost_ = u32(0x30);
#if defined(ETWRT_MUTANTS)
  if (etwrt::mutant::active("append-lost-dropped")) appended_lost_ = 0;  // the earlier loss gone
#endif
  appended_buffers_lost_ = u32(0x114);
  std::memcpy(&appended_start_, h + 0x108, 8);
  std::memcpy(&appended_system_time_, h - kSystemHeaderBytes + 16, 8);
  file_buffers_ = static_cast<std::uint64_t>(st.st_size) / bs;
  slot_ = file_buffers_;
  slot_events_.assign(slot_, 0);
  return true;
}

}  // namespace etwrt::broker
