// A timeline in the Trace Event Format (the JSON that Perfetto UI and chrome://tracing open):
// complete slices ("X"), counters ("C"), instants ("i") and the names of processes and threads
// ("M"), kept in memory and written once at the end as
// {"traceEvents": [...], "displayTimeUnit": "ns", "metadata": {...}}.
//
// Every time given to a Trace is steady_clock time in ns since its epoch. On Linux that is
// CLOCK_MONOTONIC, one clock for every process of the machine, so the agents' and writers'
// stamps land on the same axis as the driver's; on Windows steady_clock is the
// QueryPerformanceCounter, also machine-wide. The file's timestamps are microseconds since the
// Trace was made (fractional: ns resolution).
//
//   etwh::trace::Trace t;
//   const auto driver = t.track(process_id(), process_id());
//   t.name_process(driver.pid, "etwh run");
//   { etwh::trace::Slice s(&t, driver, "StartTrace", "controller"); ... }
//   etwh::OutputFile("run.trace.json").write(t.text());
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

namespace etwh::trace {

// Steady clock now, in ns since its epoch (the unit every Trace call takes).
std::int64_t steady_now_ns();

// Where an event goes: a process track and a thread track within it (real or synthetic ids,
// the same ones for the whole trace).
struct Track {
  std::int64_t pid = 0;
  std::int64_t tid = 0;
};

class Trace {
 public:
  // The origin of the file's timestamps: now.
  Trace();
  // A given origin (steady clock ns), for tests.
  explicit Trace(std::int64_t origin_ns);

  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;

  std::int64_t origin_ns() const { return origin_ns_; }

  // The metadata events that name a process and a thread track.
  void name_process(std::int64_t pid, const std::string& name);
  void name_thread(Track track, const std::string& name);

  // A slice from begin_ns to end_ns (an end before the begin is recorded as 0 long).
  void complete(Track track, const std::string& name, const std::string& category,
                std::int64_t begin_ns, std::int64_t end_ns,
                nlohmann::json args = nlohmann::json::object());
  // A counter track `name` of process `pid`: each series of `values` (numbers) at `at_ns`.
  void counter(std::int64_t pid, const std::string& name, std::int64_t at_ns,
               const nlohmann::json& values);
  // A moment on a thread track.
  void instant(Track track, const std::string& name, const std::string& category,
               std::int64_t at_ns, nlohmann::json args = nlohmann::json::object());
  // Free-form facts about the run, under "metadata" (the command line, the version, ...).
  void set_metadata(const std::string& key, nlohmann::json value);

  // The whole document; events ordered by time (a slice before the slices it contains), the
  // names first.
  nlohmann::json document() const;
  // The document as written to a file (etwh/output_file.h): one line of JSON.
  std::string text() const;

  std::size_t size() const;

 private:
  double to_us(std::int64_t ns) const;
  void append(nlohmann::json event);

  std::int64_t origin_ns_;
  mutable std::mutex mutex_;
  std::vector<nlohmann::json> events_;
  nlohmann::json metadata_ = nlohmann::json::object();
};

// A slice of `trace` from construction to destruction (or to end()). With a null trace it does
// nothing, so that the hooks in the driver cost nothing when no --trace was asked for.
class Slice {
 public:
  Slice(Trace* trace, Track track, std::string name, std::string category,
        nlohmann::json args = nlohmann::json::object());
  ~Slice() { end(); }
  Slice(const Slice&) = delete;
  Slice& operator=(const Slice&) = delete;

  // Adds an argument shown with the slice (a status, a count).
  void arg(const std::string& key, nlohmann::json value);
  // Ends the slice now; later calls do nothing.
  void end();

 private:
  Trace* trace_;
  Track track_;
  std::string name_, category_;
  nlohmann::json args_;
  std::int64_t begin_ns_ = 0;
};

}  // namespace etwh::trace
