// The W entry points of libetwrt: names in UTF-16 (WCHAR is a 16-bit unit whatever the
// caller's wchar_t), converted to the UTF-8 the A entry points and the broker use, and the
// session name written back in UTF-16 where Windows writes it. Each W call validates what is
// wide about its arguments, then does its work through the A call on a narrow copy, so that a
// failure leaves the caller's buffers as they were.
#include "consumer_open.h"
#include "replies.h"
#include "trace_properties.h"

#include <etwh/utf16.h>

#include <windows.h>
#include <evntrace.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace {

using etwh::utf16::append_utf16;
using etwh::utf16::to_utf8;

constexpr ULONG kFixed = sizeof(EVENT_TRACE_PROPERTIES);

// The units of a NUL-terminated UTF-16 string, without the NUL.
std::u16string wide_string(const WCHAR* text) {
  std::u16string units;
  for (; *text != 0; ++text) units.push_back(static_cast<char16_t>(*text));
  return units;
}

// UTF-8 (as the broker keeps names, checked by the A entry points) to UTF-16; false when
// the bytes are not UTF-8.
bool to_utf16(const std::string& text, std::u16string& out) {
  out.clear();
  for (std::size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const std::size_t extra = lead < 0x80 ? 0 : lead >= 0xF0 ? 3 : lead >= 0xE0 ? 2 : 1;
    if ((lead >= 0x80 && lead < 0xC2) || lead > 0xF4 || i + extra >= text.size()) return false;
    char32_t c = extra == 0 ? lead : lead & (0x3F >> extra);
    for (std::size_t k = 1; k <= extra; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) return false;
      c = (c << 6) | (next & 0x3F);
    }
    i += extra + 1;
    append_utf16(out, c);
  }
  return true;
}

bool offset_in_tail(ULONG offset, ULONG buffer_size) {
  return offset >= kFixed && offset < buffer_size;
}

// The wide string at `offset` of a properties buffer, which must end (NUL unit) inside it.
bool wide_text_at(const EVENT_TRACE_PROPERTIES* properties, ULONG offset, std::u16string& out) {
  const auto* base = reinterpret_cast<const unsigned char*>(properties);
  out.clear();
  for (ULONG at = offset; at + sizeof(char16_t) <= properties->Wnode.BufferSize;
       at += sizeof(char16_t)) {
    char16_t unit;
    std::memcpy(&unit, base + at, sizeof unit);  // The offset need not be aligned.
    if (unit == 0) return true;
    out.push_back(unit);
  }
  return false;
}

// Writes `name` and its NUL at LoggerNameOffset when it fits, as the A calls write theirs.
void write_wide_logger_name(EVENT_TRACE_PROPERTIES* properties, const std::u16string& name) {
  const ULONG size = properties->Wnode.BufferSize;
  const ULONG offset = properties->LoggerNameOffset;
  const std::size_t bytes = (name.size() + 1) * sizeof(char16_t);
  if (!offset_in_tail(offset, size) || bytes > size - offset) return;
  auto* base = reinterpret_cast<unsigned char*>(properties);
  std::memcpy(base + offset, name.c_str(), bytes);
}

// A UTF-16 string's bytes with its two-byte NUL, as write_control_names takes a W name.
std::string_view utf16_bytes(const std::u16string& text) {
  return std::string_view(reinterpret_cast<const char*>(text.c_str()),
                          (text.size() + 1) * sizeof(char16_t));
}

// A narrow EVENT_TRACE_PROPERTIES for the A call: the caller's fixed part, then room for a
// UTF-8 session name (up to etwrt's limit) and the UTF-8 log file name, if any.
class NarrowProperties {
 public:
  NarrowProperties(const EVENT_TRACE_PROPERTIES& wide, const std::string& log_file)
      : size_(kFixed + kNameRoom + log_file.size() + 1), bytes_(new char[size_]()) {
    std::memcpy(bytes_.get(), &wide, kFixed);
    EVENT_TRACE_PROPERTIES* p = get();
    p->Wnode.BufferSize = static_cast<ULONG>(size_);
    p->LoggerNameOffset = kFixed;
    p->LogFileNameOffset = 0;
    if (!log_file.empty()) {
      p->LogFileNameOffset = static_cast<ULONG>(kFixed + kNameRoom);
      std::memcpy(bytes_.get() + kFixed + kNameRoom, log_file.data(), log_file.size());
    }
  }

