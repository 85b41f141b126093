#include "stress_command.h"

#include "etwh/stop_signals.h"

#include "engine.h"
#include "profile.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <optional>

namespace etwh::stress {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitBadInput = 2;

struct Outcome {
  Profile profile;
  std::optional<RunResult> run;
  std::string harness_error;  // set when the run could not be carried out
  double duration_s = 0;
};

const char* status_of(const Outcome& o) {
  if (!o.run) return "HARNESS_ERROR";
  return o.run->failures.empty() ? "PASS" : "FAIL";
}

double us(std::uint64_t ns) { return static_cast<double>(ns) / 1000.0; }

void print_console(const Outcome& o, std::ostream& out) {
  if (!o.run) {
    out << fmt::format("HARNESS_ERROR {}: {}\n", o.profile.name, o.harness_error);
    return;
  }
  const RunResult& r = *o.run;
  for (const SessionResult& s : r.sessions) {
    out << fmt::format(
        "{} {} session {}: written {} {} delivered {} + lost {} (EventsLost {}, "
        "RealTimeBuffersLost {} holding {} events); {:.3g} M events/s, {:.3g} MB/s; latency "
        "p50 {:.1f} us, p99 {:.1f} us, p99.9 {:.1f} us; lag {:.1f} ms; gaps {}, duplicates {}\n",
        s.balanced ? "OK  " : "FAIL", r.profile.name, s.name, s.written, s.balanced ? "=" : "!=",
        s.delivered, s.reported_lost, s.events_lost, s.realtime_buffers_lost,
        s.lost_buffer_events_announced, s.events_per_s / 1e6, s.mb_per_s,
        us(s.latency.percentile(0.5)), us(s.latency.percentile(0.99)),
        us(s.latency.percentile(0.999)), s.lag_ms, s.gaps, s.duplicates);
  }
  out << fmt::format(
      "{} {}: {} writes ({:.3g} M/s), refused {}; peak RSS writer {} KB, consumer {} KB; {:.2f} s\n",
      status_of(o), r.profile.name, r.attempts, r.write_events_per_s / 1e6,
      r.refused_no_buffer + r.refused_too_large + r.refused_other, r.writer_peak_rss_kb,
      r.consumer_peak_rss_kb, r.duration_s);
  for (const auto& f : r.failures) out << "FAIL " << f << "\n";
}

nlohmann::ordered_json session_json(const SessionResult& s) {
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
  j["latency_us"] = {{"p50", us(s.latency.percentile(0.5))},
                     {"p99", us(s.latency.percentile(0.99))},
                     {"p999", us(s.latency.percentile(0.999))},
                     {"max", us(s.latency.max())},
                     {"clock_inversions", s.clock_inversions}};
  j["consumer_lag_ms"] = s.lag_ms;
  j["buffers"] = {{"written", s.buffers_written},
                  {"number", s.number_of_buffers},
                  {"free_at_stop", s.free_buffers}};
  return j;
}

nlohmann::ordered_json outcome_json(const Outcome& o) {
  nlohmann::ordered_json j;
  j["id"] = o.profile.name;
  j["profile"] = o.profile.file;
  j["status"] = status_of(o);
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
                  {"peak_rss_kb", r.writer_peak_rss_kb}};
  j["consumer"] = {{"delay_us", r.profile.consumer_delay_us},
                   {"peak_rss_kb", r.consumer_peak_rss_kb}};
  j["sessions"] = nlohmann::ordered_json::array();
  for (const auto& s : r.sessions) j["sessions"].push_back(session_json(s));
  return j;
}

}  // namespace

int run_stress_command(const StressArgs& args) {
  std::vector<Profile> profiles;
  try {
    std::optional<Sweep> sweep;
    if (!args.sweep.empty()) sweep = parse_sweep(args.sweep);
    for (const auto& file : args.profiles) {
      auto loaded = load_profile_file(file, sweep);
      profiles.insert(profiles.end(), loaded.begin(), loaded.end());
    }
  } catch (const InputError& e) {
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  }
  if (!std::filesystem::exists(args.writer)) {
    std::cerr << "etwh: " << args.writer.string()
              << ": stress writer executable not found (use --writer)\n";
    return kExitBadInput;
  }

  EngineOptions options{args.writer, isatty(STDERR_FILENO) == 1};
  const auto start = std::chrono::steady_clock::now();
  std::vector<Outcome> outcomes;
  for (const Profile& p : profiles) {
    Outcome o{p, std::nullopt, "", 0};
    const auto t0 = std::chrono::steady_clock::now();
    try {
      o.run = run_profile(p, options);
    } catch (const StressHarnessError& e) {
      o.harness_error = e.what();
    } catch (const std::exception& e) {
      o.harness_error = std::string("unexpected error: ") + e.what();
    }
    if (stop_requested()) {  // the run has undone what it started; nothing more to report
      std::cerr << "etwh: stopped by signal " << stop_signal() << "\n";
      return stop_exit_code();
    }
    o.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    print_console(o, std::cout);
    std::cout.flush();
    outcomes.push_back(std::move(o));
  }
  const double duration = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  bool failed = false, fault = false;
  for (const auto& o : outcomes) {
    if (!o.run) fault = true;
    else if (!o.run->failures.empty()) failed = true;
  }
  std::cout << fmt::format("{} runs, {} failed, {} harness errors, platform {}, {:.2f} s\n",
                           outcomes.size(),
                           std::count_if(outcomes.begin(), outcomes.end(),
                                         [](const Outcome& o) { return o.run && !o.run->failures.empty(); }),
                           std::count_if(outcomes.begin(), outcomes.end(),
                                         [](const Outcome& o) { return !o.run; }),
                           args.platform, duration);

  if (!args.json_file.empty()) {
    nlohmann::ordered_json doc;
    doc["schema_version"] = 1;
    doc["run_info"] = {{"platform", args.platform}, {"etwh_version", args.version},
                       {"start_time", args.start_time}, {"host", args.host},
                       {"duration", duration}, {"command_line", args.command_line}};
    doc["results"] = nlohmann::ordered_json::array();
    for (const auto& o : outcomes) doc["results"].push_back(outcome_json(o));
    std::ofstream out(args.json_file);
    out << doc.dump(2) << "\n";
    if (!out) {
      std::cerr << "etwh: " << args.json_file << ": cannot write the results\n";
      return kExitBadInput;
    }
  }
  return fault ? kExitBadInput : failed ? kExitFailed : kExitOk;
}

}  // namespace etwh::stress
