// One session's realtime consumer of an `etwh stress` run: ProcessTrace on its own thread in the
// etwh process, accounting for every record in the callback (sequence numbers, latency, the
// RT_LostEvent notices). Everything but the atomics is touched only by that thread until it is
// joined; the atomics feed the progress line and the time series while the run goes on.
#pragma once

#include "harness/stress/engine.h"
#include "harness/stress/stats.h"
#include "stress_payload.h"

#include <evntcons.h>
#include <evntrace.h>
#include <sys/types.h>

#include <ctime>

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace etwh::stress {

class SessionConsumer {
 public:
  // `clock`: the writers' stamp clock (stress_payload.h), read for every record timed: those
  // whose sequence number is a multiple of `latency_every`, every other record of this run's
  // writers (header, losses), and every record with a `delay_us`.
  SessionConsumer(std::string name, const GUID& provider, std::uint32_t threads_per_process,
                  std::uint32_t writers, std::uint64_t delay_us, std::uint64_t latency_every,
                  const StampClock& clock);
  SessionConsumer(const SessionConsumer&) = delete;
  SessionConsumer& operator=(const SessionConsumer&) = delete;
  ~SessionConsumer() { join(); }

  // OpenTraceA and ProcessTrace on a new thread; throws StressHarnessError.
  void open();
  // The same on a file session's log file once the session stopped: the records are counted
  // and their sequence numbers checked, none timed (their latency would be the read-back's);
  // the file's header counts go to the result's `file`.
  void open_file(const std::string& log_file);

  bool attached() const { return header_seen_.load(); }
  bool finished() const { return finished_.load(); }
  std::uint64_t delivered_so_far() const { return delivered_live_.load(std::memory_order_relaxed); }
  // Events held by the realtime buffers that RTLostBuffer notices announced so far.
  std::uint64_t buffer_lost_so_far() const {
    return buffer_lost_live_.load(std::memory_order_relaxed);
  }
  // Fills `point` with what happened since the last call (the series' sampler is the only
  // caller): the slowest delivery with its split and the longest silence in its wait (one
  // record's, taken together), the batches and the longest silence. A record delivered while
  // this runs may count in the next step instead: a step's bound, not exact.
  void take_step(SeriesPoint& point);

  // The consumer thread's CPU time and involuntary context switches (the scheduler took its
  // CPU away), so far.
  struct ThreadUse {
    std::uint64_t cpu_ns = 0, preemptions = 0;
  };

  // Returns once ProcessTrace has returned (the session stopped and everything was drained).
  void join();
  ULONG process_status() const { return process_status_; }

  // After join(): the sequence bookkeeping closed with what each writer wrote.
  SessionResult& finish(const std::vector<std::uint64_t>& written_per_writer);

 private:
  void start();  // OpenTraceA on logfile_, ProcessTrace on the consumer thread
  static void WINAPI on_record(PEVENT_RECORD record);
  static ULONG WINAPI on_buffer(PEVENT_TRACE_LOGFILEA logfile);
  void record(const EVENT_RECORD& r);
  // A mask for a power of two: no division per record.
  bool timed_sequence(std::uint64_t sequence) const {
    return (latency_every_ & (latency_every_ - 1)) == 0 ? (sequence & (latency_every_ - 1)) == 0
                                                        : sequence % latency_every_ == 0;
  }
  bool count(const EventStamp& stamp, std::uint32_t bytes);
  void timed(const EventStamp& stamp, std::uint64_t now, std::uint64_t prev);
  void note_latency(std::uint64_t now, std::uint64_t prev, std::uint64_t write_time);
  std::uint64_t note_callback(std::uint64_t now);
  void buffer_delivered();
  void lost_notice(const EVENT_RECORD& r, std::uint64_t now);
  static ThreadUse own_use();  // of the calling thread
  ThreadUse thread_use();      // of the consumer thread, read by the sampler

  std::string name_;
  GUID provider_;
  std::uint32_t threads_per_process_;
  std::uint64_t delay_ns_;
  std::uint64_t latency_every_;
  bool from_file_ = false;  // reading a log file back: count only
  std::string log_file_;
  StampClock clock_;
  std::vector<SequenceTracker> trackers_;
  SessionResult result_;
  EVENT_TRACE_LOGFILEA logfile_{};
  TRACEHANDLE trace_ = INVALID_PROCESSTRACE_HANDLE;
  std::thread thread_;
  ULONG process_status_ = ERROR_SUCCESS;
  std::atomic<bool> header_seen_{false}, finished_{false};
  std::atomic<std::uint64_t> delivered_live_{0}, buffer_lost_live_{0};
  // The consumer thread's id and CPU clock (set before tid_ is), and its use when it ended (set
  // before use_final_ is); the sampler's reading at its previous step.
  std::atomic<pid_t> tid_{0};
  clockid_t cpu_clock_{};
  ThreadUse final_use_;
  std::atomic<bool> use_final_{false};
  ThreadUse step_use_;

  // The consumer thread's own: the times of its most recent record callbacks (read for the
  // longest silence of a new step maximum) and the records since its last BufferCallback. 4096
  // callbacks reach back over a catch-up batch of hundreds of records; 32 KiB per session.
  CallbackTimes<4096, 64> callbacks_;
  std::uint64_t records_since_buffer_ = 0;
  std::uint64_t untimed_ = 0;  // records of ours delivered since the last clock reading
  // The step's slowest delivery and its split. The callback compares with latency_max_live_
  // alone; only a new maximum takes the mutex, which the sampler also takes to read and reset
  // all three, so it never pairs a maximum with another record's split.
  std::atomic<std::uint64_t> latency_max_live_{0};
  std::mutex slowest_mu_;
  std::uint64_t slowest_ns_ = 0;   // guarded by slowest_mu_
  LatencySplit slowest_split_;     // guarded by slowest_mu_
  SilenceInWait slowest_silence_;  // guarded by slowest_mu_
  // Per step: the largest batch, the longest silence, and batches and their records packed
  // into one word (records << 32 | batches: a step holds fewer than 2^32 of either), so that
  // the sampler takes both with one exchange.
  std::atomic<std::uint64_t> batch_max_live_{0}, silence_max_live_{0}, batches_live_{0};
};

}  // namespace etwh::stress
