// File sessions in the broker's state: the logger that writes a session's .etl file.
#include "broker_state.h"
#include "trace_properties.h"
#if defined(ETWRT_MUTANTS)
#include "etwrt_mutant.h"
#endif

#include <time.h>
#include <unistd.h>

#include <cstdio>

namespace etwrt::broker {

ULONG BrokerState::start_logger(Session& s) {
  if (s.log_file.empty()) return ERROR_SUCCESS;  // no file session
  if (!log_files_) return ERROR_NOT_SUPPORTED;
  // StartTrace page: ERROR_BAD_PATHNAME when "another session is already using the file name".
  for (const auto& [handle, other] : sessions_) {
    if (other.logger && other.log_file == s.log_file) return ERROR_BAD_PATHNAME;
  }
  EtlSettings settings;
  settings.logger_name = s.name;
  settings.file_name = s.log_file;
  settings.buffer_bytes = s.buffer_size_kb * 1024;
  settings.log_file_mode = s.log_file_mode;
  settings.maximum_file_size = s.maximum_file_size;
  settings.clock = s.client_context;
  settings.logger_id = static_cast<std::uint16_t>(s.handle);
  // Configured, not online: every processor number a record may carry is below it.
  settings.processors = static_cast<std::uint32_t>(std::max(1L, ::sysconf(_SC_NPROCESSORS_CONF)));
  settings.start_file_time = s.start_time;
  settings.start_ns = s.pool->now_ns();
  timespec real{};
  ::clock_gettime(CLOCK_REALTIME, &real);
  const std::int64_t real_ns = real.tv_sec * 1'000'000'000LL + real.tv_nsec;
  settings.realtime_offset_ns = real_ns - static_cast<std::int64_t>(s.pool->now_ns());
#if defined(ETWRT_MUTANTS)
  // Mutant: the system-time clock forgets the wall clock's offset (time since boot as a date).
  if (etwrt::mutant::active("system-time-offset-dropped")) settings.realtime_offset_ns = 0;
#endif
  ULONG status = ERROR_SUCCESS;
  std::string reason;
  std::unique_ptr<FileLogger> logger =
      FileLogger::start(s.pool, s.pool_index, settings, s.flush_timer,
                        (s.log_file_mode & EVENT_TRACE_REAL_TIME_MODE) != 0, status, reason);
  if (!logger) {
    std::fprintf(stderr, "etwrt-broker: session %s: %s\n", s.name.c_str(), reason.c_str());
    return status;
  }
  s.logger = std::move(logger);
  return ERROR_SUCCESS;
}

// ControlTrace page, UPDATE: "LogFileNameOffset: Set this member if you want to switch to
// another log file ... If the offset is not zero and you do not change the log file name, the
// function returns an error"; ERROR_BAD_PATHNAME when "another session is already using the file
// name". etwrt choices (docs/etwrt/conformance.md): ERROR_INVALID_PARAMETER for the unchanged
// name, for a session with no log file and for an appending one; a NEWFILE session's new name
// is a pattern with one %d, as at StartTrace.
ULONG BrokerState::switch_log_file(Session& s, const std::string& name) {
  if (name.empty()) return ERROR_SUCCESS;  // no switch asked
  if (!s.logger || (s.log_file_mode & EVENT_TRACE_FILE_MODE_APPEND) != 0 || name == s.log_file) {
    return ERROR_INVALID_PARAMETER;
  }
  if ((s.log_file_mode & EVENT_TRACE_FILE_MODE_NEWFILE) != 0 && !newfile_pattern(name)) {
    return ERROR_INVALID_PARAMETER;
  }
  for (const auto& [handle, other] : sessions_) {
    if (other.logger && other.log_file == name) return ERROR_BAD_PATHNAME;
  }
  ULONG status = ERROR_SUCCESS;
  std::string reason;
  if (!s.logger->switch_file(name, status, reason)) {
    std::fprintf(stderr, "etwrt-broker: session %s: %s\n", s.name.c_str(), reason.c_str());
    return status;
  }
  s.log_file = name;
  return ERROR_SUCCESS;
}

}  // namespace etwrt::broker
