#include "harness/stress/engine.h"
#include "harness/stress/stats.h"
#include "harness/stress/session_consumer.h"
#include "harness/stress/file_session.h"
#include "harness/environment/session_properties.h"

#include "harness/environment/broker_watch.h"

#include "etwh/child_process.h"
#include "etwh/stop_signals.h"

#include "stress_payload.h"
#include "win32_text.h"

#include <evntcons.h>
#include <evntrace.h>

#include <boost/asio/write.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <poll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

namespace etwh::stress {
namespace {

constexpr int kReadyTimeoutMs = 15000;
// Beyond the profile's duration, how long writers may take to finish before the run is a fault.
constexpr std::uint64_t kWriterGraceMs = 30000;

GUID random_guid() {
  std::random_device rd;
  GUID g{};
  g.Data1 = rd();
  g.Data2 = static_cast<unsigned short>(rd());
  g.Data3 = static_cast<unsigned short>((rd() & 0x0fff) | 0x4000);
  for (auto& b : g.Data4) b = static_cast<unsigned char>(rd());
  g.Data4[0] = static_cast<unsigned char>((g.Data4[0] & 0x3f) | 0x80);
  return g;
}

// Peak RSS of this process since the last reset (Linux: VmHWM; writing 5 to clear_refs resets
// it, so each run measures its own peak).
void reset_peak_rss() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
}
// `process`: "self" or a pid.
std::uint64_t peak_rss_kb(const std::string& process = "self") {
  std::ifstream in("/proc/" + process + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6));
  }
  return 0;
}

// Another process's CPU time (utime and stime of /proc/PID/stat, in clock ticks); nullopt when
// the process is gone.
std::optional<CpuTime> process_cpu(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(in, text)) return std::nullopt;
  const auto close = text.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {  // fields 14 and 15, counted from 1
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  if (!fields) return std::nullopt;
  const double tick = 1.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  return CpuTime{static_cast<double>(utime) * tick, static_cast<double>(stime) * tick};
}

struct StartedSession {
  std::string name;
  std::string log_file;                    // a file session's; empty for a realtime one
  std::uint64_t sequential_max_bytes = 0;  // a sequential file's MaximumFileSize; 0: none
  TRACEHANDLE handle = 0;
  bool running = false;
};

// A writer process with a pipe to its stdin and one from its stdout; its stderr is ours.
class WriterProcess {
 public:
  WriterProcess(const std::filesystem::path& exe, const std::vector<std::string>& args) {
    ChildOptions options;
    options.executable = exe;
    options.args = args;
    options.stderr_mode = Stdio::kInherit;
    try {
      child_.emplace(io_, options);
    } catch (const ChildProcessError& e) {
      throw StressHarnessError(e.what());
    }
  }
  WriterProcess(const WriterProcess&) = delete;
  WriterProcess& operator=(const WriterProcess&) = delete;

  // The next line of output, or nullopt at end of file or after timeout_ms.
  std::optional<std::string> read_line(int timeout_ms) {
    const int from_child = child_->stdout_pipe().native_handle();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return line;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            deadline - std::chrono::steady_clock::now())
                            .count();
      if (left <= 0) return std::nullopt;
      throw_if_stop_requested();
      pollfd p{from_child, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(std::min<long long>(left, 100))) <= 0) continue;
      char chunk[4096];
      const ssize_t n = read(from_child, chunk, sizeof chunk);
      if (n <= 0) return std::nullopt;
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

  void send(const std::string& line) {
    boost::system::error_code ec;
    boost::asio::write(child_->stdin_pipe(), boost::asio::buffer(line + "\n"), ec);
    if (ec) throw StressHarnessError("cannot talk to writer process " + std::to_string(pid()));
  }

  // True once the process has exited; status() then says how.
  bool poll_exit() {
    if (!status_) status_ = child_->try_wait();
    return status_.has_value();
  }
  const ExitStatus& status() const { return *status_; }
  int pid() const { return child_->pid(); }

 private:
  boost::asio::io_context io_;
  std::optional<ChildProcess> child_;  // killed and reaped on destruction if still running
  std::string buffer_;
  std::optional<ExitStatus> status_;
};

