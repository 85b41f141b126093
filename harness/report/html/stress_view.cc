// Stress runs from `etwh stress --json` files: per session the figures, the latency CDF and the
// time series; and the sweep points the runs make.
#include "harness/report/html/view.h"

#include <algorithm>

namespace etwh::report_html {
namespace {

using nlohmann::json;

std::string at_index(const std::string& base, std::size_t i) {
  return base + "/" + std::to_string(i);
}

// A histogram's non-empty buckets as (highest ns, count), in order.
std::vector<std::pair<double, double>> bucket_tops(const Fields& f, const json& histogram,
                                                   const std::string& at) {
  const json& buckets = f.array(histogram, at, "buckets");
  std::vector<std::pair<double, double>> tops;
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    const json& b = buckets[i];
    const std::string bp = at_index(at + "/buckets", i);
    if (!b.is_array() || b.size() != 4 ||
        !std::all_of(b.begin(), b.end(), [](const json& x) { return x.is_number(); })) {
      f.fail(bp, "expected [index, lowest ns, highest ns, count]");
    }
    tops.emplace_back(b[2].get<double>(), b[3].get<double>());
  }
  std::sort(tops.begin(), tops.end());
  return tops;
}

// The cumulative fraction of events at the top of each non-empty histogram bucket, in µs.
json latency_cdf(const Fields& f, const json& histogram, const std::string& at) {
  const std::vector<std::pair<double, double>> tops = bucket_tops(f, histogram, at);
  double total = 0;
  for (const auto& top : tops) total += top.second;
  json points = json::array();
  double seen = 0;
  for (const auto& [top_ns, count] : tops) {
    seen += count;
    points.push_back({top_ns / 1000, total > 0 ? seen / total : 0});
  }
  return points;
}

json series_of(const Fields& f, const json& session, const std::string& at) {
  static const char* const kFields[] = {"t_ms", "written",    "delivered",
                                        "lost", "lag_events", "buffers_in_use"};
  // Optional: older stress JSON has none of them (the split and batches came after the max,
  // the silence in the wait after them).
  static const char* const kOptional[] = {"latency_max_us",
                                          "latency_max_quiet_us",
                                          "latency_max_behind_us",
                                          "latency_max_silence_us",
                                          "batch_max",
                                          "batch_mean",
                                          "silence_max_us",
                                          "consumer_cpu_share",
                                          "consumer_preemptions"};
  const json& series = f.array(session, at, "series");
  json out = json::array();
  for (std::size_t i = 0; i < series.size(); ++i) {
    json point = json::object();
    const std::string point_at = at_index(at + "/series", i);
    for (const char* key : kFields) point[key] = f.number(series[i], point_at, key);
    for (const char* key : kOptional) {
      if (series[i].contains(key)) point[key] = f.number(series[i], point_at, key);
    }
    // Optional too: the silence above is a lower bound (the consumer's ring fell short).
    const char* const partial = "latency_max_silence_partial";
    if (series[i].contains(partial)) {
      const json& v = f.member(series[i], point_at, partial);
      if (!v.is_boolean()) f.fail(point_at + "/" + partial, "expected true or false");
      point[partial] = v;
    }
    out.push_back(std::move(point));
  }
  return out;
}

json session_entry(const Fields& f, const json& s, const std::string& at, std::size_t index) {
  const json& throughput = f.object(s, at, "throughput");
  const json& latency = f.object(s, at, "latency_us");
  json latency_out = json::object();
  for (const char* p : {"p50", "p99", "p999", "max"}) {
    latency_out[p] = f.number(latency, at + "/latency_us", p);
  }
  json entry = {
      {"name", f.string(s, at, "name")},
      {"label", "session " + std::to_string(index)},
      {"written", f.number(s, at, "written")},
      {"delivered", f.number(s, at, "delivered")},
      {"reported_lost", f.number(s, at, "reported_lost")},
      {"events_per_s", f.number(throughput, at + "/throughput", "events_per_s")},
      {"mb_per_s", f.number(throughput, at + "/throughput", "mb_per_s")},
      {"latency_us", latency_out},
      {"consumer_lag_ms", f.number(s, at, "consumer_lag_ms")},
      {"cdf", latency_cdf(f, f.object(s, at, "latency_histogram"), at + "/latency_histogram")},
      {"series", series_of(f, s, at)}};
  // Optional: older stress JSON has no shared_memory_kb, nor the buffers' span and the
  // consumer thread's figures (2026-11-27).
  if (s.contains("buffers") && f.object(s, at, "buffers").contains("shared_memory_kb")) {
    entry["shared_memory_kb"] = f.number(s["buffers"], at + "/buffers", "shared_memory_kb");
  }
  if (s.contains("buffers_span_ms")) {
    entry["buffers_span_ms"] =
        s["buffers_span_ms"].is_null() ? json() : json(f.number(s, at, "buffers_span_ms"));
  }
  if (s.contains("consumer_thread")) {
    const json& thread = f.object(s, at, "consumer_thread");
    entry["consumer_cpu_share"] = f.number(thread, at + "/consumer_thread", "cpu_share");
    entry["consumer_preemptions"] = f.number(thread, at + "/consumer_thread", "preemptions");
  }
  // Optional (absent from older stress JSON, null for a realtime session): a file session's rate
  // to disk, that over the disk's own, and whether the file filled up (since 2026-11-29).
  if (s.contains("file") && !s["file"].is_null()) {
    const json& file = f.object(s, at, "file");
    const std::string fat = at + "/file";
    const json& of_disk = f.member(file, fat, "of_disk_rate");
    entry["file"] = {
        {"bytes", f.number(file, fat, "bytes")},
        {"mb_per_s", f.number(file, fat, "mb_per_s")},
        {"of_disk_rate", of_disk.is_null() ? json() : json(f.number(file, fat, "of_disk_rate"))}};
    if (file.contains("at_maximum_size")) {
      const json& full = f.member(file, fat, "at_maximum_size");
      if (!full.is_boolean()) f.fail(fat + "/at_maximum_size", "not true or false");
      entry["file"]["at_maximum_size"] = full.get<bool>();
    }
  }
  // Optional: the events lost while the consumer was behind longer than the buffers last
  // (2026-11-27).
  if (s.contains("lost_behind_longer_than_buffers")) {
    entry["lost_behind_longer_than_buffers"] = f.number(s, at, "lost_behind_longer_than_buffers");
  }
  // Optional: p99 over each placement's floor (stress JSON since 2026-11-27; the one unpinned
  // floor of older files is left out, its value being either placement's).
  if (s.contains("latency_vs_floor") && f.object(s, at, "latency_vs_floor").contains("same_cpu")) {
    const json& v = s["latency_vs_floor"];
    const std::string vat = at + "/latency_vs_floor";
    json p99 = json::object();
    for (const char* key : {"same_cpu", "other_cpu", "reader_nap"}) {
      if (!v.contains(key)) continue;  // the nap: since 2026-11-27
      const json& one = f.member(v, vat, key);
      p99[key] =
          one.is_null() ? json() : json(f.number(f.object(v, vat, key), vat + "/" + key, "p99"));
    }
    entry["p99_vs_floor"] = std::move(p99);
  }
  return entry;
}

// A run's wake-up floors (stress JSON since 2026-11-27; none for older files), for the latency
// CDF: per placement its p99 and its buckets as [highest µs, count], which the page merges
// over the runs it draws together.
json floors_of(const Fields& f, const json& r, const std::string& at) {
  json out = json::array();
  // One floor (`one`, at JSON pointer `oat`): its p99 and its buckets.
  auto add = [&](const char* placement, const json& one, const std::string& oat) {
    json buckets = json::array();
    for (const auto& [top_ns, count] :
         bucket_tops(f, f.object(one, oat, "histogram"), oat + "/histogram")) {
      buckets.push_back({top_ns / 1000, count});
    }
    out.push_back({{"placement", placement},
                   {"p99", f.number(one, oat, "p99")},
                   {"buckets", std::move(buckets)}});
  };
  if (!r.contains("wake_floor_us")) return out;
  const json& floor = f.object(r, at, "wake_floor_us");
  const std::string fat = at + "/wake_floor_us";
  if (!floor.contains("same_cpu")) return out;
  for (const char* key : {"same_cpu", "other_cpu"}) {
    const json& one = f.object(floor, fat, key);
    if (one.contains("unavailable")) continue;  // the placement could not be had
    add(key, one, fat + "/" + key);
  }
  // etwrt's reader nap as slept, the floor of a paced consumer (since 2026-11-27).
  if (r.contains("reader_nap_us")) {
    const std::string nat = at + "/reader_nap_us";
    add("reader_nap", f.object(f.object(r, at, "reader_nap_us"), nat, "slept"), nat + "/slept");
  }
  return out;
}

// "buffers.maximum" = 256, ...: the scalars of a profile as run, nested objects flattened.
void flatten(const json& obj, const std::string& prefix, std::map<std::string, json>& out) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    const std::string name = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (it->is_object()) {
      flatten(*it, name, out);
    } else if (!it->is_array()) {
      out[name] = *it;
    }
  }
}

