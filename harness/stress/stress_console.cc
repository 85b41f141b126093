#include "harness/stress/stress_console.h"

#include "harness/report/console_lines.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

namespace etwh::stress {
namespace {

// "1,234,567": counts read at a glance.
std::string grouped(std::uint64_t v) {
  std::string digits = std::to_string(v), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// A duration in ns with the unit that keeps three significant digits: "850 ns", "12.3 us",
// "4.56 ms", "1.20 s".
std::string duration(double ns) {
  const std::pair<double, const char*> units[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "us"}};
  for (const auto& [scale, unit] : units) {
    if (ns >= scale) {
      const double v = ns / scale;
      return fmt::format("{:.{}f} {}", v, v >= 100 ? 0 : v >= 10 ? 1 : 2, unit);
    }
  }
  return fmt::format("{:.0f} ns", ns);
}

// Events per second with a prefix: "812 k/s", "1.25 M/s".
std::string rate(double per_s) {
  if (per_s >= 1e6) return fmt::format("{:.3g} M/s", per_s / 1e6);
  if (per_s >= 1e3) return fmt::format("{:.3g} k/s", per_s / 1e3);
  return fmt::format("{:.3g} /s", per_s);
}

// Column widths: session name, then the right-aligned figures.
constexpr int kName = 14, kCount = 11, kRate = 10, kLatency = 9, kLag = 9;

// Where the latency columns start: a floor's name may use the width of the columns before.
constexpr int kBeforeLatency = kName + kCount + (kCount + 1) + (kCount - 1) + (kRate + 1);

std::string latency_part(const std::string& p50, const std::string& p99, const std::string& p999,
                         const std::string& lag) {
  std::string text = fmt::format("{:>{}}{:>{}}{:>{}}{:>{}}", p50, kLatency, p99, kLatency, p999,
                                 kLatency, lag, kLag);
  return text.erase(text.find_last_not_of(' ') + 1);
}

// A right-aligned figure in `width` columns, with at least one space before it: a count wider
// than its column (ten digits and more) shifts the row rather than running into its neighbour.
std::string cell(const std::string& text, int width) {
  if (static_cast<int>(text.size()) >= width) return " " + text;
  return fmt::format("{:>{}}", text, width);
}

std::string row(const std::string& name, const std::string& written, const std::string& delivered,
                const std::string& lost, const std::string& per_s, const std::string& p50,
                const std::string& p99, const std::string& p999, const std::string& lag) {
  return fmt::format("  {:<{}}", name, kName) + cell(written, kCount) +
         cell(delivered, kCount + 1) + cell(lost, kCount - 1) + cell(per_s, kRate + 1) +
         latency_part(p50, p99, p999, lag);
}

void latency_cells(const LatencyHistogram& h, std::string (&cells)[3]) {
  const double q[3] = {0.5, 0.99, 0.999};
  for (int i = 0; i < 3; ++i) cells[i] = duration(static_cast<double>(h.percentile(q[i])));
}

// A session as the table names it: "s0", "s1", ... (its full name is in the JSON).
std::string short_name(std::size_t index) { return "s" + std::to_string(index); }

std::string session_row(const SessionResult& s, std::size_t index) {
  std::string cells[3] = {"-", "-", "-"};
  if (s.latency.count() > 0) latency_cells(s.latency, cells);
  std::string name = short_name(index);
  if (!s.balanced) name = "!" + name;  // written != delivered + lost: a failure below says it
  return row(name, grouped(s.written), grouped(s.delivered), grouped(s.reported_lost),
             rate(s.events_per_s), cells[0], cells[1], cells[2], duration(s.lag_ms * 1e6));
}

std::string floor_row(const FloorRow& f) {
  if (f.histogram == nullptr)
    return fmt::format("  floor: {}: not measured, {}", f.name, f.unavailable);
  std::string cells[3];
  latency_cells(*f.histogram, cells);
  return fmt::format("  {:<{}}", "floor: " + f.name, kBeforeLatency) +
         latency_part(cells[0], cells[1], cells[2], "");
}

// Lines per session below the table: its consumer thread; where and how it lost events.
std::vector<std::string> session_details(const SessionResult& s, std::size_t index) {
  const std::string name = short_name(index);
  std::string thread = fmt::format("  {}: consumer thread {:.0f}% CPU, preempted {} times", name,
                                   100 * s.consumer_cpu_share, s.consumer_preemptions);
  if (s.gaps > 0 || s.duplicates > 0)
    thread += fmt::format("; gaps {}, duplicates {}", grouped(s.gaps), grouped(s.duplicates));
  std::vector<std::string> lines{thread};
  if (s.reported_lost == 0) return lines;
  // Reported lost = EventsLost + the events the lost realtime buffers held.
  std::string lost = fmt::format("  {}: lost {}: EventsLost {}, RealTimeBuffersLost {}", name,
                                 grouped(s.reported_lost), grouped(s.events_lost),
                                 grouped(s.realtime_buffers_lost));
  if (!s.loss_steps.empty() && !s.file) {  // a file session has no consumer to be behind
    double least = s.loss_steps.front().behind_ms, most = least;
    for (const LossStep& step : s.loss_steps) {
      least = std::min(least, step.behind_ms);
      most = std::max(most, step.behind_ms);
    }
    lost += fmt::format("; in {} steps, {} to {} behind", s.loss_steps.size(),
                        duration(least * 1e6), duration(most * 1e6));
  }
  lines.push_back(lost);
  return lines;
}

// A file session's line: its file, its rate to disk and that rate over the disk's own.
std::string file_line(const RunResult& r, const SessionResult& s, std::size_t index) {
  const FileResult& f = *s.file;
  std::string line = fmt::format("  {}: file {} bytes, {}, {:.1f} MB/s", short_name(index),
                                 grouped(f.bytes), rate(f.events_per_s), f.mb_per_s);
  if (f.of_disk_rate && r.disk_mb_per_s) {
    line += fmt::format(" = {:.2f} of the disk's {:.1f} MB/s ({})", *f.of_disk_rate,
                        *r.disk_mb_per_s, r.disk_tool);
  } else {
    line += "; no disk rate: " + r.disk_unavailable;
  }
  // The rate is then what the run got to write before the file was full, not the logger's.
  if (f.at_maximum_size) line += "; the file reached its MaximumFileSize (the rest counted lost)";
  return line;
}

// The processes' figures, a line each: writes, CPU per event, memory.
std::vector<std::string> process_lines(const RunResult& r) {
  std::vector<std::string> lines;
  lines.push_back(fmt::format(
      "  writes     {} ({}), refused {}", grouped(r.attempts), rate(r.write_events_per_s),
      grouped(r.refused_no_buffer + r.refused_too_large + r.refused_other)));
  std::string cpu =
      fmt::format("  CPU/event  writer {}, consumer {}", duration(r.writer_cpu_ns_per_event),
                  duration(r.consumer_cpu_ns_per_event));
  if (r.broker_cpu) cpu += fmt::format(", broker {}", duration(r.broker_cpu_ns_per_event));
  if (r.stolen_ms && *r.stolen_ms > 0)
    cpu += fmt::format("; stolen by the host {}", duration(*r.stolen_ms * 1e6));
  lines.push_back(cpu);
  std::uint64_t shared_kb = 0;
  for (const SessionResult& s : r.sessions) shared_kb += s.number_of_buffers * s.buffer_size_kb;
  std::string memory = fmt::format("  peak RSS   writer {} KB, consumer {} KB",
                                   grouped(r.writer_peak_rss_kb), grouped(r.consumer_peak_rss_kb));
  if (r.broker_cpu) memory += fmt::format(", broker {} KB", grouped(r.broker_peak_rss_kb));
  lines.push_back(memory + fmt::format("; session buffers {} KB", grouped(shared_kb)));
  return lines;
}

// "about 1 min 5 s left", "about 9 s left".
std::string time_left(double s) {
  const long total = std::lround(std::max(0.0, s));
  if (total < 60) return fmt::format("about {} s left", total);
  return fmt::format("about {} min {} s left", total / 60, total % 60);
}

}  // namespace

std::string run_table(const RunHeading& heading, const RunResult& run,
                      const std::vector<FloorRow>& floors, std::size_t width) {
  std::vector<std::string> lines;
  const std::string timed =
      run.profile.latency_every > 1
          ? fmt::format("; latency of 1 record in {}", run.profile.latency_every)
          : "";
  lines.push_back(fmt::format("{:<5} {}  ({:.2f} s{})", heading.status, heading.label,
                              heading.duration_s, timed));
  lines.push_back(
      row("session", "written", "delivered", "lost", "events/s", "p50", "p99", "p99.9", "lag"));
  for (std::size_t i = 0; i < run.sessions.size(); ++i)
    lines.push_back(session_row(run.sessions[i], i));
  for (const FloorRow& f : floors) lines.push_back(floor_row(f));
  for (std::size_t i = 0; i < run.sessions.size(); ++i) {
    for (std::string& line : session_details(run.sessions[i], i)) lines.push_back(std::move(line));
    if (run.sessions[i].file) lines.push_back(file_line(run, run.sessions[i], i));
  }
  for (std::string& line : process_lines(run)) lines.push_back(std::move(line));
  for (std::string f : run.failures) {
    // The sessions as the table names them.
    for (std::size_t i = 0; i < run.sessions.size(); ++i) {
      const std::string& name = run.sessions[i].name;
      if (name.empty()) continue;
      for (std::size_t at = f.find(name); at != std::string::npos; at = f.find(name, at))
        f.replace(at, name.size(), short_name(i));
    }
    lines.push_back("  FAIL " + f);
  }
  std::string out;
  for (const std::string& line : lines) out += fit(line, width) + "\n";
  return out;
}

StressProgress::StressProgress(std::ostream& out, bool terminal, std::vector<double> durations_s,
                               std::size_t width)
    : out_(out), terminal_(terminal), durations_s_(std::move(durations_s)), width_(width) {}

StressProgress::~StressProgress() { erase(); }

void StressProgress::start(std::size_t index, const std::string& label) {
  index_ = index;
  label_ = label;
  update(0);
}

std::string StressProgress::text(double elapsed_s, const std::string& detail) const {
  const double run_s = index_ < durations_s_.size() ? durations_s_[index_] : 0;
  const double later = std::accumulate(
      durations_s_.begin() + static_cast<std::ptrdiff_t>(std::min(index_ + 1, durations_s_.size())),
      durations_s_.end(), 0.0);
  const double overhead = finished_ == 0 ? 0 : overhead_s_ / static_cast<double>(finished_);
  const double left =
      std::max(0.0, run_s - elapsed_s) + later +
      overhead * static_cast<double>(durations_s_.size() - std::min(index_, durations_s_.size()));
  std::string line = fmt::format("[{}/{}] {}: {:.1f} of {:.1f} s", index_ + 1, durations_s_.size(),
                                 label_, std::min(elapsed_s, run_s), run_s);
  if (!detail.empty()) line += ", " + detail;
  return line + ", " + time_left(left);
}

void StressProgress::update(double elapsed_s, const std::string& detail) {
  if (!terminal_) return;
  // Cut one short of the width: a line as wide as the terminal wraps before its "\r".
  out_ << "\r\x1b[K" << fit(text(elapsed_s, detail), width_ > 1 ? width_ - 1 : 0) << std::flush;
  drawn_ = true;
}

void StressProgress::finish(double took_s) {
  const double run_s = index_ < durations_s_.size() ? durations_s_[index_] : 0;
  overhead_s_ += std::max(0.0, took_s - run_s);
  ++finished_;
  erase();
}

void StressProgress::erase() {
  if (!drawn_) return;
  out_ << "\r\x1b[K" << std::flush;
  drawn_ = false;
}

}  // namespace etwh::stress