  EVENT_TRACE_PROPERTIES* get() { return reinterpret_cast<EVENT_TRACE_PROPERTIES*>(bytes_.get()); }

  // The session name the A call wrote back (empty if none).
  std::string logger_name() const { return std::string(bytes_.get() + kFixed); }

  // The A call's results into the caller's buffer: the fixed part but for the caller's own
  // size and offsets, then the session name in UTF-16.
  bool copy_back(EVENT_TRACE_PROPERTIES* wide) {
    std::u16string name;
    if (!to_utf16(logger_name(), name)) return false;
    const ULONG size = wide->Wnode.BufferSize;
    const ULONG logger_offset = wide->LoggerNameOffset;
    const ULONG file_offset = wide->LogFileNameOffset;
    std::memcpy(wide, bytes_.get(), kFixed);
    wide->Wnode.BufferSize = size;
    wide->LoggerNameOffset = logger_offset;
    wide->LogFileNameOffset = file_offset;
    write_wide_logger_name(wide, name);
    return true;
  }

 private:
  static constexpr std::size_t kNameRoom = etwrt::kMaxSessionNameBytes + 1;
  std::size_t size_;
  std::unique_ptr<char[]> bytes_;  // Zero-filled: the NULs after each name.
};

// StartTraceW's checks of what is wide; the rest is StartTraceA's. On success `name` and
// `log_file` hold the UTF-8 names.
ULONG check_start_trace_w(const TRACEHANDLE* handle, const WCHAR* instance_name,
                          const EVENT_TRACE_PROPERTIES* properties, std::string& name,
                          std::string& log_file) {
  if (handle == nullptr || instance_name == nullptr || properties == nullptr) {
    return ERROR_INVALID_PARAMETER;
  }
  const ULONG size = properties->Wnode.BufferSize;
  if (size < kFixed) return ERROR_BAD_LENGTH;
  if (!offset_in_tail(properties->LoggerNameOffset, size)) return ERROR_INVALID_PARAMETER;
  const std::u16string wide_name = wide_string(instance_name);
  if (!to_utf8(wide_name, name)) return ERROR_INVALID_PARAMETER;
  if ((wide_name.size() + 1) * sizeof(char16_t) > size - properties->LoggerNameOffset) {
    return ERROR_BAD_LENGTH;
  }
  log_file.clear();
  if (properties->LogFileNameOffset != 0) {
    std::u16string wide_file;
    if (!offset_in_tail(properties->LogFileNameOffset, size) ||
        !wide_text_at(properties, properties->LogFileNameOffset, wide_file) ||
        !to_utf8(wide_file, log_file)) {
      return ERROR_INVALID_PARAMETER;
    }
  }
  return ERROR_SUCCESS;
}

// An optional wide argument in UTF-8: NULL stays NULL (`present` false).
bool optional_utf8(const WCHAR* text, std::string& out, bool& present) {
  present = text != nullptr;
  return !present || to_utf8(wide_string(text), out);
}