// What a sweep plots per run: the figures the stress README names, over all sessions.
SweepPoint sweep_point(const json& run) {
  SweepPoint p;
  p.group = run["profile"];
  flatten(run["parameters"], "", p.parameters);
  p.parameters.erase("description");
  double rate = 0, lost = 0, p50 = 0, p99 = 0, lag = 0, shared_kb = 0;
  bool has_shared = false;
  for (const json& s : run["sessions"]) {
    if (s.contains("shared_memory_kb")) {
      shared_kb += s["shared_memory_kb"].get<double>();
      has_shared = true;
    }
    rate += s["events_per_s"].get<double>();
    lost += s["reported_lost"].get<double>();
    p50 = std::max(p50, s["latency_us"]["p50"].get<double>());
    p99 = std::max(p99, s["latency_us"]["p99"].get<double>());
    lag = std::max(lag, s["consumer_lag_ms"].get<double>());
  }
  p.figures = {{"delivered events/s (all sessions)", rate},
               {"reported lost (all sessions)", lost},
               {"p50 latency µs (worst session)", p50},
               {"p99 latency µs (worst session)", p99},
               {"consumer lag ms (worst session)", lag}};
  if (run.contains("writer_ns_per_event")) {
    const double ns = run["writer_ns_per_event"].get<double>();
    p.figures["writer CPU ns/event"] = ns;
    // Per byte of payload: how the cost grows with the event's size.
    const auto payload = p.parameters.find("payload_bytes");
    if (payload != p.parameters.end() && payload->second.is_number() &&
        payload->second.get<double>() > 0) {
      p.figures["writer CPU ns/payload byte"] = ns / payload->second.get<double>();
    }
  }
  if (run.contains("consumer_ns_per_event")) {
    p.figures["consumer CPU ns/event"] = run["consumer_ns_per_event"].get<double>();
  }
  if (has_shared) p.figures["shared memory MB (all sessions)"] = shared_kb / 1024;
  return p;
}