std::string thousands(std::uint64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3)
    s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

// The stamps' clock of every run of this process (stress_payload.h), calibrated once (20 ms).
const StampClock& stamp_clock() {
  static const StampClock clock = StampClock::calibrate();
  return clock;
}

// CPU time the hypervisor gave to others while this machine's CPUs wanted it (/proc/stat
// "steal", all CPUs; 10 ms ticks): a thread of the run that waits for it was neither preempted
// by this machine nor idle. nullopt where /proc/stat has no steal field.
class StolenTime {
 public:
  void start() { base_ = last_ = read(); }
  // Since the previous step (the first: since start()).
  std::optional<double> step() {
    const auto now = read();
    std::optional<double> ms;
    if (now && last_) ms = ticks_ms(*now - std::min(*now, *last_));
    last_ = now;
    return ms;
  }
  std::optional<double> total() const {
    if (!base_ || !last_) return std::nullopt;
    return ticks_ms(*last_ - std::min(*last_, *base_));
  }

 private:
  static std::optional<std::uint64_t> read() {
    std::ifstream in("/proc/stat");
    std::string line;
    if (!std::getline(in, line)) return std::nullopt;
    return proc_stat_steal_ticks(line);
  }
  static double ticks_ms(std::uint64_t ticks) {
    return static_cast<double>(ticks) * 1000.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  }
  std::optional<std::uint64_t> base_, last_;
};

// Everything a run starts, torn down in the safe order whatever happens: writers killed,
// sessions stopped (which ends ProcessTrace), consumers joined.
struct RunResources {
  std::optional<RunFolder> folder;  // a file profile's: its sessions' files, fio's
  StolenTime stolen;
  std::vector<std::unique_ptr<WriterProcess>> writers;
  std::vector<StartedSession> sessions;
  std::vector<std::unique_ptr<SessionConsumer>> consumers;

  ~RunResources() {
    writers.clear();
    for (auto& s : sessions) {
      if (!s.running) continue;
      Properties p;
      ControlTraceA(s.handle, nullptr, p.get(), EVENT_TRACE_CONTROL_STOP);
    }
    consumers.clear();
  }
};

// This process's CPU time since `before` (getrusage: every thread, the consumers included).
CpuTime cpu_since(const CpuTime& before) {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
  };
  return {seconds(usage.ru_utime) - before.user_s, seconds(usage.ru_stime) - before.system_s};
}

// One step of every session's series: what the consumers have counted (read first, at t_ms)
// and what the sessions say about loss and buffers (ControlTraceA QUERY, a broker round trip
// later). `written` comes later, from the writers' own samples.
void sample_sessions(RunResources& res, std::chrono::steady_clock::time_point go,
                     std::vector<std::vector<SeriesPoint>>& series) {
  const double t_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - go).count();
  const std::optional<double> stolen_ms = res.stolen.step();
  for (std::size_t i = 0; i < res.sessions.size(); ++i) {
    SeriesPoint point;
    point.t_ms = t_ms;
    point.stolen_ms = stolen_ms;
    point.delivered = res.consumers[i]->delivered_so_far();
    point.lost = res.consumers[i]->buffer_lost_so_far();
    res.consumers[i]->take_step(point);
    series[i].push_back(point);
  }
  for (std::size_t i = 0; i < res.sessions.size(); ++i) {
    Properties p;
    const StartedSession& s = res.sessions[i];
    if (ULONG st = ControlTraceA(s.handle, nullptr, p.get(), EVENT_TRACE_CONTROL_QUERY);
        !control_done(st)) {
      throw StressHarnessError(
          fmt::format("ControlTraceA(QUERY, \"{}\") failed with {}", s.name, st));
    }
    SeriesPoint& point = series[i].back();
    point.lost += p.get()->EventsLost;
    const ULONG total = p.get()->NumberOfBuffers;
    point.buffers_in_use = total - std::min(total, p.get()->FreeBuffers);
  }
}

