// What `etwh stress` finds, as data: the profile a run followed, each session's accounting,
// the run's figures and the floors measured around it (harness/stress/README.md says how each is
// measured). The stress engine fills them; the report writers (harness/report/stress_formats.h)
// read them.
#pragma once

#include "harness/model/latency_histogram.h"
#include "harness/model/result.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace etwh::stress {

enum class LossExpectation { kUnspecified, kNone, kSome };

struct BufferSettings {
  std::uint32_t buffer_size_kb = 64;
  std::uint32_t minimum_buffers = 4;
  std::uint32_t maximum_buffers = 32;
  std::uint32_t flush_timer_s = 1;
};

// A profile whose sessions log to a file (in the run's temporary folder) instead of to a
// realtime consumer: the file is read back once the session stopped.
enum class FileMode { kSequential, kCircular };
struct FileSettings {
  FileMode mode = FileMode::kSequential;
  std::uint32_t max_mb = 0;  // MaximumFileSize; 0: no limit (sequential only)
};

struct Profile {
  std::string name;  // file stem, plus "[dim=value]" in a sweep
  std::string file;
  std::string description;
  std::uint32_t processes = 1;
  std::uint32_t threads = 1;
  std::uint32_t sessions = 1;
  std::uint64_t rate = 0;  // events/s per thread; 0 = as fast as possible ("max")
  std::uint32_t payload_bytes = 32;
  std::uint64_t burst_events = 0;  // 0 = steady
  std::uint64_t burst_period_ms = 0;
  std::uint64_t duration_ms = 1000;
  std::uint64_t consumer_delay_us = 0;  // busy time per event in the consumer callback
  // The consumer times the records whose sequence number is a multiple of this (1: every one):
  // at a writer's maximum rate, a clock read and the latency bookkeeping per record make the
  // measuring consumer as slow as the writer.
  std::uint64_t latency_every = 1;
  BufferSettings buffers;
  std::optional<FileSettings> log_file;  // "file": none for realtime sessions
  LossExpectation expect_loss = LossExpectation::kUnspecified;
  nlohmann::json source;  // the profile as loaded (after any sweep value), for reports
};

const char* file_mode_name(FileMode mode);  // "sequential", "circular"

// One writer process's own samples of its EventWrite calls (all its threads together):
// samples[k] at start_ns + (k + 1) * step_ns, and `total` at end_ns, its last write.
struct WriterSamples {
  std::uint64_t start_ns = 0, step_ns = 0, end_ns = 0, total = 0;
  std::vector<std::uint64_t> samples;
};

// One step of a session's time series (every EngineOptions::series_ms while the writers run,
// and a last one once the session stopped). Counts are cumulative since the run began.
struct SeriesPoint {
  double t_ms = 0;            // since the writers were told to go
  std::uint64_t written = 0;  // from the writers' own samples (written_at)
  std::uint64_t delivered = 0;
  std::uint64_t lost = 0;            // EventsLost (ControlTrace QUERY) + RTLostBuffer events so far
  std::uint64_t lag_events = 0;      // written - delivered - lost: written, not yet consumed
  std::uint64_t buffers_in_use = 0;  // NumberOfBuffers - FreeBuffers
  // The slowest delivery (write to callback) since the previous point: where in the run the
  // latency tail happened, beside the lag and buffers it may come with.
  std::uint64_t latency_max_ns = 0;
  // Where that delivery waited (stats.h, split_latency): quiet (the consumer delivered nothing)
  // and behind (it delivered other records); their sum is latency_max_ns (check_series).
  std::uint64_t latency_max_quiet_ns = 0, latency_max_behind_ns = 0;
  // The longest stretch within that delivery's wait in which the consumer delivered nothing
  // (stats.h, longest_silence): quiet <= it <= latency_max_ns (check_series). A record that
  // waited through a silence and came a few records into the catch-up has a small quiet part
  // and a long silence. Partial: the wait held more callbacks than the consumer keeps, so the
  // value is a lower bound.
  std::uint64_t latency_max_silence_ns = 0;
  bool latency_max_silence_partial = false;
  // Records per BufferCallback since the previous point: the largest batch and the mean (0: no
  // callback), and the consumer's longest silence (the largest gap between two consecutive
  // record callbacks, counted in the step of the second).
  std::uint64_t batch_max = 0;
  double batch_mean = 0;
  std::uint64_t silence_max_ns = 0;
  // The consumer thread (ProcessTrace's: on etwrt it also reads the buffers) since the previous
  // point: its CPU time, and how often the scheduler took its CPU away (involuntary context
  // switches). A consumer short of CPU while events wait is behind for want of a core, not of
  // speed; beside lag and loss, they tell the two apart.
  std::uint64_t consumer_cpu_ns = 0;
  std::uint64_t consumer_preemptions = 0;
  double consumer_cpu_share = 0;  // consumer_cpu_ns over the step's time (judge_run)
  // CPU time the hypervisor took from this machine (all its CPUs) since the previous point:
  // /proc/stat's steal, in 10 ms ticks. None where the kernel does not report it. A consumer
  // short of CPU with no preemption in a step that had steal waited for the host.
  std::optional<double> stolen_ms = std::nullopt;
};

