#include "harness/stress/stats.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>

namespace etwh::stress {

double written_at(const WriterSamples& w, std::uint64_t t) {
  if (t <= w.start_ns) return 0;
  if (t >= w.end_ns) return static_cast<double>(w.total);
  // Known points: (start, 0), (start + (k + 1) * step, samples[k]) before end_ns, (end, total).
  std::uint64_t t0 = w.start_ns, t1 = w.end_ns;
  double v0 = 0, v1 = static_cast<double>(w.total);
  for (std::size_t k = 0; k < w.samples.size(); ++k) {
    const std::uint64_t at = w.start_ns + (k + 1) * w.step_ns;
    if (at >= w.end_ns) break;
    if (at <= t) {
      t0 = at;
      v0 = static_cast<double>(w.samples[k]);
    } else {
      t1 = at;
      v1 = static_cast<double>(w.samples[k]);
      break;
    }
  }
  if (t1 <= t0) return v1;
  return v0 + (v1 - v0) * static_cast<double>(t - t0) / static_cast<double>(t1 - t0);
}

LatencySplit split_latency(std::uint64_t now_ns, std::uint64_t prev_ns, std::uint64_t write_ns) {
  if (now_ns < write_ns) return {};
  // A previous callback after `now` cannot be (one thread, one clock): the whole wait is then
  // called behind rather than underflow.
  const std::uint64_t quiet_from = std::min(std::max(prev_ns, write_ns), now_ns);
  return {now_ns - quiet_from, quiet_from - write_ns};
}

void SequenceTracker::observe(std::uint64_t sequence) {
  if (sequence < next_) {
    ++duplicates_;
    return;
  }
  if (sequence > next_) {
    ++gaps_;
    missing_ += sequence - next_;
  }
  ++distinct_;
  next_ = sequence + 1;
  max_seen_plus_one_ = next_;
}

void SequenceTracker::finish(std::uint64_t written) {
  if (max_seen_plus_one_ > written) {
    beyond_ = max_seen_plus_one_ - written;
    return;
  }
  if (next_ < written) {
    ++gaps_;
    missing_ += written - next_;
    next_ = written;
  }
}

std::optional<std::uint64_t> proc_status_number(std::string_view status, std::string_view key) {
  for (std::size_t at = 0; at < status.size();) {
    const std::size_t end = std::min(status.find('\n', at), status.size());
    std::string_view line = status.substr(at, end - at);
    at = end + 1;
    if (line.size() <= key.size() || line.substr(0, key.size()) != key || line[key.size()] != ':')
      continue;
    line.remove_prefix(key.size() + 1);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    std::uint64_t value = 0;
    const auto [rest, error] = std::from_chars(line.data(), line.data() + line.size(), value);
    if (error != std::errc() || rest == line.data()) return std::nullopt;
    return value;
  }
  return std::nullopt;
}

std::optional<std::uint64_t> proc_stat_steal_ticks(std::string_view stat) {
  if (stat.substr(0, 4) != "cpu ") return std::nullopt;
  std::string_view line = stat.substr(
      4, stat.find('\n') == std::string_view::npos ? std::string_view::npos : stat.find('\n') - 4);
  std::uint64_t value = 0;
  for (int field = 1; field <= 8; ++field) {
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    const auto [rest, error] = std::from_chars(line.data(), line.data() + line.size(), value);
    if (error != std::errc() || rest == line.data()) return std::nullopt;
    line.remove_prefix(static_cast<std::size_t>(rest - line.data()));
  }
  return value;
}

}  // namespace etwh::stress