// Waits for every writer to exit, drawing progress and sampling the sessions every series_ms.
void wait_for_writers(RunResources& res, const Profile& profile, const EngineOptions& options,
                      std::chrono::steady_clock::time_point go,
                      std::vector<std::vector<SeriesPoint>>& series) {
  const auto writer_deadline = go + std::chrono::milliseconds(profile.duration_ms + kWriterGraceMs);
  const auto step = std::chrono::milliseconds(options.series_ms);
  auto next_sample = go + step;
  auto next_draw = go;
  for (;;) {
    throw_if_stop_requested();  // RunResources ends the writers and stops the sessions
    bool all = true;
    for (auto& w : res.writers) all = w->poll_exit() && all;
    if (all) break;
    const auto now = std::chrono::steady_clock::now();
    if (now > writer_deadline) {
      throw StressHarnessError("writers still running 30 s after the profile's duration");
    }
    if (now >= next_sample) {
      sample_sessions(res, go, series);
      next_sample += step;
    }
    if (now >= next_draw) {
      const double elapsed = std::chrono::duration<double>(now - go).count();
      std::string text = "delivered";
      for (std::size_t i = 0; i < res.consumers.size(); ++i) {
        text += fmt::format(" s{} {}", i, thousands(res.consumers[i]->delivered_so_far()));
      }
      if (options.progress) options.progress(elapsed, text);
      next_draw = now + std::chrono::milliseconds(100);
    }
    std::this_thread::sleep_until(
        std::min({next_sample, next_draw, now + std::chrono::milliseconds(100)}));
  }
}

// Reads every writer's final line into `run` (counts, CPU time, written series); returns what
// each writer thread wrote, for the sequence bookkeeping.
std::vector<std::uint64_t> collect_writer_counts(RunResources& res, const Profile& profile,
                                                 RunResult& run) {
  std::vector<std::uint64_t> written_per_writer(std::size_t{profile.processes} * profile.threads,
                                                0);
  for (auto& w : res.writers) {
    if (!w->status().success()) {
      throw StressHarnessError(fmt::format("writer {} {}", w->pid(), w->status().describe()));
    }
    auto line = w->read_line(5000);
    const auto msg = line ? nlohmann::json::parse(*line, nullptr, false) : nlohmann::json();
    if (!line || msg.is_discarded() || !msg.contains("threads")) {
      throw StressHarnessError(fmt::format("writer {} reported no counts", w->pid()));
    }
    const auto process_index = msg.at("process_index").get<std::uint32_t>();
    run.writer_peak_rss_kb =
        std::max(run.writer_peak_rss_kb, msg.at("peak_rss_kb").get<std::uint64_t>());
    run.writer_cpu.user_s += msg.at("cpu_user_s").get<double>();
    run.writer_cpu.system_s += msg.at("cpu_system_s").get<double>();
    WriterSamples samples;
    samples.start_ns = msg.at("series_start_ns").get<std::uint64_t>();
    samples.step_ns = run.series_ms * 1000000;
    samples.samples = msg.at("written_series").get<std::vector<std::uint64_t>>();
    const auto& threads = msg.at("threads");
    if (process_index >= profile.processes || threads.size() != profile.threads) {
      throw StressHarnessError(fmt::format("writer {} reported process {} with {} threads",
                                           w->pid(), process_index, threads.size()));
    }
    for (std::size_t t = 0; t < threads.size(); ++t) {
      const auto& c = threads[t];
      const auto attempts = c.at("attempts").get<std::uint64_t>();
      written_per_writer[std::size_t{process_index} * profile.threads + t] = attempts;
      samples.total += attempts;
      run.attempts += attempts;
      run.accepted += c.at("accepted").get<std::uint64_t>();
      run.refused_no_buffer += c.at("refused_no_buffer").get<std::uint64_t>();
      run.refused_too_large += c.at("refused_too_large").get<std::uint64_t>();
      run.refused_other += c.at("refused_other").get<std::uint64_t>();
      const auto first = c.at("first_write_ns").get<std::uint64_t>();
      const auto last = c.at("last_write_ns").get<std::uint64_t>();
      if (first != 0 && (run.first_write_ns == 0 || first < run.first_write_ns))
        run.first_write_ns = first;
      run.last_write_ns = std::max(run.last_write_ns, last);
      samples.end_ns = std::max(samples.end_ns, last);
    }
    run.writer_samples.push_back(std::move(samples));
  }
  if (run.last_write_ns > run.first_write_ns) {
    run.write_events_per_s = static_cast<double>(run.attempts) /
                             (static_cast<double>(run.last_write_ns - run.first_write_ns) / 1e9);
  }
  return written_per_writer;
}

