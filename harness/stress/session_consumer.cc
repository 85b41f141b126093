#include "harness/stress/session_consumer.h"

#include "stress_payload.h"

#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>

namespace etwh::stress {
namespace {

bool same_guid(const GUID& a, const GUID& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

SessionConsumer::SessionConsumer(std::string name, const GUID& provider,
                                 std::uint32_t threads_per_process, std::uint32_t writers,
                                 std::uint64_t delay_us, std::uint64_t latency_every,
                                 const StampClock& clock)
    : name_(std::move(name)),
      provider_(provider),
      threads_per_process_(threads_per_process),
      delay_ns_(delay_us * 1000),
      latency_every_(std::max<std::uint64_t>(latency_every, 1)),
      clock_(clock),
      trackers_(writers) {
  result_.name = name_;
}

void SessionConsumer::open() {
  logfile_.LoggerName = name_.data();
  logfile_.ProcessTraceMode = PROCESS_TRACE_MODE_REAL_TIME | PROCESS_TRACE_MODE_EVENT_RECORD;
  start();
}

void SessionConsumer::open_file(const std::string& log_file) {
  from_file_ = true;
  log_file_ = log_file;
  logfile_.LogFileName = log_file_.data();
  logfile_.ProcessTraceMode = PROCESS_TRACE_MODE_EVENT_RECORD;
  start();
  FileResult& f = result_.file.emplace();
  f.path = log_file_;
  f.header_events_lost = logfile_.LogfileHeader.EventsLost;
  f.header_buffers_lost = logfile_.LogfileHeader.BuffersLost;
  f.header_buffers_written = logfile_.LogfileHeader.BuffersWritten;
}

void SessionConsumer::start() {
  logfile_.EventRecordCallback = &SessionConsumer::on_record;
  logfile_.BufferCallback = &SessionConsumer::on_buffer;
  logfile_.Context = this;
  trace_ = OpenTraceA(&logfile_);
  if (trace_ == INVALID_PROCESSTRACE_HANDLE) {
    throw StressHarnessError(from_file_ ? "OpenTraceA(\"" + log_file_ + "\") failed"
                                        : "OpenTraceA(\"" + name_ + "\") failed");
  }
  thread_ = std::thread([this] {
    if (pthread_getcpuclockid(pthread_self(), &cpu_clock_) == 0)
      tid_.store(static_cast<pid_t>(syscall(SYS_gettid)), std::memory_order_release);
    TRACEHANDLE t = trace_;
    process_status_ = ProcessTrace(&t, 1, nullptr, nullptr);
    final_use_ = own_use();
    use_final_.store(true, std::memory_order_release);
    finished_.store(true);
  });
}

void SessionConsumer::join() {
  if (thread_.joinable()) thread_.join();
  if (trace_ != INVALID_PROCESSTRACE_HANDLE) {
    CloseTrace(trace_);
    trace_ = INVALID_PROCESSTRACE_HANDLE;
  }
}

SessionResult& SessionConsumer::finish(const std::vector<std::uint64_t>& written_per_writer) {
  for (std::size_t w = 0; w < trackers_.size(); ++w) {
    SequenceTracker& t = trackers_[w];
    t.finish(w < written_per_writer.size() ? written_per_writer[w] : 0);
    result_.duplicates += t.duplicates();
    result_.gaps += t.gaps();
    result_.missing += t.missing();
    result_.beyond_written += t.beyond_written();
  }
  return result_;
}

void WINAPI SessionConsumer::on_record(PEVENT_RECORD record) {
  static_cast<SessionConsumer*>(record->UserContext)->record(*record);
}

// After each buffer's records (Windows) or each poll that delivered (etwrt): the batch ends.
ULONG WINAPI SessionConsumer::on_buffer(PEVENT_TRACE_LOGFILEA logfile) {
  static_cast<SessionConsumer*>(logfile->Context)->buffer_delivered();
  return TRUE;
}

void SessionConsumer::buffer_delivered() {
  // Records delivered untimed (latency_every) end their batch here: the batch's end is their
  // delivery, for the lag and the throughput, and a callback time for the silences.
  // A file read back: its delivery times are the read-back's, no figure of the run.
  if (untimed_ > 0 && !from_file_) {
    const std::uint64_t now = clock_.now_ns();
    note_callback(now);
    if (result_.first_delivery_ns == 0) result_.first_delivery_ns = now;
    result_.last_delivery_ns = now;
    untimed_ = 0;
  }
  const std::uint64_t records = records_since_buffer_;
  records_since_buffer_ = 0;
  if (records > batch_max_live_.load(std::memory_order_relaxed))
    batch_max_live_.store(records, std::memory_order_relaxed);
  batches_live_.fetch_add(records << 32 | 1, std::memory_order_relaxed);
}

SessionConsumer::ThreadUse SessionConsumer::own_use() {
  ThreadUse use;
  timespec ts{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
    use.cpu_ns = static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
                 static_cast<std::uint64_t>(ts.tv_nsec);
  rusage ru{};
  if (getrusage(RUSAGE_THREAD, &ru) == 0)
    use.preemptions = static_cast<std::uint64_t>(ru.ru_nivcsw);
  return use;
}

// Another thread's: its CPU clock and /proc/self/task/TID/status. A reading that fails (the
// thread ended in between) repeats the previous step's, and the next step has its final use.
SessionConsumer::ThreadUse SessionConsumer::thread_use() {
  if (use_final_.load(std::memory_order_acquire)) return final_use_;
  const pid_t tid = tid_.load(std::memory_order_acquire);
  if (tid == 0) return step_use_;
  ThreadUse use = step_use_;
  if (timespec ts{}; clock_gettime(cpu_clock_, &ts) == 0)
    use.cpu_ns = static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
                 static_cast<std::uint64_t>(ts.tv_nsec);
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/status");
  const std::string status{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  use.preemptions =
      proc_status_number(status, "nonvoluntary_ctxt_switches").value_or(use.preemptions);
  return use;
}

void SessionConsumer::take_step(SeriesPoint& point) {
  const ThreadUse use = thread_use();
  point.consumer_cpu_ns = use.cpu_ns - std::min(use.cpu_ns, step_use_.cpu_ns);
  point.consumer_preemptions = use.preemptions - std::min(use.preemptions, step_use_.preemptions);
  step_use_ = {std::max(use.cpu_ns, step_use_.cpu_ns),
               std::max(use.preemptions, step_use_.preemptions)};
  {
    std::lock_guard lock(slowest_mu_);
    point.latency_max_ns = slowest_ns_;
    point.latency_max_quiet_ns = slowest_split_.quiet_ns;
    point.latency_max_behind_ns = slowest_split_.behind_ns;
    point.latency_max_silence_ns = slowest_silence_.ns;
    point.latency_max_silence_partial = slowest_silence_.partial;
    slowest_ns_ = 0;
    slowest_split_ = {};
    slowest_silence_ = {};
    latency_max_live_.store(0, std::memory_order_relaxed);
  }
  point.silence_max_ns = silence_max_live_.exchange(0);
  point.batch_max = batch_max_live_.exchange(0);
  const std::uint64_t packed = batches_live_.exchange(0);
  const std::uint64_t batches = packed & 0xffffffffu;
  point.batch_mean =
      batches > 0 ? static_cast<double>(packed >> 32) / static_cast<double>(batches) : 0.0;
}

// A record callback that read the clock (every one but the untimed records of latency_every):
// its time in the ring (one store, one increment) and the gap since the previous such callback
// for the step's longest silence. Returns the previous callback's time (0: none).
std::uint64_t SessionConsumer::note_callback(std::uint64_t now) {
  const std::uint64_t prev = callbacks_.add(now);
  if (prev != 0 && now > prev && now - prev > silence_max_live_.load(std::memory_order_relaxed))
    silence_max_live_.store(now - prev, std::memory_order_relaxed);
  return prev;
}

void SessionConsumer::record(const EVENT_RECORD& r) {
  ++records_since_buffer_;
  const GUID& from = r.EventHeader.ProviderId;
  EventStamp stamp{};
  const bool ours =
      same_guid(from, provider_) && r.UserDataLength >= sizeof stamp && r.UserData != nullptr;
  if (ours) std::memcpy(&stamp, r.UserData, sizeof stamp);
  if (ours && (from_file_ || (delay_ns_ == 0 && !timed_sequence(stamp.sequence)))) {
    count(stamp, r.UserDataLength);
    ++untimed_;
    return;
  }
  const std::uint64_t now = clock_.now_ns();
  const std::uint64_t prev = note_callback(now);
  if (ours) {
    if (count(stamp, r.UserDataLength)) timed(stamp, now, prev);
    if (delay_ns_ > 0) {
      // A busy wait: sleeping would round tens of microseconds up to the timer's slack.
      while (clock_.now_ns() - now < delay_ns_) {
      }
    }
    return;
  }
  if (same_guid(from, provider_)) {
    ++result_.foreign_records;  // too short to carry a stamp
    return;
  }
  if (same_guid(from, EventTraceGuid)) {
    header_seen_.store(true);
    return;
  }
  if (same_guid(from, RTLostEventGuid)) {
    lost_notice(r, now);
    return;
  }
  ++result_.foreign_records;
}

// Every record of ours: its sequence number, and the delivered counts. False: no known writer.
bool SessionConsumer::count(const EventStamp& stamp, std::uint32_t bytes) {
  const std::uint64_t writer =
      std::uint64_t{stamp.process_index} * threads_per_process_ + stamp.thread_index;
  if (stamp.thread_index >= threads_per_process_ || writer >= trackers_.size()) {
    ++result_.foreign_records;
    return false;
  }
  trackers_[writer].observe(stamp.sequence);
  ++result_.delivered;
  result_.delivered_bytes += bytes;
  delivered_live_.store(result_.delivered, std::memory_order_relaxed);
  return true;
}

// A timed record: its latency, and the first and last delivery times.
void SessionConsumer::timed(const EventStamp& stamp, std::uint64_t now, std::uint64_t prev) {
  if (now >= stamp.write_time_ns) {
    note_latency(now, prev, stamp.write_time_ns);
  } else {
    ++result_.clock_inversions;
    result_.latency.record(0);
  }
  if (result_.first_delivery_ns == 0) result_.first_delivery_ns = now;
  result_.last_delivery_ns = now;
  untimed_ = 0;
}

// The fast path is one relaxed load and a compare; a new maximum of the step walks the
// callback ring back to its write (the callbacks within its wait) and takes the mutex.
void SessionConsumer::note_latency(std::uint64_t now, std::uint64_t prev,
                                   std::uint64_t write_time) {
  const std::uint64_t latency = now - write_time;
  result_.latency.record(latency);
  if (latency <= latency_max_live_.load(std::memory_order_relaxed)) return;
  const LatencySplit split = split_latency(now, prev, write_time);
  const SilenceInWait silence = callbacks_.longest_silence(now, write_time);
  std::lock_guard lock(slowest_mu_);
  if (latency > slowest_ns_) {
    slowest_ns_ = latency;
    slowest_split_ = split;
    slowest_silence_ = silence;
    latency_max_live_.store(latency, std::memory_order_relaxed);
  }
}

// RT_LostEvent payloads (docs/etwrt/conformance.md, "Choices"): RTLostBuffer (33) = {buffers,
// events they held}, RTLostEvent (32) = {events refused at write}, each a ULONG64.
void SessionConsumer::lost_notice(const EVENT_RECORD& r, std::uint64_t now) {
  std::uint64_t counts[2] = {};
  const std::size_t need = r.EventHeader.EventDescriptor.Opcode == 33 ? 16 : 8;
  const UCHAR op = r.EventHeader.EventDescriptor.Opcode;
  if ((op != 32 && op != 33) || r.UserDataLength < need || r.UserData == nullptr) {
    ++result_.foreign_records;
    return;
  }
  std::memcpy(counts, r.UserData, need);
  if (result_.loss_notices.size() < kMaxLossNotices) {
    result_.loss_notices.push_back(
        {now, op, op == 33 ? counts[0] : 0, op == 33 ? counts[1] : counts[0]});
  }
  if (op == 33) {
    ++result_.lost_buffer_notices;
    result_.lost_buffers_announced += counts[0];
    result_.lost_buffer_events_announced += counts[1];
    buffer_lost_live_.store(result_.lost_buffer_events_announced, std::memory_order_relaxed);
  } else {
    result_.lost_events_announced += counts[0];
  }
}

}  // namespace etwh::stress
