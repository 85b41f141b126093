// Reading the three kinds of result files into figures (values per repetition) or statuses.
#include "harness/compare/compare.h"

#include "harness/model/json_text.h"
#include "harness/compare/nonfinite.h"
#include "harness/model/result.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <set>
#include <unordered_map>

namespace etwh::compare {
namespace {

using nlohmann::json;

class Reader {
 public:
  Reader(std::string source, bool markers) : source_(std::move(source)), markers_(markers) {}
  const std::string& source() const { return source_; }

  [[noreturn]] void fail(const std::string& pointer, const std::string& reason) const {
    throw CompareInputError(source_, pointer.empty() ? "/" : pointer, reason);
  }
  const json& field(const json& obj, const std::string& pointer, const char* key) const {
    if (!obj.is_object()) fail(pointer, "expected an object, got " + json_type_name(obj));
    auto it = obj.find(key);
    if (it == obj.end()) fail(pointer, std::string("missing field \"") + key + "\"");
    return *it;
  }
  const json& array(const json& obj, const std::string& pointer, const char* key) const {
    const json& v = field(obj, pointer, key);
    if (!v.is_array()) fail(pointer + "/" + key, "expected an array, got " + json_type_name(v));
    return v;
  }
  // A result status (result.h): anything else would pass as "not failing" unseen.
  std::string status(const json& obj, const std::string& pointer) const {
    std::string s = string(obj, pointer, "status");
    if (!parse_status(s)) {
      fail(pointer + "/status", "unknown status \"" + s +
                                    "\" (PASS, FAIL, XFAIL, XPASS, "
                                    "UNSUPPORTED, TIMEOUT, CRASH or HARNESS_ERROR)");
    }
    return s;
  }
  std::string string(const json& obj, const std::string& pointer, const char* key) const {
    const json& v = field(obj, pointer, key);
    if (!v.is_string()) fail(pointer + "/" + key, "expected a string, got " + json_type_name(v));
    return v.get<std::string>();
  }
  double number(const json& obj, const std::string& pointer, const char* key) const {
    const json& v = field(obj, pointer, key);
    if (markers_) {
      if (std::optional<double> marked = marker_value(v)) return *marked;
    }
    if (!v.is_number()) fail(pointer + "/" + key, "expected a number, got " + json_type_name(v));
    return v.get<double>();
  }

 private:
  std::string source_;
  bool markers_ = false;
};

// Figures in the order first seen; each repetition appends to its figure's values. A figure
// with a value that is not finite cannot be ranked nor averaged: it is set apart, named.
class FigureSet {
 public:
  void add(const std::string& name, const char* unit, Better better, double value) {
    Figure& f = at(name, unit, better);
    if (!std::isfinite(value)) nonfinite_[name] = value;
    f.values.push_back(value);
  }
  void add_summary(const std::string& name, const char* unit, Better better, const Summary& s) {
    Figure& f = at(name, unit, better);
    for (double v : {s.mean, s.median, s.stddev}) {
      if (!std::isfinite(v)) nonfinite_[name] = v;
    }
    f.summary = s;
  }
  bool empty() const { return figures_.empty(); }
  // The figures with finite values; the others, named, into `not_comparable`.
  std::vector<Figure> take(const std::string& source,
                           std::map<std::string, std::string>& not_comparable) {
    std::vector<Figure> out;
    for (Figure& f : figures_) {
      auto bad = nonfinite_.find(f.name);
      if (bad == nonfinite_.end()) {
        out.push_back(std::move(f));
      } else {
        not_comparable[f.name] =
            fmt::format("{} in {}", std::isnan(bad->second) ? "NaN" : "infinity", source);
      }
    }
    return out;
  }

