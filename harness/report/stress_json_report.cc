// The results document of `etwh stress` (schemas/stress.schema.json): every figure of its runs
// (model/stress_run.h), latencies in microseconds, histograms as their non-empty buckets.
#include "harness/report/stress_formats.h"

namespace etwh::stress {
namespace {

double us(std::uint64_t ns) { return static_cast<double>(ns) / 1000.0; }

// A latency percentile as a multiple of the floor's same percentile (0 when no floor).
double vs_floor(const LatencyHistogram& latency, const LatencyHistogram& floor, double q) {
  const std::uint64_t f = floor.percentile(q);
  return f == 0 ? 0.0 : static_cast<double>(latency.percentile(q)) / static_cast<double>(f);
}

// The fixed log-linear buckets (latency_histogram.h), non-empty ones only: [index, lower ns, upper
// ns, count].
nlohmann::ordered_json histogram_json(const LatencyHistogram& h) {
  nlohmann::ordered_json buckets = nlohmann::ordered_json::array();
  for (const LatencyHistogram::Bucket& b : h.nonempty_buckets()) {
    buckets.push_back({b.index, LatencyHistogram::bucket_lower(b.index),
                       LatencyHistogram::bucket_upper(b.index), b.count});
  }
  return {{"unit", "ns"},
          {"layout", "log-linear"},
          {"sub_bucket_bits", LatencyHistogram::kSubBucketBits},
          {"count", h.count()},
          {"max", h.max()},
          {"buckets", buckets}};
}

nlohmann::ordered_json floor_json(const LatencyHistogram& floor) {
  return {{"p50", us(floor.percentile(0.5))},
          {"p99", us(floor.percentile(0.99))},
          {"p999", us(floor.percentile(0.999))},
          {"samples", floor.count()}};
}

nlohmann::ordered_json cpu_json(const CpuTime& cpu, double ns_per_event) {
  return {{"user_s", cpu.user_s}, {"system_s", cpu.system_s}, {"ns_per_event", ns_per_event}};
}

// A placement's floor: both windows together, then each.
nlohmann::ordered_json floor_windows_json(const FloorWindows& f) {
  if (!f.measured()) return {{"unavailable", f.unavailable}};
  nlohmann::ordered_json j = floor_json(f.both);
  j["before"] = floor_json(f.before);
  j["after"] = floor_json(f.after);
  j["histogram"] = histogram_json(f.both);
  return j;
}

// A session's p50, p99, p99.9 over each placement's floor (null: no other CPU).
nlohmann::ordered_json vs_floors_json(const LatencyHistogram& latency, const Outcome& o) {
  auto three = [&](const LatencyHistogram& f) -> nlohmann::ordered_json {
    return {{"p50", vs_floor(latency, f, 0.5)},
            {"p99", vs_floor(latency, f, 0.99)},
            {"p999", vs_floor(latency, f, 0.999)}};
  };
  auto of = [&](const FloorWindows& f) {
    return f.measured() ? three(f.both) : nlohmann::ordered_json(nullptr);
  };
  return {{"same_cpu", of(o.floor_same_cpu)},
          {"other_cpu", of(o.floor_other_cpu)},
          {"reader_nap", three(o.reader_nap.both)}};
}

nlohmann::ordered_json file_json(const FileResult& f) {
  return {{"bytes", f.bytes},
          {"header_events_lost", f.header_events_lost},
          {"header_buffers_lost", f.header_buffers_lost},
          {"header_buffers_written", f.header_buffers_written},
          {"write_s", f.write_s},
          {"events_per_s", f.events_per_s},
          {"mb_per_s", f.mb_per_s},
          {"of_disk_rate",
           f.of_disk_rate ? nlohmann::ordered_json(*f.of_disk_rate) : nlohmann::ordered_json()},
          {"at_maximum_size", f.at_maximum_size}};
}

nlohmann::ordered_json session_json(const SessionResult& s, const Outcome& o,
                                    std::uint64_t latency_every) {
  nlohmann::ordered_json j;
  j["name"] = s.name;
  j["balanced"] = s.balanced;
  j["written"] = s.written;
  j["delivered"] = s.delivered;
  j["reported_lost"] = s.reported_lost;
  j["lost"] = {{"events_lost", s.events_lost},
               {"realtime_buffers_lost", s.realtime_buffers_lost},
               {"realtime_buffer_events_lost", s.lost_buffer_events_announced},
               {"rt_lost_buffer_notices", s.lost_buffer_notices},
               {"rt_lost_event_events", s.lost_events_announced}};
  j["sequence"] = {{"duplicates", s.duplicates},
                   {"gaps", s.gaps},
                   {"missing", s.missing},
                   {"beyond_written", s.beyond_written},
                   {"foreign_records", s.foreign_records}};
  j["throughput"] = {{"events_per_s", s.events_per_s},
                     {"mb_per_s", s.mb_per_s},
                     {"delivered_bytes", s.delivered_bytes}};
  j["latency_us"] = {
      {"p50", us(s.latency.percentile(0.5))},    {"p99", us(s.latency.percentile(0.99))},
      {"p999", us(s.latency.percentile(0.999))}, {"max", us(s.latency.max())},
      {"clock_inversions", s.clock_inversions},  {"timed_every", latency_every}};
  j["latency_vs_floor"] = vs_floors_json(s.latency, o);
  j["latency_histogram"] = histogram_json(s.latency);
  j["consumer_lag_ms"] = s.lag_ms;
  j["buffers"] = {{"written", s.buffers_written},
                  {"number", s.number_of_buffers},
                  {"free_at_stop", s.free_buffers},
                  {"size_kb", s.buffer_size_kb},
                  {"maximum", s.maximum_buffers},
                  {"shared_memory_kb", s.number_of_buffers * s.buffer_size_kb}};
  j["buffers_span_ms"] = nullptr;
  if (s.buffers_span_ms) j["buffers_span_ms"] = *s.buffers_span_ms;
  j["consumer_thread"] = {{"cpu_s", static_cast<double>(s.consumer_cpu_ns) / 1e9},
                          {"cpu_share", s.consumer_cpu_share},
                          {"preemptions", s.consumer_preemptions}};
  j["loss_steps"] = nlohmann::ordered_json::array();
  for (const LossStep& step : s.loss_steps) {
    j["loss_steps"].push_back(
        {{"t_ms", step.t_ms}, {"lost", step.lost}, {"behind_ms", step.behind_ms}});
  }
  j["lost_behind_longer_than_buffers"] = s.lost_behind_longer_than_buffers;
  j["file"] = s.file ? file_json(*s.file) : nlohmann::ordered_json();  // null: realtime
  j["series"] = nlohmann::ordered_json::array();
  for (const SeriesPoint& p : s.series) {
    j["series"].push_back(
        nlohmann::ordered_json{{"t_ms", p.t_ms},
                               {"written", p.written},
                               {"delivered", p.delivered},
                               {"lost", p.lost},
                               {"lag_events", p.lag_events},
                               {"buffers_in_use", p.buffers_in_use},
                               {"latency_max_us", us(p.latency_max_ns)},
                               {"latency_max_quiet_us", us(p.latency_max_quiet_ns)},
                               {"latency_max_behind_us", us(p.latency_max_behind_ns)},
                               {"latency_max_silence_us", us(p.latency_max_silence_ns)},
                               {"latency_max_silence_partial", p.latency_max_silence_partial},
                               {"batch_max", p.batch_max},
                               {"batch_mean", p.batch_mean},
                               {"silence_max_us", us(p.silence_max_ns)},
                               {"consumer_cpu_share", p.consumer_cpu_share},
                               {"consumer_preemptions", p.consumer_preemptions},
                               {"stolen_ms", p.stolen_ms ? nlohmann::ordered_json(*p.stolen_ms)
                                                         : nlohmann::ordered_json()}});
  }
  return j;
}

nlohmann::ordered_json outcome_json(const Outcome& o, double reader_nap_asked_us) {
  nlohmann::ordered_json j;
  j["id"] = o.profile.name;
  j["repetition"] = o.repetition;
  j["profile"] = o.profile.file;
  j["status"] = outcome_status(o);
  std::string message = o.harness_error;
  if (o.run) {
    for (const auto& f : o.run->failures) message += (message.empty() ? "" : " | ") + f;
  }
  j["message"] = message;
  j["duration"] = o.duration_s;
  j["parameters"] = o.profile.source;
  if (!o.run) return j;
  const RunResult& r = *o.run;
  j["writers"] = {{"processes", r.profile.processes},
                  {"threads_per_process", r.profile.threads},
                  {"attempts", r.attempts},
                  {"accepted", r.accepted},
                  {"refused_no_buffer", r.refused_no_buffer},
                  {"refused_too_large", r.refused_too_large},
                  {"refused_other", r.refused_other},
                  {"events_per_s", r.write_events_per_s},
                  {"peak_rss_kb", r.writer_peak_rss_kb},
                  {"cpu", cpu_json(r.writer_cpu, r.writer_cpu_ns_per_event)}};
  j["consumer"] = {{"delay_us", r.profile.consumer_delay_us},
                   {"peak_rss_kb", r.consumer_peak_rss_kb},
                   {"cpu", cpu_json(r.consumer_cpu, r.consumer_cpu_ns_per_event)}};
  j["broker"] = nullptr;  // no broker (real ETW), or it ended before it could be read
  if (r.broker_cpu) {
    j["broker"] = {{"pid", r.broker_pid},
                   {"peak_rss_kb", r.broker_peak_rss_kb},
                   {"cpu", cpu_json(*r.broker_cpu, r.broker_cpu_ns_per_event)}};
  }
  j["series_step_ms"] = r.series_ms;
  j["stolen_ms"] = nullptr;  // the kernel does not report steal time
  if (r.stolen_ms) j["stolen_ms"] = *r.stolen_ms;
  j["wake_floor_us"] = {{"same_cpu", floor_windows_json(o.floor_same_cpu)},
                        {"other_cpu", floor_windows_json(o.floor_other_cpu)}};
  j["reader_nap_us"] = {{"asked", reader_nap_asked_us},
                        {"slept", floor_windows_json(o.reader_nap)}};
  j["disk"] = nullptr;  // realtime sessions: no file, no disk rate
  if (r.profile.log_file) {
    j["disk"] = {{"mode", file_mode_name(r.profile.log_file->mode)},
                 {"max_mb", r.profile.log_file->max_mb},
                 {"write_mb_per_s", r.disk_mb_per_s ? nlohmann::ordered_json(*r.disk_mb_per_s)
                                                    : nlohmann::ordered_json()},
                 {"tool", r.disk_tool},
                 {"unavailable", r.disk_unavailable}};
  }
  j["sessions"] = nlohmann::ordered_json::array();
  for (const auto& s : r.sessions)
    j["sessions"].push_back(session_json(s, o, r.profile.latency_every));
  return j;
}

}  // namespace

nlohmann::ordered_json results_document(const StressRunInfo& info,
                                        const std::vector<Outcome>& outcomes) {
  nlohmann::ordered_json doc;
  doc["schema_version"] = 1;
  doc["run_info"] = {{"platform", info.platform},      {"etwh_version", info.version},
                     {"start_time", info.start_time},  {"host", info.host},
                     {"duration", info.duration_s},    {"command_line", info.command_line},
                     {"repetitions", info.repetitions}};
  nlohmann::ordered_json stale = nlohmann::ordered_json::array();
  for (const StaleSessionStop& s : info.stale_sessions) {
    stale.push_back({{"name", s.name}, {"pid", s.pid}, {"stop_status", s.stop_status}});
  }
  doc["run_info"]["stale_sessions"] = std::move(stale);
  doc["results"] = nlohmann::ordered_json::array();
  for (const auto& o : outcomes)
    doc["results"].push_back(outcome_json(o, info.reader_nap_asked_us));
  return doc;
}

std::string stress_json_text(const StressResults& r) { return r.doc.dump(2) + "\n"; }

}  // namespace etwh::stress
