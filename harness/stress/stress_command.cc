#include "harness/stress/stress_command.h"

#include "etwh/output_file.h"
#include "etwh/stop_signals.h"
#include "etwh/wake_floor.h"
#include "etwrt/reader_pacing.h"

#include "harness/compare/compare.h"
#include "harness/report/compare_report.h"
#include "harness/report/console_lines.h"
#include "harness/stress/engine.h"
#include "harness/stress/profile.h"
#include "harness/environment/stale_sessions.h"
#include "harness/stress/stress_console.h"
#include "harness/stress/file_session.h"
#include "harness/report/stress_formats.h"
#include "harness/stress/stress_trace.h"
#include "harness/report/trace/trace.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <optional>

namespace etwh::stress {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitBadInput = 2;

std::string repetition_text(const Outcome& o) {
  return o.repetitions > 1 ? fmt::format(" (repetition {}/{})", o.repetition, o.repetitions) : "";
}

// Wake-ups sampled for the floor in each placement, before a run and again after it, and
// their spacing (the child is asleep each time). Each placement apart: left to the scheduler,
// a wake-up lands on the waker's CPU (3-4 us here) or on another (16-40 us, through the host),
// in a share that changes from one window to the next, so an unpinned p99 lands on either
// (harness/stress/README.md, "The floors beside the latency").
constexpr std::size_t kFloorSamples = 1000;
constexpr std::chrono::microseconds kFloorGap{50};

// One window of the floor in `placement`, before the run or after it (`after`). A placement
// had before must be had after, and the other way round; a floor that cannot be measured
// otherwise is the harness's fault.
void measure_floor_window(FloorWindows& f, WakePlacement placement, bool after) {
  WakeSamples samples;
  try {
    samples = measure_futex_wake_floor(kFloorSamples, kFloorGap, placement);
  } catch (const std::runtime_error& e) {
    throw StressHarnessError(e.what());
  }
  if (!after && samples.ns.empty()) {
    f.unavailable = samples.unavailable;
    return;
  }
  if (after && f.measured() != !samples.ns.empty()) {
    throw StressHarnessError("wake floor: a placement could be had " +
                             std::string(f.measured()
                                             ? "before the run, not after: " + samples.unavailable
                                             : "after the run, not before"));
  }
  for (const std::uint64_t ns : samples.ns) (after ? f.after : f.before).record(ns);
}

// etwrt's reader naps between polls of a dense stream (etwrt/reader_pacing.h), so a record
// written during a nap waits for its end: the floor of a paced consumer's latency is the nap as
// slept here (timer slack and a halted CPU's wake-up on top of what is asked), measured on this
// thread, whose timer slack the consumer threads inherit. 500 naps of about 100 us per window.
constexpr std::size_t kNapSamples = 500;
constexpr std::chrono::nanoseconds kReaderNap{etwrt::dataplane::ReaderPacing::kNapNs};

void measure_nap_window(FloorWindows& f, bool after) {
  try {
    for (const std::uint64_t ns : measure_futex_nap(kNapSamples, kReaderNap))
      (after ? f.after : f.before).record(ns);
  } catch (const std::runtime_error& e) {
    throw StressHarnessError(e.what());
  }
}

void measure_floor_windows(Outcome& o, bool after) {
  measure_floor_window(o.floor_same_cpu, WakePlacement::kSameCpu, after);
  measure_floor_window(o.floor_other_cpu, WakePlacement::kOtherCpu, after);
  measure_nap_window(o.reader_nap, after);
}

void merge_floor_windows(FloorWindows& f) {
  f.both = f.before;
  f.both.merge(f.after);
}

// The run's table on the console (stress_console.h), or the harness error that ended it.
void print_console(const Outcome& o, std::size_t width, std::ostream& out) {
  if (!o.run) {
    out << fit(fmt::format("HARNESS_ERROR {}{}: {}", o.profile.name, repetition_text(o),
                           o.harness_error),
               width)
        << "\n";
    return;
  }
  const auto floor = [](const char* name, const FloorWindows& f) {
    return FloorRow{name, f.measured() ? &f.both : nullptr, f.unavailable};
  };
  const std::string nap = fmt::format("etwrt reader nap ({} us)", kReaderNap.count() / 1000);
  out << run_table(
      {outcome_status(o), o.profile.name + repetition_text(o), o.duration_s}, *o.run,
      {floor("wake-up, same CPU", o.floor_same_cpu), floor("wake-up, other CPU", o.floor_other_cpu),
       FloorRow{nap, &o.reader_nap.both, ""}},
      width);
}

// Loads every profile (with the sweep) before anything runs; prints the error and returns
// false on bad input.
bool load_profiles(const StressArgs& args, std::vector<Profile>& profiles) {
  try {
    std::optional<Sweep> sweep;
    if (!args.sweep.empty()) sweep = parse_sweep(args.sweep);
    for (const auto& file : args.profiles) {
      auto loaded = load_profile_file(file, sweep);
      profiles.insert(profiles.end(), loaded.begin(), loaded.end());
    }
  } catch (const InputError& e) {
    std::cerr << e.what() << "\n";
    return false;
  }
  return true;
}

// --trace: the etwh process's track, where each run is a slice.
trace::Track command_track() {
  const auto pid = static_cast<std::int64_t>(getpid());
  return {pid, pid};
}

// The formats' files (stress_formats()) and --trace, checked before anything runs
// (output_file.h), written after the runs.
struct Outputs {
  std::vector<std::optional<OutputFile>> formats;
  std::optional<OutputFile> trace;
};

// False: bad input, said on stderr.
bool check_outputs(const StressArgs& args, Outputs& out) {
  try {
    out.formats = output_files(args.format_files);
    out.trace = output_file(args.trace_file);
  } catch (const OutputRefused& e) {
    std::cerr << "etwh: " << e.what() << "\n";
    return false;
  }
  return true;
}

// The baseline is read before anything runs: a bad one is bad input, not a wasted run.
bool load_baseline(const StressArgs& args, std::optional<compare::Document>& baseline) {
  if (args.baseline.empty()) return true;
  try {
    baseline = compare::load_document(args.baseline);
  } catch (const compare::CompareInputError& e) {
    std::cerr << e.what() << "\n";
    return false;
  }
  return true;
}

// Runs profile `p` once (repetition `rep`); a harness fault lands in the outcome.
Outcome run_once(const Profile& p, unsigned rep, unsigned repetitions,
                 const EngineOptions& options) {
  Outcome o{p, std::nullopt, {}, {}, {}, "", 0, rep, repetitions};
  const auto t0 = std::chrono::steady_clock::now();
  try {
    measure_floor_windows(o, false);
    RunResult run = run_profile(p, options);
    // A run with no floor after it is not reported; a stopped run is not reported at all.
    if (!stop_requested()) measure_floor_windows(o, true);
    merge_floor_windows(o.floor_same_cpu);
    merge_floor_windows(o.floor_other_cpu);
    merge_floor_windows(o.reader_nap);
    o.run = std::move(run);
  } catch (const StressHarnessError& e) {
    o.harness_error = e.what();
  } catch (const std::exception& e) {
    o.harness_error = std::string("unexpected error: ") + e.what();
  }
  o.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return o;
}

// How wide the progress line may be: COLUMNS, else stderr's terminal (console_width reads
// stdout's, which may be a pipe while stderr is a terminal).
std::size_t stderr_width() {
  if (const std::size_t w = console_width(); w > 0) return w;
  winsize size{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 0;
}

// A signal stopped the run, which has undone what it started: nothing more to report.
int stopped_by_signal() {
  std::cerr << "etwh: stopped by signal " << stop_signal() << "\n";
  return stop_exit_code();
}

// After every run: the summary line, the JSON results, the trace and the comparison with the
// baseline; the command's exit code.
int finish(const StressArgs& args, const Outputs& out, const std::vector<Outcome>& outcomes,
           double duration, const trace::Trace& timeline,
           const std::optional<compare::Document>& baseline) {
  const auto failed = std::count_if(outcomes.begin(), outcomes.end(), [](const Outcome& o) {
    return o.run && !o.run->failures.empty();
  });
  const auto faults =
      std::count_if(outcomes.begin(), outcomes.end(), [](const Outcome& o) { return !o.run; });
  std::cout << fmt::format("{} runs, {} failed, {} harness errors, platform {}, {:.2f} s\n",
                           outcomes.size(), failed, faults, args.platform, duration);

  const StressRunInfo info{args.platform,      args.version,
                           args.command_line,  args.host,
                           args.start_time,    args.repetitions,
                           duration,           static_cast<double>(kReaderNap.count()) / 1000.0,
                           args.stale_sessions};
  const nlohmann::ordered_json doc = results_document(info, outcomes);
  if (!write_output(out.trace, timeline.text())) return kExitBadInput;
  std::optional<compare::Comparison> c;
  bool bad_baseline = false;
  try {
    if (baseline) {
      c = compare::compare_documents(
          *baseline, compare::read_document(nlohmann::json::parse(doc.dump()), "this run"),
          args.thresholds);
      compare::print_console(*c, std::cout);
    }
  } catch (const compare::CompareInputError& e) {  // a baseline of another kind: the runs stay
    std::cerr << e.what() << "\n";
    bad_baseline = true;
  }
  const StressResults results{doc, c ? &*c : nullptr};
  const std::span<const FileFormat<StressResults>> formats = stress_formats();
  for (std::size_t i = 0; i < out.formats.size() && i < formats.size(); ++i) {
    if (!write_output(out.formats[i], formats[i].text(results))) return kExitBadInput;
  }
  if (bad_baseline) return kExitBadInput;
  const bool regressed = c && c->regressions > 0;
  return faults > 0 ? kExitBadInput : failed > 0 || regressed ? kExitFailed : kExitOk;
}

}  // namespace

int run_stress_command(const StressArgs& args) {
  std::vector<Profile> profiles;
  Outputs out;
  if (!load_profiles(args, profiles) || !check_outputs(args, out)) return kExitBadInput;
  trace::Trace timeline;
  timeline.name_process(command_track().pid, "etwh stress");
  timeline.name_thread(command_track(), "driver");
  timeline.set_metadata("command_line", args.command_line);
  if (!std::filesystem::exists(args.writer)) {
    std::cerr << "etwh: " << args.writer.string()
              << ": stress writer executable not found (use --writer)\n";
    return kExitBadInput;
  }
  std::optional<compare::Document> baseline;
  if (!load_baseline(args, baseline)) return kExitBadInput;
  // As `etwh run` (stale_sessions.h): without the right to control sessions nothing can run
  // (said once, exit 2); the sessions of runs that crashed are stopped, and reported.
  const std::optional<std::vector<StaleSessionStop>> stale =
      prepare_sessions_for_run(fmt::format("etwh-{}-", getpid()), getpid(), std::cerr);
  if (!stale) return kExitBadInput;
  StressArgs run_args = args;
  run_args.stale_sessions = *stale;

  std::vector<double> durations_s;
  for (const Profile& p : profiles) {
    for (unsigned rep = 1; rep <= args.repetitions; ++rep)
      durations_s.push_back(static_cast<double>(p.duration_ms) / 1000.0);
  }
  // The progress line goes to a terminal only: never into a log or a pipe.
  StressProgress progress(std::cerr, isatty(STDERR_FILENO) == 1, durations_s, stderr_width());
  EngineOptions options{args.writer,
                        [&progress](double elapsed_s, const std::string& detail) {
                          progress.update(elapsed_s, detail);
                        },
                        args.series_ms};
  const std::size_t width = console_width();
  const auto start = std::chrono::steady_clock::now();
  std::vector<Outcome> outcomes;
  for (const Profile& p : profiles) {
    for (unsigned rep = 1; rep <= args.repetitions; ++rep) {
      const std::int64_t t0_ns = trace::steady_now_ns();
      const std::string label =
          p.name + (args.repetitions > 1 ? fmt::format(" (repetition {}/{})", rep, args.repetitions)
                                         : std::string());
      progress.start(outcomes.size(), label);
      Outcome o = run_once(p, rep, args.repetitions, options);
      progress.finish(o.duration_s);
      if (stop_requested()) return stopped_by_signal();
      timeline.complete(command_track(), "profile " + label, "run", t0_ns, trace::steady_now_ns(),
                        {{"status", outcome_status(o)}});
      if (o.run) trace_run(timeline, *o.run, static_cast<unsigned>(outcomes.size()), label);
      print_console(o, width, std::cout);
      std::cout.flush();
      outcomes.push_back(std::move(o));
    }
  }
  const double duration =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return finish(run_args, out, outcomes, duration, timeline, baseline);
}

}  // namespace etwh::stress