// Writers are gone, so the counters are final: STOP reports them, and ProcessTrace returns
// once the consumer has drained what the session still held.
void stop_sessions(RunResources& res, const std::vector<std::uint64_t>& written_per_writer,
                   RunResult& run) {
  for (std::size_t i = 0; i < res.sessions.size(); ++i) {
    StartedSession& s = res.sessions[i];
    Properties p;
    const ULONG st = ControlTraceA(s.handle, nullptr, p.get(), EVENT_TRACE_CONTROL_STOP);
    if (!control_done(st)) {
      throw StressHarnessError(
          fmt::format("ControlTraceA(STOP, \"{}\") failed with {}", s.name, st));
    }
    s.running = false;
    const std::uint64_t stopped_ns = monotonic_ns();  // the file is whole: written and synced
    if (!s.log_file.empty()) res.consumers[i]->open_file(s.log_file);  // read back now
    res.consumers[i]->join();
    if (res.consumers[i]->process_status() != ERROR_SUCCESS) {
      throw StressHarnessError(fmt::format("ProcessTrace on \"{}\" returned {}", s.name,
                                           res.consumers[i]->process_status()));
    }
    SessionResult& r = res.consumers[i]->finish(written_per_writer);
    r.events_lost = p.get()->EventsLost;
    r.realtime_buffers_lost = p.get()->RealTimeBuffersLost;
    r.buffers_written = p.get()->BuffersWritten;
    r.number_of_buffers = p.get()->NumberOfBuffers;
    r.maximum_buffers = p.get()->MaximumBuffers;
    r.buffer_size_kb = p.get()->BufferSize;
    r.free_buffers = p.get()->FreeBuffers;
    if (r.file) note_file_written(r, run.go_ns, stopped_ns, s.sequential_max_bytes);
    run.sessions.push_back(r);
  }
}

