// What `etwh stress` adds for a profile with "file" (harness/stress/README.md, "File
// sessions"): the run's temporary folder the sessions log to, their EVENT_TRACE_PROPERTIES, and
// the disk's own sequential write rate in that folder, measured with fio in the same run as
// the limit a file session's rate is held against.
#pragma once

#include "harness/stress/engine.h"
#include "harness/stress/profile.h"

#include <evntrace.h>

#include <filesystem>
#include <optional>
#include <string>

namespace etwh::stress {

// A folder of its own under the temporary directory, removed with everything in it when the
// object goes. Throws StressHarnessError when it cannot be made.
class RunFolder {
 public:
  explicit RunFolder(const std::string& tag);
  ~RunFolder();
  RunFolder(const RunFolder&) = delete;
  RunFolder& operator=(const RunFolder&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Makes `props` (an etwh::Properties buffer of `props_bytes`) log to `file` as `settings` say:
// EVENT_TRACE_FILE_MODE_SEQUENTIAL or _CIRCULAR, MaximumFileSize in MB. Throws
// StressHarnessError when the name does not fit the buffer.
void set_log_file(EVENT_TRACE_PROPERTIES* props, std::size_t props_bytes,
                  const std::filesystem::path& file, const FileSettings& settings);

// The disk's sequential write rate where the files go: fio writing `megabytes` in 1 MiB
// blocks (buffered, fsync at the end: as the logger writes) in `folder`.
struct DiskRate {
  std::optional<double> mb_per_s;  // none: not measured (`unavailable` says why)
  std::string unavailable;
  std::string tool;  // "fio 3.33"
};
DiskRate measure_disk_write(const std::filesystem::path& folder, unsigned megabytes = 128);

// fio's JSON output (--output-format=json) to its write bandwidth in MB/s (10^6 bytes);
// none with the reason in `why` when the text holds no such figure.
std::optional<double> fio_write_mb_per_s(const std::string& json_text, std::string& why);

// Once a file session stopped and its file was read back: the file's size and how fast it was
// written, from go to the end of its STOP (CLOCK_MONOTONIC ns both); the bytes written are the
// file's and, for a circular file that wrapped, the buffers it overwrote.
void note_file_written(SessionResult& session, std::uint64_t go_ns, std::uint64_t stopped_ns,
                       std::uint64_t sequential_max_bytes = 0);

// CLOCK_MONOTONIC in ns (std::chrono::steady_clock), the clock of go.
std::uint64_t monotonic_ns();

}  // namespace etwh::stress