json run_entry(const Fields& f, const Input& in, const json& r, const std::string& at) {
  json run = {{"file", in.file},
              {"id", f.string(r, at, "id")},
              {"profile", f.string(r, at, "profile")},
              {"repetition", f.number(r, at, "repetition")},
              {"status", f.string(r, at, "status")},
              {"message", f.string(r, at, "message")},
              {"duration", f.number(r, at, "duration")},
              {"parameters", f.object(r, at, "parameters")},
              {"sessions", json::array()}};
  if (!r.contains("writers")) return run;  // a harness error: nothing was measured
  const json& writers = f.object(r, at, "writers");
  run["writer_events_per_s"] = f.number(writers, at + "/writers", "events_per_s");
  run["writer_ns_per_event"] =
      f.number(f.object(writers, at + "/writers", "cpu"), at + "/writers/cpu", "ns_per_event");
  if (r.contains("consumer")) {  // optional: not in the first stress JSON
    const json& consumer = f.object(r, at, "consumer");
    run["consumer_ns_per_event"] =
        f.number(f.object(consumer, at + "/consumer", "cpu"), at + "/consumer/cpu", "ns_per_event");
  }
  run["floors"] = floors_of(f, r, at);
  const json& sessions = f.array(r, at, "sessions");
  for (std::size_t i = 0; i < sessions.size(); ++i) {
    run["sessions"].push_back(session_entry(f, sessions[i], at_index(at + "/sessions", i), i));
  }
  return run;
}

// A "sweep" array in the file itself: entries {parameters..., "figures": {name: number}}.
void file_sweep_points(const Fields& f, const Input& in, std::vector<SweepPoint>& points) {
  if (!in.doc.contains("sweep")) return;
  const json& sweep = f.array(in.doc, "", "sweep");
  for (std::size_t i = 0; i < sweep.size(); ++i) {
    const std::string at = at_index("/sweep", i);
    if (!sweep[i].is_object()) f.fail(at, "expected an object");
    SweepPoint p;
    p.group = in.file + " (sweep)";
    for (auto it = sweep[i].begin(); it != sweep[i].end(); ++it) {
      if (it.key() == "figures") continue;
      if (!it->is_object() && !it->is_array()) p.parameters[it.key()] = *it;
    }
    if (sweep[i].contains("figures")) {
      const json& figures = f.object(sweep[i], at, "figures");
      for (auto it = figures.begin(); it != figures.end(); ++it) {
        if (it->is_number()) p.figures[it.key()] = it->get<double>();
      }
    }
    points.push_back(std::move(p));
  }
}

}  // namespace

json stress_view(const std::vector<const Input*>& stress) {
  json runs = json::array();
  std::vector<SweepPoint> points;
  for (const Input* in : stress) {
    const Fields f(*in);
    const json& v = f.member(in->doc, "", "schema_version");
    if (v != 1)
      f.fail("/schema_version", "unsupported schema_version " + v.dump() + " (expected 1)");
    const json& results = f.array(in->doc, "", "results");
    for (std::size_t i = 0; i < results.size(); ++i) {
      json run = run_entry(f, *in, results[i], at_index("/results", i));
      if (!run["sessions"].empty()) points.push_back(sweep_point(run));
      runs.push_back(std::move(run));
    }
    file_sweep_points(f, *in, points);
  }
  json view = sweeps_of(points);
  view["runs"] = std::move(runs);
  return view;
}

}  // namespace etwh::report_html