// Starts the profile's sessions, enables the provider on each and attaches a consumer to each;
// returns once every consumer got its session's header event.
void start_sessions(RunResources& res, const Profile& profile, const GUID& provider,
                    unsigned run_number) {
  const std::uint32_t writers_total = profile.processes * profile.threads;
  for (std::uint32_t i = 0; i < profile.sessions; ++i) {
    StartedSession s;
    // Named as `etwh run` names its sessions (etwh-<pid>-...): a crashed run's are found again.
    s.name = fmt::format("etwh-{}-stress-{}-{}", getpid(), run_number, i);
    Properties p;
    EVENT_TRACE_PROPERTIES* props = p.get();
    props->LogFileMode = EVENT_TRACE_REAL_TIME_MODE;
    if (profile.log_file) {
      s.log_file = (res.folder->path() / (s.name + ".etl")).string();
      set_log_file(props, p.size(), s.log_file, *profile.log_file);
      if (profile.log_file->mode == FileMode::kSequential) {
        s.sequential_max_bytes = std::uint64_t{profile.log_file->max_mb} * 1024 * 1024;
      }
    }
    props->BufferSize = profile.buffers.buffer_size_kb;
    props->MinimumBuffers = profile.buffers.minimum_buffers;
    props->MaximumBuffers = profile.buffers.maximum_buffers;
    props->FlushTimer = profile.buffers.flush_timer_s;
    if (ULONG st = StartTraceA(&s.handle, s.name.c_str(), props); st != ERROR_SUCCESS) {
      throw StressHarnessError(fmt::format(
          "StartTraceA(\"{}\") failed with {}{}", s.name, st,
          st == ERROR_NO_SYSTEM_RESOURCES ? ": the machine's limit on running sessions is reached"
                                          : ""));
    }
    s.running = true;
    res.sessions.push_back(s);
    if (ULONG st = EnableTraceEx2(s.handle, &provider, EVENT_CONTROL_CODE_ENABLE_PROVIDER,
                                  TRACE_LEVEL_VERBOSE, 0, 0, 0, nullptr);
        st != ERROR_SUCCESS) {
      throw StressHarnessError(fmt::format("EnableTraceEx2 on \"{}\" failed with {}", s.name, st));
    }
    res.consumers.push_back(std::make_unique<SessionConsumer>(
        s.name, provider, profile.threads, writers_total, profile.consumer_delay_us,
        profile.latency_every, stamp_clock()));
    if (s.log_file.empty()) res.consumers.back()->open();  // a file is read once stopped
  }
  // The consumers must be attached before anything is written, or early events would be
  // buffered (or lost with no reader to reclaim for) outside the regime being measured.
  for (auto& c : res.consumers) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (!c->attached() && !profile.log_file) {
      throw_if_stop_requested();
      if (c->finished() || std::chrono::steady_clock::now() > deadline) {
        throw StressHarnessError("a consumer never received its session's header event");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

// What a run had counted when it broke off, for the harness error that ends it.
std::string counted_so_far(const RunResources& res, const RunResult& run) {
  std::uint64_t delivered = 0, lost = 0;
  for (const auto& c : res.consumers) {
    delivered += c->delivered_so_far();
    lost += c->buffer_lost_so_far();
  }
  return fmt::format(
      "counted so far: written {} (the writers' own counts; 0 until they all ended), "
      "delivered {} and lost {} (as the consumers counted) in {} sessions",
      run.attempts, delivered, lost, res.consumers.size());
}

// A file profile's folder, and the disk's own write rate measured there before anything runs.
void prepare_file_run(RunResources& res, unsigned run_number, RunResult& run) {
  res.folder.emplace(std::to_string(run_number));
  const DiskRate disk = measure_disk_write(res.folder->path());
  run.disk_mb_per_s = disk.mb_per_s;
  run.disk_tool = disk.tool;
  run.disk_unavailable = disk.unavailable;
}

// Starts the sessions and writers, lets the writers run, then stops the sessions: `run` gets
// what was counted, `res` what was started, `broker` the broker that served once the sessions
// had started (the first call starts it).
void drive_run(RunResources& res, const Profile& profile, const EngineOptions& options,
               RunResult& run, std::optional<BrokerIdentity>& broker) {
  const GUID provider = random_guid();
  static std::atomic<unsigned> run_counter{0};
  const unsigned run_number = run_counter.fetch_add(1);
  if (profile.log_file) prepare_file_run(res, run_number, run);
  start_sessions(res, profile, provider, run_number);
  broker = current_broker();
  const std::optional<CpuTime> broker_cpu_at_start =
      broker ? process_cpu(broker->pid) : std::nullopt;
  const std::string provider_text = format_guid(provider);
  for (std::uint32_t i = 0; i < profile.processes; ++i) {
    std::vector<std::string> args = {"--provider",      provider_text,
                                     "--process-index", std::to_string(i),
                                     "--threads",       std::to_string(profile.threads),
                                     "--payload-bytes", std::to_string(profile.payload_bytes),
                                     "--rate",          std::to_string(profile.rate),
                                     "--duration-ms",   std::to_string(profile.duration_ms),
                                     "--series-ms",     std::to_string(options.series_ms),
                                     "--clock",         stamp_clock().text()};
    if (profile.burst_events > 0) {
      args.insert(args.end(), {"--burst-events", std::to_string(profile.burst_events),
                               "--burst-period-ms", std::to_string(profile.burst_period_ms)});
    }
    res.writers.push_back(std::make_unique<WriterProcess>(options.writer, args));
  }
  for (auto& w : res.writers) {
    auto line = w->read_line(kReadyTimeoutMs);
    if (!line) throw StressHarnessError(fmt::format("writer {} never said ready", w->pid()));
    const auto msg = nlohmann::json::parse(*line, nullptr, false);
    if (msg.is_discarded() || !msg.value("ready", false)) {
      throw StressHarnessError(fmt::format("writer {}: unexpected line: {}", w->pid(), *line));
    }
    if (!msg.value("enabled", false)) {
      throw StressHarnessError(fmt::format("writer {}: its provider is not enabled", w->pid()));
    }
  }
  for (auto& w : res.writers) w->send("go");

  // steady_clock is CLOCK_MONOTONIC: the clock of the writers' samples and, within a few us
  // per run, of their stamps (StampClock).
  const auto go = std::chrono::steady_clock::now();
  res.stolen.start();
  run.go_ns = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(go.time_since_epoch()).count());
  std::vector<std::vector<SeriesPoint>> series(res.sessions.size());
  wait_for_writers(res, profile, options, go, series);
  const std::vector<std::uint64_t> written_per_writer = collect_writer_counts(res, profile, run);
  stop_sessions(res, written_per_writer, run);
  if (broker_cpu_at_start) {
    if (const auto now = process_cpu(broker->pid)) {
      run.broker_cpu = CpuTime{now->user_s - broker_cpu_at_start->user_s,
                               now->system_s - broker_cpu_at_start->system_s};
      run.broker_peak_rss_kb = peak_rss_kb(std::to_string(broker->pid));
      run.broker_pid = broker->pid;
    }
  }
  const double end_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - go).count();
  const std::optional<double> stolen_ms = res.stolen.step();
  run.stolen_ms = res.stolen.total();
  for (std::size_t i = 0; i < run.sessions.size(); ++i) {
    SessionResult& r = run.sessions[i];
    r.series = std::move(series[i]);
    SeriesPoint last;
    last.t_ms = end_ms;
    last.stolen_ms = stolen_ms;
    last.delivered = r.delivered;
    last.lost = r.events_lost + r.lost_buffer_events_announced;
    last.buffers_in_use = r.number_of_buffers - std::min(r.number_of_buffers, r.free_buffers);
    res.consumers[i]->take_step(last);  // the drain after the writers
    r.series.push_back(last);
    check_series(r);
  }
}

}  // namespace

