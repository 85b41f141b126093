// One session's realtime consumer of an `etwh stress` run: ProcessTrace on its own thread in the
// etwh process, accounting for every record in the callback (sequence numbers, latency, the
// RT_LostEvent notices). Everything but the atomics is touched only by that thread until it is
// joined; the atomics feed the progress line and the time series while the run goes on.
#pragma once

#include "engine.h"

#include <evntcons.h>
#include <evntrace.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace etwh::stress {

class SessionConsumer {
 public:
  SessionConsumer(std::string name, const GUID& provider, std::uint32_t threads_per_process,
                  std::uint32_t writers, std::uint64_t delay_us);
  SessionConsumer(const SessionConsumer&) = delete;
  SessionConsumer& operator=(const SessionConsumer&) = delete;
  ~SessionConsumer() { join(); }

  // OpenTraceA and ProcessTrace on a new thread; throws StressHarnessError.
  void open();

  bool attached() const { return header_seen_.load(); }
  bool finished() const { return finished_.load(); }
  std::uint64_t delivered_so_far() const { return delivered_live_.load(std::memory_order_relaxed); }
  // Events held by the realtime buffers that RTLostBuffer notices announced so far.
  std::uint64_t buffer_lost_so_far() const {
    return buffer_lost_live_.load(std::memory_order_relaxed);
  }
  // The largest latency since the last call (the series' sampler is the only caller). A record
  // delivered while this runs may count in the next step instead: a step's bound, not exact.
  std::uint64_t take_latency_max() { return latency_max_live_.exchange(0); }

  // Returns once ProcessTrace has returned (the session stopped and everything was drained).
  void join();
  ULONG process_status() const { return process_status_; }

  // After join(): the sequence bookkeeping closed with what each writer wrote.
  SessionResult& finish(const std::vector<std::uint64_t>& written_per_writer);

 private:
  static void WINAPI on_record(PEVENT_RECORD record);
  void record(const EVENT_RECORD& r);
  void data(const EVENT_RECORD& r, std::uint64_t now);
  void lost_notice(const EVENT_RECORD& r, std::uint64_t now);

  std::string name_;
  GUID provider_;
  std::uint32_t threads_per_process_;
  std::uint64_t delay_ns_;
  std::vector<SequenceTracker> trackers_;
  SessionResult result_;
  EVENT_TRACE_LOGFILEA logfile_{};
  TRACEHANDLE trace_ = INVALID_PROCESSTRACE_HANDLE;
  std::thread thread_;
  ULONG process_status_ = ERROR_SUCCESS;
  std::atomic<bool> header_seen_{false}, finished_{false};
  std::atomic<std::uint64_t> delivered_live_{0}, buffer_lost_live_{0}, latency_max_live_{0};
};

}  // namespace etwh::stress