// The two logfile records differ only in the types of their name pointers and of
// BufferCallback's argument, so OpenTraceW lets OpenTraceA's work read the caller's record.
#define ETWRT_SAME_FIELD(field)                                                                 \
  static_assert(offsetof(EVENT_TRACE_LOGFILEA, field) == offsetof(EVENT_TRACE_LOGFILEW, field), \
                "EVENT_TRACE_LOGFILEA and W differ at " #field)
ETWRT_SAME_FIELD(LogFileName);
ETWRT_SAME_FIELD(LoggerName);
ETWRT_SAME_FIELD(CurrentTime);
ETWRT_SAME_FIELD(BuffersRead);
ETWRT_SAME_FIELD(ProcessTraceMode);
ETWRT_SAME_FIELD(CurrentEvent);
ETWRT_SAME_FIELD(LogfileHeader);
ETWRT_SAME_FIELD(BufferCallback);
ETWRT_SAME_FIELD(BufferSize);
ETWRT_SAME_FIELD(Filled);
ETWRT_SAME_FIELD(EventsLost);
ETWRT_SAME_FIELD(EventRecordCallback);
ETWRT_SAME_FIELD(IsKernelTrace);
ETWRT_SAME_FIELD(Context);
#undef ETWRT_SAME_FIELD
static_assert(sizeof(EVENT_TRACE_LOGFILEA) == sizeof(EVENT_TRACE_LOGFILEW));

// Sets a name pointer of the caller's record to a narrow string (or back), by its bytes: the
// record is read as EVENT_TRACE_LOGFILEA by OpenTraceA.
void store_pointer(void* field, const void* value) { std::memcpy(field, &value, sizeof value); }

TRACEHANDLE open_trace_w(PEVENT_TRACE_LOGFILEW logfile) {
  std::string logger_name, file_name;
  bool has_logger = false, has_file = false;
  if (!optional_utf8(logfile->LoggerName, logger_name, has_logger) ||
      !optional_utf8(logfile->LogFileName, file_name, has_file)) {
    return etwrt::fail_open(ERROR_INVALID_PARAMETER);
  }
  LPWSTR const wide_logger = logfile->LoggerName;
  LPWSTR const wide_file = logfile->LogFileName;
  store_pointer(&logfile->LoggerName, has_logger ? logger_name.c_str() : nullptr);
  store_pointer(&logfile->LogFileName, has_file ? file_name.c_str() : nullptr);
  const TRACEHANDLE handle =
      etwrt::open_trace(reinterpret_cast<PEVENT_TRACE_LOGFILEA>(logfile),
                        reinterpret_cast<const char16_t*>(has_logger ? wide_logger : nullptr));
  store_pointer(&logfile->LoggerName, wide_logger);
  store_pointer(&logfile->LogFileName, wide_file);
  return handle;
}

}  // namespace

