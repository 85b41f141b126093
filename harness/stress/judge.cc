// judge_run (engine.h): a run's derived figures and its verdict, from the counters the engine
// gathered (harness/stress/README.md, "Accounting").
#include "harness/stress/engine.h"
#include "harness/stress/stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace etwh::stress {
namespace {

// Every event of session `s` accounted for, each kind of loss announced as often as it was
// counted, and the sequence numbers agreeing with both.
void check_session(const std::string& who, const SessionResult& s,
                   std::vector<std::string>& failures) {
  if (!s.balanced) {
    const auto right = s.delivered + s.reported_lost;
    failures.push_back(fmt::format(
        "{}: written {} != delivered {} + reported lost {} (EventsLost {} + {} events in {} "
        "realtime buffers lost): {} events {}",
        who, s.written, s.delivered, s.reported_lost, s.events_lost, s.lost_buffer_events_announced,
        s.lost_buffers_announced, right > s.written ? right - s.written : s.written - right,
        right > s.written ? "too many" : "unaccounted for"));
  }
  if (s.file) {  // no realtime notices: the file's final header counts the loss instead
    if (s.file->header_events_lost != s.events_lost) {
      failures.push_back(
          fmt::format("{}: the log file's header says EventsLost {}, ControlTrace {}", who,
                      s.file->header_events_lost, s.events_lost));
    }
  } else if (s.lost_events_announced != s.events_lost) {
    failures.push_back(
        fmt::format("{}: RTLostEvent pseudo-events announced {} events refused, ControlTrace says "
                    "EventsLost {}",
                    who, s.lost_events_announced, s.events_lost));
  }
  if (!s.file && s.lost_buffers_announced != s.realtime_buffers_lost) {
    failures.push_back(
        fmt::format("{}: RTLostBuffer pseudo-events announced {} buffers, ControlTrace says "
                    "RealTimeBuffersLost {}",
                    who, s.lost_buffers_announced, s.realtime_buffers_lost));
  }
  if (s.duplicates > 0) {
    failures.push_back(fmt::format("{}: {} duplicate events delivered", who, s.duplicates));
  }
  if (s.beyond_written > 0 || s.foreign_records > 0) {
    failures.push_back(fmt::format(
        "{}: {} sequence numbers beyond what the writers wrote, {} records of no writer", who,
        s.beyond_written, s.foreign_records));
  }
  if (s.duplicates == 0 && s.missing != s.reported_lost) {
    failures.push_back(
        fmt::format("{}: sequence numbers show {} events missing in {} gaps, {} reported lost", who,
                    s.missing, s.gaps, s.reported_lost));
  }
}

// CPU time in ns over a span of wall time in ms (0 for no span).
double share_of(std::uint64_t cpu_ns, double span_ms) {
  return span_ms > 0 ? static_cast<double>(cpu_ns) / 1e6 / span_ms : 0.0;
}

// The steps of `s`'s series where loss was reported, with how far behind the consumer was.
void find_loss_steps(SessionResult& s) {
  s.loss_steps.clear();
  s.lost_behind_longer_than_buffers = 0;
  std::uint64_t lost_before = 0, behind_before_ns = 0;
  for (const SeriesPoint& p : s.series) {
    const std::uint64_t behind_ns = std::max(p.silence_max_ns, p.latency_max_ns);
    if (p.lost > lost_before) {
      const LossStep step{p.t_ms, p.lost - lost_before,
                          static_cast<double>(std::max(behind_ns, behind_before_ns)) / 1e6};
      if (s.buffers_span_ms && step.behind_ms >= *s.buffers_span_ms) {
        s.lost_behind_longer_than_buffers += step.lost;
      }
      s.loss_steps.push_back(step);
      lost_before = p.lost;
    }
    behind_before_ns = behind_ns;
  }
}

// Session `s`'s throughput and lag, and what the writers had written at each point of its
// series.
void measure_session(const RunResult& run, SessionResult& s) {
  const double span_s = s.last_delivery_ns > run.first_write_ns
                            ? static_cast<double>(s.last_delivery_ns - run.first_write_ns) / 1e9
                            : 0.0;
  if (span_s > 0) {
    s.events_per_s = static_cast<double>(s.delivered) / span_s;
    s.mb_per_s = static_cast<double>(s.delivered_bytes) / span_s / 1e6;
  }
  s.lag_ms = s.last_delivery_ns > run.last_write_ns
                 ? static_cast<double>(s.last_delivery_ns - run.last_write_ns) / 1e6
                 : 0.0;
  // How long the session's buffers last at the writers' pace: the time they took to fill as
  // many buffers as the session may have. A consumer that stops for longer must lose events.
  s.buffers_span_ms.reset();
  if (s.buffers_written > 0 && run.last_write_ns > run.first_write_ns) {
    s.buffers_span_ms = static_cast<double>(run.last_write_ns - run.first_write_ns) / 1e6 *
                        static_cast<double>(s.maximum_buffers) /
                        static_cast<double>(s.buffers_written);
  }
  // The consumer thread's CPU time over each step's time (the first step's: since go), and
  // over the run's.
  s.consumer_cpu_ns = 0;
  s.consumer_preemptions = 0;
  double previous_ms = 0;
  for (SeriesPoint& point : s.series) {
    s.consumer_cpu_ns += point.consumer_cpu_ns;
    s.consumer_preemptions += point.consumer_preemptions;
    point.consumer_cpu_share = share_of(point.consumer_cpu_ns, point.t_ms - previous_ms);
    previous_ms = point.t_ms;
  }
  s.consumer_cpu_share = share_of(s.consumer_cpu_ns, previous_ms);
  find_loss_steps(s);
  for (SeriesPoint& point : s.series) {
    const auto t_ns = run.go_ns + static_cast<std::uint64_t>(point.t_ms * 1e6);
    double written = 0;
    for (const WriterSamples& w : run.writer_samples) written += written_at(w, t_ns);
    point.written = static_cast<std::uint64_t>(std::llround(written));
    const std::uint64_t consumed = point.delivered + point.lost;
    point.lag_events = point.written > consumed ? point.written - consumed : 0;
  }
}

void measure_cpu(RunResult& run) {
  std::uint64_t delivered_all = 0;
  for (const SessionResult& s : run.sessions) delivered_all += s.delivered;
  run.writer_cpu_ns_per_event =
      run.attempts > 0 ? run.writer_cpu.total_s() * 1e9 / static_cast<double>(run.attempts) : 0;
  if (run.broker_cpu && run.attempts > 0) {
    run.broker_cpu_ns_per_event =
        run.broker_cpu->total_s() * 1e9 / static_cast<double>(run.attempts);
  }
  run.consumer_cpu_ns_per_event =
      delivered_all > 0 ? run.consumer_cpu.total_s() * 1e9 / static_cast<double>(delivered_all) : 0;
}

// What EventWrite returned must agree with the sessions' EventsLost: a refused call lost the
// event in at least one session, and a session's loss was a refused call. And the loss must be
// what the profile expects.
void check_run(RunResult& run, std::uint64_t max_events_lost, std::uint64_t sum_events_lost,
               std::uint64_t total_lost) {
  const Profile& p = run.profile;
  const std::uint64_t refused = run.refused_no_buffer + run.refused_too_large + run.refused_other;
  if (refused < max_events_lost || refused > sum_events_lost) {
    run.failures.push_back(fmt::format(
        "{}: EventWrite refused {} calls, but the sessions' EventsLost are {} at most and {} "
        "in all (expected refused within [{}, {}])",
        p.name, refused, max_events_lost, sum_events_lost, max_events_lost, sum_events_lost));
  }
  if (p.expect_loss == LossExpectation::kNone && total_lost > 0) {
    run.failures.push_back(
        fmt::format("{}: the profile expects no loss, {} events were lost", p.name, total_lost));
  }
  if (p.expect_loss == LossExpectation::kSome && total_lost == 0) {
    run.failures.push_back(fmt::format(
        "{}: the profile expects loss (a consumer slower than the writers), none happened",
        p.name));
  }
}

}  // namespace

