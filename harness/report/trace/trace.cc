#include "harness/report/trace/trace.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <stdexcept>

namespace etwh::trace {

using nlohmann::json;

std::int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Trace::Trace() : origin_ns_(steady_now_ns()) {}

Trace::Trace(std::int64_t origin_ns) : origin_ns_(origin_ns) {}

double Trace::to_us(std::int64_t ns) const { return static_cast<double>(ns - origin_ns_) / 1000.0; }

void Trace::append(json event) {
  std::lock_guard lock(mutex_);
  events_.push_back(std::move(event));
}

void Trace::name_process(std::int64_t pid, const std::string& name) {
  append({{"ph", "M"},
          {"name", "process_name"},
          {"pid", pid},
          {"tid", 0},
          {"args", {{"name", name}}}});
}

void Trace::name_thread(Track track, const std::string& name) {
  append({{"ph", "M"},
          {"name", "thread_name"},
          {"pid", track.pid},
          {"tid", track.tid},
          {"args", {{"name", name}}}});
}

void Trace::complete(Track track, const std::string& name, const std::string& category,
                     std::int64_t begin_ns, std::int64_t end_ns, json args) {
  append({{"ph", "X"},
          {"name", name},
          {"cat", category},
          {"pid", track.pid},
          {"tid", track.tid},
          {"ts", to_us(begin_ns)},
          {"dur", static_cast<double>(std::max<std::int64_t>(end_ns - begin_ns, 0)) / 1000.0},
          {"args", std::move(args)}});
}

void Trace::counter(std::int64_t pid, const std::string& name, std::int64_t at_ns,
                    const json& values) {
  append({{"ph", "C"},
          {"name", name},
          {"pid", pid},
          {"tid", 0},
          {"ts", to_us(at_ns)},
          {"args", values}});
}

void Trace::instant(Track track, const std::string& name, const std::string& category,
                    std::int64_t at_ns, json args) {
  append({{"ph", "i"},
          {"s", "t"},
          {"name", name},
          {"cat", category},
          {"pid", track.pid},
          {"tid", track.tid},
          {"ts", to_us(at_ns)},
          {"args", std::move(args)}});
}

void Trace::set_metadata(const std::string& key, json value) {
  std::lock_guard lock(mutex_);
  metadata_[key] = std::move(value);
}

json Trace::document() const {
  std::vector<json> events;
  json metadata;
  {
    std::lock_guard lock(mutex_);
    events = events_;
    metadata = metadata_;
  }
  // Names first, then by time; of two slices that begin together the longer (the enclosing
  // one) first, so that every track reads in order.
  auto key = [](const json& e) {
    const double ts =
        e.contains("ts") ? e["ts"].get<double>() : -std::numeric_limits<double>::infinity();
    const double dur = e.contains("dur") ? e["dur"].get<double>() : 0.0;
    return std::pair(ts, -dur);
  };
  std::stable_sort(events.begin(), events.end(),
                   [&](const json& a, const json& b) { return key(a) < key(b); });
  return {{"traceEvents", std::move(events)},
          {"displayTimeUnit", "ns"},
          {"metadata", std::move(metadata)}};
}

std::string Trace::text() const { return document().dump() + '\n'; }

std::size_t Trace::size() const {
  std::lock_guard lock(mutex_);
  return events_.size();
}

Slice::Slice(Trace* trace, Track track, std::string name, std::string category, json args)
    : trace_(trace),
      track_(track),
      name_(std::move(name)),
      category_(std::move(category)),
      args_(std::move(args)),
      begin_ns_(trace != nullptr ? steady_now_ns() : 0) {}

void Slice::arg(const std::string& key, json value) {
  if (trace_ != nullptr) args_[key] = std::move(value);
}

void Slice::end() {
  Trace* trace = trace_;
  trace_ = nullptr;
  if (trace == nullptr) return;
  try {
    trace->complete(track_, name_, category_, begin_ns_, steady_now_ns(), std::move(args_));
  } catch (...) {
    // Out of memory while tracing: the slice is lost, the run goes on.
  }
}

}  // namespace etwh::trace
