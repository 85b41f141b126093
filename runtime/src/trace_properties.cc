#include "trace_properties.h"

#include <cstring>

namespace etwrt {
namespace {

constexpr ULONG kFixed = sizeof(EVENT_TRACE_PROPERTIES);

StartTraceCheck fail(ULONG status, std::string reason) {
  StartTraceCheck check;
  check.status = status;
  check.reason = std::move(reason);
  return check;
}

// Offsets that point into the fixed part would overwrite the structure itself.
bool offset_in_tail(ULONG offset, ULONG buffer_size) {
  return offset >= kFixed && offset < buffer_size;
}

// LogFileMode against the log file and MaximumFileSize (Logging Mode Constants page).
StartTraceCheck check_log_file_mode(ULONG mode, const std::string& log_file,
                                    ULONG maximum_file_size) {
  const ULONG file_kinds = mode & (EVENT_TRACE_FILE_MODE_SEQUENTIAL |
                                   EVENT_TRACE_FILE_MODE_CIRCULAR | EVENT_TRACE_FILE_MODE_NEWFILE);
  if (file_kinds != 0 && (file_kinds & (file_kinds - 1)) != 0) {
    return fail(ERROR_INVALID_PARAMETER,
                "SEQUENTIAL, CIRCULAR and NEWFILE file modes exclude each other");
  }
  // Logging Mode Constants page: APPEND is not for CIRCULAR, NEWFILE, REAL_TIME or PRIVATE.
  constexpr ULONG kNotWithAppend = EVENT_TRACE_FILE_MODE_CIRCULAR | EVENT_TRACE_FILE_MODE_NEWFILE |
                                   EVENT_TRACE_REAL_TIME_MODE | EVENT_TRACE_PRIVATE_LOGGER_MODE;
  if ((mode & EVENT_TRACE_FILE_MODE_APPEND) != 0 && (mode & kNotWithAppend) != 0) {
    return fail(ERROR_INVALID_PARAMETER,
                "APPEND cannot be combined with CIRCULAR, NEWFILE, REAL_TIME or PRIVATE_LOGGER");
  }
  if ((mode & EVENT_TRACE_FILE_MODE_NEWFILE) != 0 && !newfile_pattern(log_file)) {
    return fail(ERROR_INVALID_PARAMETER, "NEWFILE needs a log file name with one %d");
  }
  if ((mode & EVENT_TRACE_BUFFERING_MODE) != 0 && !log_file.empty()) {
    return fail(ERROR_INVALID_PARAMETER, "BUFFERING_MODE sessions take no log file");
  }
  if ((mode & (EVENT_TRACE_FILE_MODE_NEWFILE | EVENT_TRACE_FILE_MODE_CIRCULAR)) != 0 &&
      maximum_file_size == 0) {
    return fail(ERROR_INVALID_PARAMETER, "NEWFILE and CIRCULAR need a MaximumFileSize");
  }
  // PREALLOCATE: "You must set EVENT_TRACE_PROPERTIES.MaximumFileSize", "You cannot use the
  // mode for private event tracing sessions" (Logging Mode Constants page).
  if ((mode & EVENT_TRACE_FILE_MODE_PREALLOCATE) != 0 &&
      (maximum_file_size == 0 || (mode & EVENT_TRACE_PRIVATE_LOGGER_MODE) != 0)) {
    return fail(ERROR_INVALID_PARAMETER,
                "PREALLOCATE needs a MaximumFileSize and is not for private sessions");
  }
  if (log_file.empty() && (mode & (EVENT_TRACE_REAL_TIME_MODE | EVENT_TRACE_BUFFERING_MODE)) == 0) {
    return fail(ERROR_BAD_PATHNAME, "neither a log file nor a real-time or buffering mode");
  }
  return {};
}

}  // namespace

// NEWFILE: "the specified file name must be a formatted string" with a %d (Logging Mode
// Constants page).
bool newfile_pattern(const std::string& name) {
  const auto at = name.find("%d");
  return at != std::string::npos && name.find('%') == at &&
         name.find('%', at + 2) == std::string::npos;
}

const char* log_file_name_at(const EVENT_TRACE_PROPERTIES* properties, std::string& name) {
  name.clear();
  const ULONG offset = properties->LogFileNameOffset;
  if (offset == 0) return nullptr;
  const ULONG size = properties->Wnode.BufferSize;
  if (!offset_in_tail(offset, size)) {
    return "LogFileNameOffset is not inside the buffer past the fixed part";
  }
  const char* text = reinterpret_cast<const char*>(properties) + offset;
  const void* nul = std::memchr(text, 0, size - offset);
  if (nul == nullptr) return "log file name is not NUL-terminated in the buffer";
  name.assign(text, static_cast<const char*>(nul));
  return nullptr;
}

StartTraceCheck check_start_trace(const TRACEHANDLE* handle, const char* instance_name,
                                  const EVENT_TRACE_PROPERTIES* properties) {
  if (handle == nullptr) return fail(ERROR_INVALID_PARAMETER, "TraceHandle is NULL");
  if (properties == nullptr) return fail(ERROR_INVALID_PARAMETER, "Properties is NULL");
  if (instance_name == nullptr) return fail(ERROR_INVALID_PARAMETER, "InstanceName is NULL");
  if (*instance_name == '\0') return fail(ERROR_INVALID_PARAMETER, "InstanceName is empty");
  const ULONG size = properties->Wnode.BufferSize;
  if (size < kFixed) {
    return fail(ERROR_BAD_LENGTH, "Wnode.BufferSize " + std::to_string(size) +
                                      " is smaller than EVENT_TRACE_PROPERTIES");
  }
  if (!offset_in_tail(properties->LoggerNameOffset, size)) {
    return fail(ERROR_INVALID_PARAMETER, "LoggerNameOffset " +
                                             std::to_string(properties->LoggerNameOffset) +
                                             " is not inside the buffer past the fixed part");
  }
  std::string log_file;
  if (const char* bad = log_file_name_at(properties, log_file)) {
    return fail(ERROR_INVALID_PARAMETER, bad);
  }
  const std::size_t name_bytes = std::strlen(instance_name);
  if (name_bytes > kMaxSessionNameBytes) {
    return fail(ERROR_BAD_LENGTH,
                "session name is longer than " + std::to_string(kMaxSessionNameBytes) + " bytes");
  }
  if (name_bytes + 1 > size - properties->LoggerNameOffset) {
    return fail(ERROR_BAD_LENGTH, "session name does not fit at LoggerNameOffset");
  }
  // StartTrace page (and Wine's test_start_trace, run on Windows): SystemTraceControlGuid is
  // the NT Kernel Logger's alone.
  if (IsEqualGUID(properties->Wnode.Guid, SystemTraceControlGuid) &&
      std::strcmp(instance_name, KERNEL_LOGGER_NAMEA) != 0) {
    return fail(ERROR_INVALID_PARAMETER,
                "Wnode.Guid is SystemTraceControlGuid but the name is not KERNEL_LOGGER_NAME");
  }
  if (properties->Wnode.ClientContext > kClockCpuCycles) {
    return fail(ERROR_INVALID_PARAMETER,
                "Wnode.ClientContext " + std::to_string(properties->Wnode.ClientContext) +
                    " is not a clock type (1 QPC, 2 system time, 3 CPU cycles)");
  }
  if (StartTraceCheck mode =
          check_log_file_mode(properties->LogFileMode, log_file, properties->MaximumFileSize);
      mode.status != ERROR_SUCCESS) {
    return mode;
  }
  StartTraceCheck ok;
  ok.log_file_name = std::move(log_file);
  return ok;
}

ULONG check_control_trace(TRACEHANDLE handle, const char* instance_name,
                          const EVENT_TRACE_PROPERTIES* properties, ULONG control_code) {
  if (properties == nullptr) return ERROR_INVALID_PARAMETER;
  if (properties->Wnode.BufferSize < kFixed) return ERROR_BAD_LENGTH;
  if (handle == 0 && (instance_name == nullptr || *instance_name == '\0')) {
    return ERROR_INVALID_PARAMETER;
  }
  switch (control_code) {
    case EVENT_TRACE_CONTROL_QUERY:
    case EVENT_TRACE_CONTROL_STOP:
    case EVENT_TRACE_CONTROL_UPDATE:
    case EVENT_TRACE_CONTROL_FLUSH: return ERROR_SUCCESS;
    default: return ERROR_INVALID_PARAMETER;
  }
}

ULONG check_query_all_traces(EVENT_TRACE_PROPERTIES* const* array, ULONG count,
                             const ULONG* logger_count) {
  // The page: "PropertyArrayCount is zero or greater than the maximum number of supported
  // sessions" or "PropertyArray is NULL". Windows 10 allows more than 64; etwrt's maximum is
  // the most its broker can be set to run.
  if (array == nullptr || logger_count == nullptr || count == 0 || count > kMostSessions) {
    return ERROR_INVALID_PARAMETER;
  }
  for (ULONG i = 0; i < count; ++i) {
    if (array[i] == nullptr) return ERROR_INVALID_PARAMETER;
    if (array[i]->Wnode.BufferSize < sizeof(EVENT_TRACE_PROPERTIES)) return ERROR_BAD_LENGTH;
  }
  return ERROR_SUCCESS;
}

bool write_logger_name(EVENT_TRACE_PROPERTIES* properties, const std::string& name) {
  const ULONG size = properties->Wnode.BufferSize;
  const ULONG offset = properties->LoggerNameOffset;
  if (!offset_in_tail(offset, size) || name.size() + 1 > size - offset) return false;
  std::memcpy(reinterpret_cast<char*>(properties) + offset, name.c_str(), name.size() + 1);
  return true;
}

namespace {

// Writes `name` (its NUL included) at `offset` when it lies in the tail and the room up to
// `end` holds it; the room is zeroed first, as after a fresh write.
bool write_name_at(EVENT_TRACE_PROPERTIES* properties, ULONG offset, ULONG end,
                   std::string_view name) {
  const ULONG size = properties->Wnode.BufferSize;
  if (!offset_in_tail(offset, size) || end > size || end <= offset) return false;
  if (name.size() > end - offset) return false;
  char* base = reinterpret_cast<char*>(properties);
  std::memset(base + offset, 0, end - offset);
  std::memcpy(base + offset, name.data(), name.size());
  return true;
}

}  // namespace

ULONG write_control_names(EVENT_TRACE_PROPERTIES* properties, std::string_view logger,
                          std::string_view log_file) {
  const ULONG size = properties->Wnode.BufferSize;
  const ULONG file_offset = properties->LogFileNameOffset;
  const ULONG logger_offset =
      properties->LoggerNameOffset != 0 ? properties->LoggerNameOffset : kFixed;
  const ULONG logger_end = file_offset > logger_offset ? file_offset : size;
  if (!write_name_at(properties, logger_offset, logger_end, logger)) return ERROR_MORE_DATA;
  properties->LoggerNameOffset = logger_offset;

  const ULONG file_at =
      file_offset != 0 ? file_offset : logger_offset + static_cast<ULONG>(logger.size());
  const ULONG file_end = logger_offset > file_at ? logger_offset : size;
  if (!write_name_at(properties, file_at, file_end, log_file)) return ERROR_MORE_DATA;
  properties->LogFileNameOffset = file_at;
  return ERROR_SUCCESS;
}

}  // namespace etwrt