RunResult run_profile(const Profile& profile, const EngineOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  RunResult run;
  run.profile = profile;
  reset_peak_rss();
  run.series_ms = options.series_ms;
  const CpuTime cpu_at_start = cpu_since({});

  // A broker that died or restarted during the run broke the run, not a rule: whatever the
  // run saw then (a failed call, counts that do not add up) is a harness error naming it.
  if (const std::string problem = etwrt_environment_problem(); !problem.empty()) {
    throw StressHarnessError("the platform cannot be used: " + problem);
  }
  std::optional<BrokerIdentity> broker_before = current_broker();
  {
    RunResources res;
    try {
      drive_run(res, profile, options, run, broker_before);
    } catch (const StressHarnessError& e) {
      const std::string change = broker_change(broker_before, current_broker(), "the run");
      if (change.empty()) throw;
      throw StressHarnessError(fmt::format("environment: {}; {}; the run broke off with: {}",
                                           change, counted_so_far(res, run), e.what()));
    }
    const std::string change = broker_change(broker_before, current_broker(), "the run");
    if (!change.empty()) {
      throw StressHarnessError(
          fmt::format("environment: {}; {}", change, counted_so_far(res, run)));
    }
    run.consumer_cpu = cpu_since(cpu_at_start);
    run.consumer_peak_rss_kb = peak_rss_kb();
  }
  judge_run(run);
  run.duration_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return run;
}

}  // namespace etwh::stress