 private:
  Figure& at(const std::string& name, const char* unit, Better better) {
    auto [it, fresh] = index_.try_emplace(name, figures_.size());
    if (fresh) figures_.push_back({name, unit, better, {}, {}});
    return figures_[it->second];
  }
  std::vector<Figure> figures_;
  std::unordered_map<std::string, std::size_t> index_;
  std::map<std::string, double> nonfinite_;
};

void check_version(const Reader& r, const json& doc, std::initializer_list<int> accepted) {
  const json& v = r.field(doc, "", "schema_version");
  for (int a : accepted) {
    if (v.is_number_integer() && v.get<int>() == a) return;
  }
  r.fail("/schema_version", "unsupported schema_version " + v.dump());
}

// `etwh stress` JSON: per profile run (one result per repetition), the figures a change to the
// event path moves: write rate, CPU per event, delivery rate and latency per session.
std::vector<Figure> stress_figures(const Reader& r, const json& doc, Document& out) {
  check_version(r, doc, {1});
  FigureSet set;
  const json& results = r.array(doc, "", "results");
  for (std::size_t i = 0; i < results.size(); ++i) {
    const std::string at = fmt::format("/results/{}", i);
    const json& result = results[i];
    const std::string id = r.string(result, at, "id");
    if (r.string(result, at, "status") == "HARNESS_ERROR") continue;  // no figures
    const json& writers = r.field(result, at, "writers");
    set.add(id + " write rate", "events/s", Better::kHigher,
            r.number(writers, at + "/writers", "events_per_s"));
    // Older files have no CPU times.
    if (writers.contains("cpu")) {
      set.add(
          id + " writer CPU/event", "ns", Better::kLower,
          r.number(r.field(writers, at + "/writers", "cpu"), at + "/writers/cpu", "ns_per_event"));
    }
    const json& consumer = r.field(result, at, "consumer");
    if (consumer.contains("cpu")) {
      set.add(id + " consumer CPU/event", "ns", Better::kLower,
              r.number(r.field(consumer, at + "/consumer", "cpu"), at + "/consumer/cpu",
                       "ns_per_event"));
    }
    const json& sessions = r.array(result, at, "sessions");
    for (std::size_t k = 0; k < sessions.size(); ++k) {
      const std::string sat = fmt::format("{}/sessions/{}", at, k);
      const std::string who = fmt::format("{} s{}", id, k);
      set.add(
          who + " delivered/s", "events/s", Better::kHigher,
          r.number(r.field(sessions[k], sat, "throughput"), sat + "/throughput", "events_per_s"));
      const json& latency = r.field(sessions[k], sat, "latency_us");
      set.add(who + " latency p50", "us", Better::kLower,
              r.number(latency, sat + "/latency_us", "p50"));
      set.add(who + " latency p99", "us", Better::kLower,
              r.number(latency, sat + "/latency_us", "p99"));
    }
  }
  return set.take(r.source(), out.not_comparable);
}

// Google Benchmark's time units, in ns.
double ns_per(const Reader& r, const json& b, const std::string& at) {
  const std::string unit = b.contains("time_unit") ? r.string(b, at, "time_unit") : "ns";
  static const std::map<std::string, double> kToNs = {
      {"ns", 1.0}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
  auto scale = kToNs.find(unit);
  if (scale == kToNs.end()) r.fail(at + "/time_unit", "unknown time unit \"" + unit + "\"");
  return scale->second;
}

// The aggregate rows of one benchmark (--benchmark_report_aggregates_only): per time, its mean,
// median and standard deviation over `repetitions`.
struct Aggregates {
  std::size_t repetitions = 0;
  std::map<std::string, Summary> of_time;  // "real_time", "cpu_time"
  std::set<std::string> seen;              // "real_time mean", ...
};

// mean, median and stddev rows are in the time unit; cv (1.6+, aggregate_unit "percentage"),
// BigO and RMS (complexity) and user-defined statistics are not read.
void add_aggregate(const Reader& r, const json& b, const std::string& at,
                   std::map<std::string, Aggregates>& by_name, std::vector<std::string>& order) {
  const std::string stat = b.contains("aggregate_name") ? r.string(b, at, "aggregate_name") : "";
  if (stat != "mean" && stat != "median" && stat != "stddev") return;
  if (b.value("aggregate_unit", "time") != "time" || b.value("error_occurred", false)) return;
  const std::string name = r.string(b, at, "run_name");
  auto [it, fresh] = by_name.try_emplace(name);
  if (fresh) order.push_back(name);
  Aggregates& a = it->second;
  a.repetitions = static_cast<std::size_t>(r.number(b, at, "repetitions"));
  const double scale = ns_per(r, b, at);
  for (const char* time : {"real_time", "cpu_time"}) {
    Summary& s = a.of_time[time];
    s.n = a.repetitions;
    const double v = r.number(b, at, time) * scale;
    (stat == "mean" ? s.mean : stat == "median" ? s.median : s.stddev) = v;
    a.seen.insert(std::string(time) + " " + stat);
  }
}

// Google Benchmark JSON (--benchmark_out, 1.5 to 1.9): every iteration run (one per
// repetition), times in ns; a benchmark with aggregate rows only (written with
// --benchmark_report_aggregates_only) by the summary of its repetitions. Rows of errors and
// skipped runs (`error_occurred`, `skipped` in 1.8+) carry no time.
std::vector<Figure> benchmark_figures(const Reader& r, const json& doc, Document& out) {
  FigureSet set;
  std::map<std::string, Aggregates> aggregates;
  std::vector<std::string> aggregate_order;
  std::set<std::string> iterated;
  bool aggregate_rows = false;
  const json& benchmarks = r.array(doc, "", "benchmarks");
  for (std::size_t i = 0; i < benchmarks.size(); ++i) {
    const std::string at = fmt::format("/benchmarks/{}", i);
    const json& b = benchmarks[i];
    if (!b.is_object()) r.fail(at, "expected an object, got " + json_type_name(b));
    if (b.value("run_type", "iteration") == "aggregate") {
      add_aggregate(r, b, at, aggregates, aggregate_order);
      aggregate_rows = true;
      continue;
    }
    if (b.value("error_occurred", false) || b.value("skipped", false)) continue;
    const std::string name =
        b.contains("run_name") ? r.string(b, at, "run_name") : r.string(b, at, "name");
    const double scale = ns_per(r, b, at);
    iterated.insert(name);
    set.add(name + " real_time", "ns", Better::kLower, r.number(b, at, "real_time") * scale);
    set.add(name + " cpu_time", "ns", Better::kLower, r.number(b, at, "cpu_time") * scale);
  }
  for (const std::string& name : aggregate_order) {
    const Aggregates& a = aggregates[name];
    if (iterated.count(name)) continue;  // the repetitions themselves are better
    for (const char* time : {"real_time", "cpu_time"}) {
      const std::string t = time;
      if (!a.seen.count(t + " mean") || !a.seen.count(t + " stddev")) {
        r.fail("/benchmarks", "\"" + name + "\": aggregate rows without mean and stddev: " +
                                  "nothing to compare (run with --benchmark_repetitions)");
      }
      Summary s = a.of_time.at(t);
      if (!a.seen.count(t + " median")) s.median = s.mean;
      set.add_summary(name + " " + t, "ns", Better::kLower, s);
    }
  }
  if (set.empty() && aggregate_rows) {
    r.fail("/benchmarks",
           "aggregate rows without a mean and a stddev: nothing to compare (run with "
           "--benchmark_repetitions=N)");
  }
  return set.take(r.source(), out.not_comparable);
}

// `etwh run` JSON, schema_version 1, 2 or 3: only the fields every version keeps (a rule's status
// in version 3 is the one judged by its own checks).
void run_statuses(const Reader& r, const json& doc, Document& out) {
  check_version(r, doc, {1, 2, 3});
  const json& results = r.array(doc, "", "results");
  for (std::size_t i = 0; i < results.size(); ++i) {
    const std::string at = fmt::format("/results/{}", i);
    out.cases[r.string(results[i], at, "id")] = r.status(results[i], at);
  }
  const json& rules = r.array(doc, "", "rules");
  for (std::size_t i = 0; i < rules.size(); ++i) {
    const std::string at = fmt::format("/rules/{}", i);
    out.rules[r.string(rules[i], at, "id")] = r.status(rules[i], at);
  }
}

}  // namespace

Document read_document(const json& doc, const std::string& source, bool nonfinite_markers) {
  const Reader r(source, nonfinite_markers);
  if (!doc.is_object()) r.fail("", "expected an object, got " + json_type_name(doc));
  Document out;
  out.source = source;
  if (doc.contains("benchmarks")) {
    out.kind = Kind::kBenchmark;
    out.figures = benchmark_figures(r, doc, out);
  } else if (doc.contains("rules")) {  // `etwh run` lists every rule; `etwh stress` has none
    out.kind = Kind::kRun;
    run_statuses(r, doc, out);
  } else if (doc.contains("results")) {
    out.kind = Kind::kStress;
    out.figures = stress_figures(r, doc, out);
  } else {
    r.fail("",
           "neither an etwh run or stress report nor Google Benchmark JSON (no \"results\" "
           "or \"benchmarks\")");
  }
  return out;
}

CompareInputError::CompareInputError(std::string file, std::string pointer, std::string reason)
    : std::runtime_error(format_input_error(file, pointer, reason, 0, 0)),
      file_(std::move(file)),
      pointer_(std::move(pointer)),
      reason_(std::move(reason)) {}

// Read as every input file is (json_text.h): a regular file only, at most kMaxInputFileBytes,
// no duplicate key; an error at a value gets its line:col.
Document load_document(const std::filesystem::path& file) {
  std::string text;
  json doc;
  int nonfinite = 0;
  try {
    // Google Benchmark writes bare NaN and Infinity: markers of the same length stand in for
    // them (nonfinite.h), so every position below is the file's own.
    text = nonfinite_as_markers(read_input_file(file), nonfinite);
    doc = parse_input_json(text, file.string());
  } catch (const InputError& e) {
    throw CompareInputError(e.what());
  }
  try {
    return read_document(doc, file.string(), nonfinite > 0);
  } catch (const CompareInputError& e) {
    if (e.pointer().empty()) throw;
    const std::string pointer = e.pointer() == "/" ? "" : e.pointer();
    const TextPosition at = position_of(text, locate_pointer(text, pointer));
    throw CompareInputError(format_input_error(e.file(), e.pointer(), e.reason(), at.line, at.col));
  }
}

}  // namespace etwh::compare