// One RT_LostEvent notice as the consumer received it (for `--trace`: an instant each).
struct LossNotice {
  std::uint64_t at_ns = 0;    // StampClock, when the consumer callback got it
  std::uint8_t opcode = 0;    // 32 RTLostEvent, 33 RTLostBuffer
  std::uint64_t buffers = 0;  // RTLostBuffer: buffers lost
  std::uint64_t events = 0;   // events those buffers held, or refused at write (RTLostEvent)
};
// A run keeps at most this many notices per session (their counts are summed regardless).
inline constexpr std::size_t kMaxLossNotices = 10000;

// A step of a session's series in which loss was reported, and how far behind the consumer
// was: the longest of its silence and its slowest delivery in that step and the one before (a
// reclaim is reported at the consumer's first poll after it, which may fall in the next step).
struct LossStep {
  double t_ms = 0;
  std::uint64_t lost = 0;
  double behind_ms = 0;
};

// A file session's log file (harness/stress/README.md, "File sessions"): what it holds, read
// back once the session stopped, and how fast it was written.
struct FileResult {
  std::string path;
  std::uint64_t bytes = 0;  // the file's size after the stop
  // The final TRACE_LOGFILE_HEADER's counts: its EventsLost must be the session's (STOP).
  std::uint64_t header_events_lost = 0, header_buffers_lost = 0, header_buffers_written = 0;
  // From go to the end of the session's STOP (its last buffers written and the file synced):
  // the events read back and the file's bytes per second.
  double write_s = 0;
  double events_per_s = 0, mb_per_s = 0;
  // The disk's own rate (RunResult::disk_mb_per_s) over mb_per_s; none without a disk rate.
  std::optional<double> of_disk_rate;
  // A sequential file with no room left for one more buffer under its MaximumFileSize: what
  // came after was counted lost, so mb_per_s is what the run got to write, less than the logger
  // could have written.
  bool at_maximum_size = false;
};

struct SessionResult {
  std::string name;
  std::uint64_t written = 0;    // EventWrite calls for this session's events, counted by writers
  std::uint64_t delivered = 0;  // the run's events that reached the consumer callback
  std::uint64_t delivered_bytes = 0;  // their UserData bytes
  // ControlTraceA(STOP) counters, taken once the writers have exited.
  std::uint64_t events_lost = 0;
  std::uint64_t realtime_buffers_lost = 0;
  std::uint64_t buffers_written = 0;
  std::uint64_t number_of_buffers = 0;
  std::uint64_t maximum_buffers = 0;  // what NumberOfBuffers may grow to
  std::uint64_t buffer_size_kb = 0;
  std::uint64_t free_buffers = 0;
  // What the RT_LostEvent pseudo-events announced.
  std::uint64_t lost_buffer_notices = 0;  // RTLostBuffer records
  std::uint64_t lost_buffers_announced = 0;
  std::uint64_t lost_buffer_events_announced = 0;  // events held by those buffers
  std::uint64_t lost_events_announced = 0;         // RTLostEvent: refused at write
  std::uint64_t reported_lost = 0;                 // events_lost + lost_buffer_events_announced
  std::vector<LossNotice> loss_notices;            // the first kMaxLossNotices, in arrival order
  // From sequence numbers.
  std::uint64_t duplicates = 0, gaps = 0, missing = 0, beyond_written = 0;
  std::uint64_t foreign_records = 0;   // records of no known writer, or too short to carry a stamp
  std::uint64_t clock_inversions = 0;  // callback time earlier than write time
  LatencyHistogram latency;
  std::uint64_t first_delivery_ns = 0, last_delivery_ns = 0;
  double events_per_s = 0, mb_per_s = 0;
  double lag_ms = 0;  // last delivery after the last write
  // How long the buffers last at the writers' pace: the write time over the buffers written,
  // times MaximumBuffers (those the pool may grow to); none when no buffer was written.
  std::optional<double> buffers_span_ms;
  // The consumer thread over the run: the sums of its series, and the CPU time over the time
  // from go to the series' last point.
  std::uint64_t consumer_cpu_ns = 0, consumer_preemptions = 0;
  double consumer_cpu_share = 0;
  // Where the loss was (judge_run): behind for longer than its buffers last, a consumer must
  // lose (for want of a core or of speed: its CPU share tells); loss with the consumer less
  // far behind is loss the buffers' capacity does not explain.
  std::vector<LossStep> loss_steps;
  std::uint64_t lost_behind_longer_than_buffers = 0;  // in loss_steps with behind_ms >= span
  bool balanced = false;
  std::vector<SeriesPoint> series;
  std::optional<FileResult> file;  // a file session's; none for a realtime one
};

