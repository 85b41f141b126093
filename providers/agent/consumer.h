// A realtime consumer inside the agent (PROTOCOL.md, consume_start / consume_stop): OpenTraceA
// on a session by name, ProcessTrace on a thread of its own, and a copy of every record the
// platform delivers (header event, events, RT_LostEvent pseudo-events) in arrival order, so the
// driver can judge exactly what one consumer received.
#pragma once

#include <windows.h>
#include <evntrace.h>
#include <evntcons.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace etwh::agent {

class Consumer {
 public:
  enum class Mode { kEventRecord, kEventTrace };

  Consumer(std::string session_name, Mode mode, std::uint64_t context, std::uint32_t delay_us);
  ~Consumer();
  Consumer(const Consumer&) = delete;
  Consumer& operator=(const Consumer&) = delete;

  // OpenTraceA. With `overwrite`, the EVENT_TRACE_LOGFILEA given to it is overwritten when it
  // returns (decoy callbacks, Context and session name), as a caller's local that went out of
  // scope: a platform that reads it later calls the decoys, counted in stop()'s decoy_calls.
  // The reply: status (0, or ERROR_INVALID_HANDLE with last_error, GetLastError's).
  nlohmann::json open(bool overwrite);

  // ProcessTrace on a new thread; returns once the header event arrived or ProcessTrace
  // returned (or `wait` passed), so that events written afterwards are this consumer's. The
  // reply fields: status 0, attached, process_status when ProcessTrace returned.
  nlohmann::json process(std::chrono::milliseconds wait);

  // Waits up to `wait` for ProcessTrace to return by itself (the session stopped), else
  // CloseTrace; then the records and ProcessTrace's status.
  nlohmann::json stop(std::chrono::milliseconds wait);

  // Records carry `decoded` (decode.h) for events TDH can decode: TraceLogging ones (with an
  // EVENT_SCHEMA_TL item) and, when `manifest` is not empty, the manifest's (TdhLoadManifest
  // before start, TdhUnloadManifest after stop; the load's status, 0 when none). `skip` bytes
  // of event data are the driver's sequence number, left out of the decoding.
  ULONG decode(std::size_t skip, const std::string& manifest);

  // Called on the ProcessTrace thread.
  void on_record(const EVENT_RECORD& r);
  void on_trace(const EVENT_TRACE& t);
  // A decoy of an overwritten EVENT_TRACE_LOGFILEA was called (or its Context delivered).
  void on_decoy();

 private:
  void run();
  void slow_down() const;
  // Keeps one record (after the configured delay); the header's wakes start().
  void keep(nlohmann::json rec);

  std::string name_;
  Mode mode_;
  std::uint64_t context_;
  std::uint32_t delay_us_;
  // Lives as long as the trace: a platform may keep using what OpenTraceA was given.
  EVENT_TRACE_LOGFILEA logfile_{};
  std::string decoy_name_ = "etwh-no-such-session";
  std::uint64_t decoy_calls_ = 0;  // under mutex_
  TRACEHANDLE handle_ = INVALID_PROCESSTRACE_HANDLE;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool header_seen_ = false;
  bool returned_ = false;
  ULONG process_status_ = 0;
  std::vector<nlohmann::json> records_;
  std::size_t decode_skip_ = 0;
  std::vector<WCHAR> manifest_;  // NUL-terminated; empty: none loaded
};

}  // namespace etwh::agent