extern "C" {

ULONG WMIAPI StartTraceW(PTRACEHANDLE TraceHandle, LPCWSTR InstanceName,
                         PEVENT_TRACE_PROPERTIES Properties) {
  return etwrt::guarded("StartTraceW", [&]() -> ULONG {
    std::string name, log_file;
    const ULONG check = check_start_trace_w(TraceHandle, InstanceName, Properties, name, log_file);
    if (check != ERROR_SUCCESS) return check;
    NarrowProperties narrow(*Properties, log_file);
    TRACEHANDLE handle = 0;
    const ULONG status = StartTraceA(&handle, name.c_str(), narrow.get());
    if (status != ERROR_SUCCESS) return status;
    if (!narrow.copy_back(Properties)) return ERROR_INVALID_DATA;
    *TraceHandle = handle;
    return ERROR_SUCCESS;
  });
}

ULONG WMIAPI ControlTraceW(TRACEHANDLE TraceHandle, LPCWSTR InstanceName,
                           PEVENT_TRACE_PROPERTIES Properties, ULONG ControlCode) {
  return etwrt::guarded("ControlTraceW", [&]() -> ULONG {
    if (Properties == nullptr) return ERROR_INVALID_PARAMETER;
    if (Properties->Wnode.BufferSize < kFixed) return ERROR_BAD_LENGTH;
    std::string name;
    bool has_name = false;
    if (!optional_utf8(InstanceName, name, has_name)) return ERROR_INVALID_PARAMETER;
    // UPDATE's new log file name, in UTF-16 at LogFileNameOffset (log_file_name_at's rules).
    std::string new_log_file;
    if (ControlCode == EVENT_TRACE_CONTROL_UPDATE && Properties->LogFileNameOffset != 0) {
      std::u16string wide;
      if (!offset_in_tail(Properties->LogFileNameOffset, Properties->Wnode.BufferSize) ||
          !wide_text_at(Properties, Properties->LogFileNameOffset, wide) ||
          !to_utf8(wide, new_log_file)) {
        return ERROR_INVALID_PARAMETER;
      }
    }
    // The A call's work on a copy of the fixed part (the same layout): the caller's buffer is
    // written only once both names are known to convert.
    EVENT_TRACE_PROPERTIES fixed = *Properties;
    fixed.Wnode.BufferSize = kFixed;
    fixed.LogFileNameOffset = 0;  // the new name, if any, is new_log_file
    etwrt::SessionNames names;
    const ULONG status = etwrt::control_session(TraceHandle, has_name ? name.c_str() : nullptr,
                                                &fixed, ControlCode, names, new_log_file);
    if (status != ERROR_SUCCESS) return status;
    std::u16string logger, log_file;
    if (!to_utf16(names.logger, logger) || !to_utf16(names.log_file, log_file)) {
      return ERROR_INVALID_DATA;
    }
    fixed.Wnode.BufferSize = Properties->Wnode.BufferSize;
    fixed.LoggerNameOffset = Properties->LoggerNameOffset;
    fixed.LogFileNameOffset = Properties->LogFileNameOffset;
    *Properties = fixed;
    return etwrt::write_control_names(Properties, utf16_bytes(logger), utf16_bytes(log_file));
  });
}

ETWRT_CONTROL_SHORTHAND(StopTraceW, ControlTraceW, LPCWSTR, EVENT_TRACE_CONTROL_STOP)
ETWRT_CONTROL_SHORTHAND(QueryTraceW, ControlTraceW, LPCWSTR, EVENT_TRACE_CONTROL_QUERY)
ETWRT_CONTROL_SHORTHAND(FlushTraceW, ControlTraceW, LPCWSTR, EVENT_TRACE_CONTROL_FLUSH)
ETWRT_CONTROL_SHORTHAND(UpdateTraceW, ControlTraceW, LPCWSTR, EVENT_TRACE_CONTROL_UPDATE)

// QueryAllTracesA's work; the names come back in UTF-16 where write_control_names puts them.
ULONG WMIAPI QueryAllTracesW(PEVENT_TRACE_PROPERTIES* PropertyArray, ULONG PropertyArrayCount,
                             PULONG LoggerCount) {
  return etwrt::guarded("QueryAllTracesW", [&]() -> ULONG {
    const auto wide = [](const std::string& name, std::string& bytes) {
      std::u16string text;
      if (!to_utf16(name, text)) return false;
      bytes = utf16_bytes(text);
      return true;
    };
    return etwrt::query_all_traces(PropertyArray, PropertyArrayCount, LoggerCount, wide);
  });
}

TRACEHANDLE WMIAPI OpenTraceW(PEVENT_TRACE_LOGFILEW Logfile) {
  if (Logfile == nullptr) return etwrt::fail_open(ERROR_INVALID_PARAMETER);
  try {
    return open_trace_w(Logfile);
  } catch (...) {
    return etwrt::fail_open(etwrt::fault_status("OpenTraceW"));
  }
}

ULONG WMIAPI RegisterTraceGuidsW(WMIDPREQUEST RequestAddress, PVOID RequestContext,
                                 LPCGUID ControlGuid, ULONG GuidCount,
                                 PTRACE_GUID_REGISTRATION TraceGuidReg, LPCWSTR MofImagePath,
                                 LPCWSTR MofResourceName, PTRACEHANDLE RegistrationHandle) {
  return etwrt::guarded("RegisterTraceGuidsW", [&]() -> ULONG {
    std::string image, resource;
    bool has_image = false, has_resource = false;
    if (!optional_utf8(MofImagePath, image, has_image) ||
        !optional_utf8(MofResourceName, resource, has_resource)) {
      return ERROR_INVALID_PARAMETER;
    }
    return RegisterTraceGuidsA(RequestAddress, RequestContext, ControlGuid, GuidCount, TraceGuidReg,
                               has_image ? image.c_str() : nullptr,
                               has_resource ? resource.c_str() : nullptr, RegistrationHandle);
  });
}

}  // extern "C"
