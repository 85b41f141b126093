#include "harness/environment/stale_sessions.h"

#include <windows.h>
#include <evntrace.h>

#ifndef _WIN32
#include <signal.h>
#include <sys/types.h>

#include <cerrno>
#endif

#include <algorithm>
#include <cstring>
#include <limits>

namespace etwh {
namespace {

constexpr std::string_view kRunTag = "etwh-";
// Room for each name QueryAllTracesA / ControlTraceA may write (the documented limit on a
// session name is 1024 characters).
constexpr std::size_t kNameRoom = 1024;
// QueryAllTraces' documented default bound on PropertyArrayCount.
constexpr ULONG kFirstQueryCount = 64;

// One EVENT_TRACE_PROPERTIES with room for a session and a log file name after it, 8-byte
// aligned (the structure holds 64-bit members).
class PropertiesBuffer {
 public:
  PropertiesBuffer() : storage_((sizeof(EVENT_TRACE_PROPERTIES) + 2 * kNameRoom + 7) / 8) {
    EVENT_TRACE_PROPERTIES* p = get();
    p->Wnode.BufferSize = static_cast<ULONG>(storage_.size() * 8);
    p->LoggerNameOffset = sizeof(EVENT_TRACE_PROPERTIES);
    p->LogFileNameOffset = static_cast<ULONG>(sizeof(EVENT_TRACE_PROPERTIES) + kNameRoom);
  }
  EVENT_TRACE_PROPERTIES* get() {
    return reinterpret_cast<EVENT_TRACE_PROPERTIES*>(storage_.data());
  }

  // The session name the platform wrote, or "" when it left none that lies wholly inside.
  std::string logger_name() {
    const EVENT_TRACE_PROPERTIES* p = get();
    const std::size_t size = storage_.size() * 8;
    if (p->LoggerNameOffset < sizeof(EVENT_TRACE_PROPERTIES) || p->LoggerNameOffset >= size) {
      return "";
    }
    const char* begin = reinterpret_cast<const char*>(storage_.data()) + p->LoggerNameOffset;
    const void* end = std::memchr(begin, 0, size - p->LoggerNameOffset);
    return end == nullptr ? "" : std::string(begin, static_cast<const char*>(end));
  }

 private:
  std::vector<std::uint64_t> storage_;
};

bool process_alive(unsigned long pid) {
#ifdef _WIN32
  HANDLE process = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, static_cast<DWORD>(pid));
  if (process == nullptr) return GetLastError() != ERROR_INVALID_PARAMETER;  // denied: it exists
  DWORD code = 0;
  const bool running = GetExitCodeProcess(process, &code) && code == STILL_ACTIVE;
  CloseHandle(process);
  return running;
#else
  if (pid > static_cast<unsigned long>(std::numeric_limits<pid_t>::max())) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;  // EPERM: another user's
#endif
}

// The names of every running session this process may query; nullopt (with `status`) when
// they cannot be listed.
std::optional<std::vector<std::string>> running_session_names(ULONG& status) {
  ULONG count = kFirstQueryCount;
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::vector<PropertiesBuffer> buffers(count);
    std::vector<PEVENT_TRACE_PROPERTIES> pointers;
    for (PropertiesBuffer& b : buffers) pointers.push_back(b.get());
    ULONG running = 0;
    status = QueryAllTracesA(pointers.data(), count, &running);
    if (status == ERROR_MORE_DATA && attempt == 0 && running > count) {
      count = running;  // One more try with room for every session it counted.
      continue;
    }
    if (status != ERROR_SUCCESS && status != ERROR_MORE_DATA) return std::nullopt;
    std::vector<std::string> names;
    for (ULONG i = 0; i < std::min(running, count); ++i) {
      std::string name = buffers[i].logger_name();
      if (!name.empty()) names.push_back(std::move(name));
    }
    return names;
  }
  return std::nullopt;
}

}  // namespace

std::optional<unsigned long> etwh_run_pid(std::string_view name) {
  if (name.substr(0, kRunTag.size()) != kRunTag) return std::nullopt;
  name.remove_prefix(kRunTag.size());
  const std::size_t digits = name.find_first_not_of("0123456789");
  // A pid of 1 to 10 digits, then '-' and the rest of the name.
  if (digits == 0 || digits == std::string_view::npos || digits > 10 || name[digits] != '-') {
    return std::nullopt;
  }
  unsigned long long pid = 0;
  for (char c : name.substr(0, digits)) pid = pid * 10 + static_cast<unsigned>(c - '0');
  if (pid == 0 || pid > std::numeric_limits<std::uint32_t>::max()) return std::nullopt;
  return static_cast<unsigned long>(pid);
}

std::vector<StaleSession> stop_stale_sessions(unsigned long own_pid, std::ostream& log) {
  ULONG status = ERROR_SUCCESS;
  const std::optional<std::vector<std::string>> names = running_session_names(status);
  if (!names) {
    log << "etwh: cannot list the running sessions (QueryAllTracesA returned " << status
        << "); sessions left by earlier runs are not looked for\n";
    return {};
  }
  std::vector<StaleSession> stopped;
  for (const std::string& name : *names) {
    const std::optional<unsigned long> pid = etwh_run_pid(name);
    if (!pid || *pid == own_pid || process_alive(*pid)) continue;
    PropertiesBuffer properties;
    const ULONG stop = ControlTraceA(0, name.c_str(), properties.get(), EVENT_TRACE_CONTROL_STOP);
    // ERROR_MORE_DATA: stopped, the names did not fit (the ControlTrace page).
    if (stop == ERROR_SUCCESS || stop == ERROR_MORE_DATA) {
      log << "etwh: stopped session " << name << ", left running by an earlier etwh run (process "
          << *pid << " has ended)\n";
    } else {
      log << "etwh: cannot stop session " << name << ", left running by an earlier etwh run "
          << "(process " << *pid << " has ended): ControlTraceA returned " << stop << "\n";
    }
    stopped.push_back({name, *pid, stop});
  }
  return stopped;
}

bool may_control_sessions(const std::string& probe_name, std::ostream& log) {
  PropertiesBuffer properties;
  EVENT_TRACE_PROPERTIES* p = properties.get();
  p->Wnode.Flags = WNODE_FLAG_TRACED_GUID;
  p->Wnode.ClientContext = 1;  // QueryPerformanceCounter, the documented default.
  p->LogFileMode = EVENT_TRACE_REAL_TIME_MODE;
  p->LogFileNameOffset = 0;
  TRACEHANDLE handle = 0;
  const ULONG status = StartTraceA(&handle, probe_name.c_str(), p);
  if (status == ERROR_ACCESS_DENIED) {
    log << "etwh: this process may not control event tracing sessions (StartTraceA returned "
           "ERROR_ACCESS_DENIED); no case can run. Run etwh as an administrator or as a member "
           "of the Performance Log Users group (on etwrt: unset ETWRT_DENY_CONTROL)\n";
    return false;
  }
  if (status == ERROR_SUCCESS) {
    PropertiesBuffer stop;
    ControlTraceA(handle, nullptr, stop.get(), EVENT_TRACE_CONTROL_STOP);
  }
  return true;
}

std::optional<std::vector<StaleSession>> prepare_sessions_for_run(const std::string& session_prefix,
                                                                  unsigned long own_pid,
                                                                  std::ostream& log) {
  if (!may_control_sessions(session_prefix + "probe", log)) return std::nullopt;
  return stop_stale_sessions(own_pid, log);
}

}  // namespace etwh
