#include "harness/stress/stress_trace.h"

#include <fmt/format.h>

#include <algorithm>

namespace etwh::stress {
namespace {

using nlohmann::json;

// Run r's sessions are r * 1000 + i, its writers r * 1000 + 500 + w, above the base.
std::int64_t session_pid(unsigned run_index, std::size_t session) {
  return kSyntheticPidBase + std::int64_t{run_index} * 1000 + static_cast<std::int64_t>(session);
}

std::int64_t writer_pid(unsigned run_index, std::size_t writer) {
  return kSyntheticPidBase + std::int64_t{run_index} * 1000 + 500 +
         static_cast<std::int64_t>(writer);
}

constexpr std::int64_t kConsumerTid = 1;
constexpr std::int64_t kWriterTid = 1;

double per_second(std::uint64_t now, std::uint64_t before, double step_ms) {
  return step_ms > 0 ? static_cast<double>(now - std::min(now, before)) * 1000.0 / step_ms : 0.0;
}

void trace_session(trace::Trace& t, const RunResult& run, std::int64_t pid,
                   const SessionResult& s) {
  const SeriesPoint* before = nullptr;
  // The lower-bound flag gets a track only in sessions where it was ever set.
  const bool partial = std::any_of(s.series.begin(), s.series.end(), [](const SeriesPoint& p) {
    return p.latency_max_silence_partial;
  });
  for (const SeriesPoint& p : s.series) {
    const auto at = static_cast<std::int64_t>(run.go_ns) + static_cast<std::int64_t>(p.t_ms * 1e6);
    t.counter(pid, "events", at,
              {{"written", p.written}, {"delivered", p.delivered}, {"lost", p.lost}});
    t.counter(pid, "consumer lag (events)", at, {{"lag", p.lag_events}});
    t.counter(pid, "buffers in use", at, {{"buffers", p.buffers_in_use}});
    // Stacked: the two parts of the step's slowest delivery add up to it (check_series).
    t.counter(pid, "latency max since last step (us)", at,
              {{"quiet", static_cast<double>(p.latency_max_quiet_ns) / 1000.0},
               {"behind", static_cast<double>(p.latency_max_behind_ns) / 1000.0}});
    t.counter(pid, "records per BufferCallback", at,
              {{"max", p.batch_max}, {"mean", p.batch_mean}});
    // The step's longest silence anywhere, and the longest within its slowest delivery's wait.
    t.counter(pid, "consumer silence max (us)", at,
              {{"silence", static_cast<double>(p.silence_max_ns) / 1000.0},
               {"in slowest wait", static_cast<double>(p.latency_max_silence_ns) / 1000.0}});
    if (partial) {
      t.counter(pid, "silence in slowest wait is a lower bound", at,
                {{"partial", p.latency_max_silence_partial ? 1 : 0}});
    }
    t.counter(pid, "consumer thread CPU share", at, {{"share", p.consumer_cpu_share}});
    t.counter(pid, "consumer thread preemptions", at, {{"preemptions", p.consumer_preemptions}});
    if (p.stolen_ms) t.counter(pid, "CPU stolen by the host (ms)", at, {{"stolen", *p.stolen_ms}});
    if (before != nullptr) {
      const double step_ms = p.t_ms - before->t_ms;
      t.counter(pid, "events/s", at,
                {{"written", per_second(p.written, before->written, step_ms)},
                 {"delivered", per_second(p.delivered, before->delivered, step_ms)}});
    }
    before = &p;
  }
  const trace::Track consumer{pid, kConsumerTid};
  t.name_thread(consumer, "consumer (ProcessTrace)");
  for (const LossNotice& n : s.loss_notices) {
    const bool buffer = n.opcode == 33;
    json args = {{"events", n.events}};
    if (buffer) args["buffers"] = n.buffers;
    t.instant(consumer, buffer ? "RTLostBuffer" : "RTLostEvent", "loss",
              static_cast<std::int64_t>(n.at_ns), std::move(args));
  }
}

// A slice per series step in which the writer process wrote (all its threads together: the
// writers sample their counts per process).
void trace_writer(trace::Trace& t, std::int64_t pid, const WriterSamples& w) {
  const trace::Track track{pid, kWriterTid};
  t.name_thread(track, "EventWrite (all threads)");
  std::uint64_t begin = w.start_ns, count_before = 0;
  for (std::size_t k = 0; k <= w.samples.size(); ++k) {
    const bool last = k == w.samples.size();
    const std::uint64_t end = last ? std::max(w.end_ns, begin) : w.start_ns + (k + 1) * w.step_ns;
    const std::uint64_t count = last ? w.total : w.samples[k];
    if (count > count_before) {
      t.complete(track, "EventWrite batch", "write", static_cast<std::int64_t>(begin),
                 static_cast<std::int64_t>(end), {{"events", count - count_before}});
    }
    begin = end;
    count_before = std::max(count_before, count);
  }
}

}  // namespace

void trace_run(trace::Trace& t, const RunResult& run, unsigned run_index,
               const std::string& label) {
  for (std::size_t i = 0; i < run.sessions.size(); ++i) {
    const std::int64_t pid = session_pid(run_index, i);
    t.name_process(pid, fmt::format("{}: session {}", label, run.sessions[i].name));
    trace_session(t, run, pid, run.sessions[i]);
  }
  for (std::size_t w = 0; w < run.writer_samples.size(); ++w) {
    const std::int64_t pid = writer_pid(run_index, w);
    t.name_process(pid, fmt::format("{}: writer process {}", label, w));
    trace_writer(t, pid, run.writer_samples[w]);
  }
}

}  // namespace etwh::stress