// CPU time a process (or a group of them) spent in the run.
struct CpuTime {
  double user_s = 0, system_s = 0;
  double total_s() const { return user_s + system_s; }
};

struct RunResult {
  Profile profile;
  std::vector<SessionResult> sessions;
  std::uint64_t attempts = 0, accepted = 0;
  std::uint64_t refused_no_buffer = 0, refused_too_large = 0, refused_other = 0;
  std::uint64_t first_write_ns = 0, last_write_ns = 0;
  double write_events_per_s = 0;
  std::uint64_t writer_peak_rss_kb = 0;    // the largest writer process
  std::uint64_t consumer_peak_rss_kb = 0;  // this process (VmHWM, reset at the run's start)
  CpuTime writer_cpu;                      // every writer process, summed
  CpuTime consumer_cpu;  // this process during the run (the consumers, and etwh's own waiting)
  double writer_cpu_ns_per_event = 0;    // per EventWrite call
  double consumer_cpu_ns_per_event = 0;  // per delivered event, over all sessions
  // etwrt's broker, from the sessions' start to their stop (/proc, clock-tick resolution);
  // absent where there is no broker (real ETW) or it could not be read (it ended).
  std::optional<CpuTime> broker_cpu;
  long broker_pid = 0;                   // the broker that served the run's sessions
  std::uint64_t broker_peak_rss_kb = 0;  // VmHWM since the broker started
  double broker_cpu_ns_per_event = 0;    // per EventWrite call
  std::uint64_t series_ms = 0;
  std::uint64_t go_ns = 0;  // CLOCK_MONOTONIC when the writers were told to go: series' t = 0
  std::vector<WriterSamples> writer_samples;  // one per writer process
  double duration_s = 0;
  std::optional<double> stolen_ms;  // the series' steal, from go to the sessions' stop
  // A file profile's: the disk's sequential write rate in the run's folder (fio, before the
  // sessions start), or why there is none.
  std::optional<double> disk_mb_per_s;
  std::string disk_tool, disk_unavailable;
  std::vector<std::string> failures;  // one line each; empty: the run passed
};

// The cross-process futex wake-up (etwh/wake_floor.h) in one placement, or etwrt's reader nap,
// measured just before and just after a run; latencies are reported against the two windows
// together (`both`). Not measured where the placement cannot be had (`unavailable` says why).
struct FloorWindows {
  LatencyHistogram before, after, both;
  std::string unavailable;
  bool measured() const { return unavailable.empty(); }
};

// One run of a profile (one repetition): its result, or the harness error that ended it.
struct Outcome {
  Profile profile;
  std::optional<RunResult> run;
  FloorWindows floor_same_cpu, floor_other_cpu;
  FloorWindows reader_nap;    // etwrt's reader nap as this process sleeps it
  std::string harness_error;  // set when the run could not be carried out
  double duration_s = 0;
  unsigned repetition = 1, repetitions = 1;
};

// "PASS", "FAIL" (the run broke a check) or "HARNESS_ERROR" (it could not be carried out).
const char* outcome_status(const Outcome& o);

// What the command knows of the whole invocation, beside its runs.
struct StressRunInfo {
  std::string platform, version, command_line, host, start_time;
  unsigned repetitions = 1;
  double duration_s = 0;           // every run, from the first's start to the last's end
  double reader_nap_asked_us = 0;  // the nap etwrt's reader asks for (reader_nap: as slept)
  std::vector<StaleSessionStop> stale_sessions;  // stopped before the runs
};

}  // namespace etwh::stress