void check_series(const SessionResult& session) {
  std::uint64_t steps_max = 0;
  for (const SeriesPoint& p : session.series) {
    steps_max = std::max(steps_max, p.latency_max_ns);
    if (p.latency_max_quiet_ns + p.latency_max_behind_ns != p.latency_max_ns) {
      throw StressHarnessError(fmt::format(
          "session \"{}\", step at {:.1f} ms: the slowest delivery's parts, quiet {} ns + behind "
          "{} ns, are not its latency {} ns",
          session.name, p.t_ms, p.latency_max_quiet_ns, p.latency_max_behind_ns, p.latency_max_ns));
    }
    // The quiet stretch is one of the silences within the wait, which lies within the latency.
    if (p.latency_max_silence_ns < p.latency_max_quiet_ns ||
        p.latency_max_silence_ns > p.latency_max_ns) {
      throw StressHarnessError(fmt::format(
          "session \"{}\", step at {:.1f} ms: the longest silence in the slowest delivery's wait, "
          "{} ns, is not between its quiet part {} ns and its latency {} ns",
          session.name, p.t_ms, p.latency_max_silence_ns, p.latency_max_quiet_ns,
          p.latency_max_ns));
    }
  }
  // Every delivery's latency lands in exactly one step, so the steps' largest is the run's.
  if (steps_max != session.latency.max()) {
    throw StressHarnessError(
        fmt::format("session \"{}\": the time series' largest latency {} ns is not the run's {} ns",
                    session.name, steps_max, session.latency.max()));
  }
}

void judge_run(RunResult& run) {
  std::uint64_t max_events_lost = 0, sum_events_lost = 0, total_lost = 0;
  for (SessionResult& s : run.sessions) {
    s.written = run.attempts;  // every session's filter accepts every stress event
    s.reported_lost = s.events_lost + s.lost_buffer_events_announced;
    s.balanced = s.written == s.delivered + s.reported_lost;
    // A file session's EventsLost also holds what its logger did not keep (a full file, a
    // circular file's overwritten buffers): no EventWrite refused those.
    if (!s.file) max_events_lost = std::max(max_events_lost, s.events_lost);
    sum_events_lost += s.events_lost;
    total_lost += s.reported_lost;
    check_session(fmt::format("{} session {}", run.profile.name, s.name), s, run.failures);
    measure_session(run, s);
  }
  for (SessionResult& s : run.sessions) {
    if (s.file && run.disk_mb_per_s && *run.disk_mb_per_s > 0) {
      s.file->of_disk_rate = s.file->mb_per_s / *run.disk_mb_per_s;
    }
  }
  measure_cpu(run);
  check_run(run, max_events_lost, sum_events_lost, total_lost);
}

}  // namespace etwh::stress
