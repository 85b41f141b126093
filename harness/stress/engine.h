// The stress engine: runs one profile against the ETW API (sessions, realtime consumers in this
// process, etwh-stress-writer processes) and accounts for every event per session. How the loss
// counters are read and why they are not double-counted: harness/stress/README.md.
#pragma once

#include "harness/stress/profile.h"
#include "harness/stress/stats.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <optional>
#include <string>
#include <vector>

namespace etwh::stress {

// A fault of the harness or its environment (a session that cannot start, a writer that dies),
// never a verdict on the platform.
class StressHarnessError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
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

struct EngineOptions {
  std::filesystem::path writer;  // the etwh-stress-writer executable
  // Called about every 100 ms while the writers run: seconds since they were told to go, and
  // what the consumers delivered so far ("delivered s0 1,234"); empty: nothing is told.
  std::function<void(double elapsed_s, const std::string& detail)> progress;
  std::uint64_t series_ms = 100;  // time series step
};

// Fills each session's derived figures (written, reported lost, balance, throughput, lag, the
// series' written and lag_events, CPU time per event) from
// the counters already in `run` and appends a line to run.failures for every check that does
// not hold (harness/stress/README.md, "Accounting"). Separate from run_profile so that each
// check can be tested on made-up numbers.
void judge_run(RunResult& run);

// A session's series against its run, once the run is over: the steps' largest latency must be
// the run's (every delivery lands in exactly one step), and each step's slowest delivery must
// split exactly into its quiet and behind parts (one record's, never a max paired with another
// record's split), with the longest silence in its wait between the quiet part and the
// latency. Throws StressHarnessError naming the session and the step otherwise: the
// harness's own bookkeeping broke, not the platform.
void check_series(const SessionResult& session);

// Runs the profile once. Throws StressHarnessError when the run could not be carried out; the
// platform's misbehaviour (imbalance, duplicates, ...) lands in RunResult::failures instead.
RunResult run_profile(const Profile& profile, const EngineOptions& options);

}  // namespace etwh::stress
