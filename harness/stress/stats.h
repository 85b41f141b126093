// What the stress consumer keeps per session while events stream in, with no allocation per
// event: a log-linear latency histogram (1/64 relative resolution, like HdrHistogram's idea)
// and per-writer sequence tracking that tells duplicates and gaps apart.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace etwh::stress {

// Nanosecond values from 0 to 2^63; each recorded value lands in a bucket whose width is at
// most 1/64 of its lower bound, so percentiles are within 1.6 % (exact below 128 ns).
class LatencyHistogram {
 public:
  void record(std::uint64_t value_ns);
  void merge(const LatencyHistogram& other);
  std::uint64_t count() const { return count_; }
  std::uint64_t max() const { return max_; }
  // The smallest bucket upper bound with at least `quantile` of the values at or below it
  // (0 when empty). quantile in [0, 1].
  std::uint64_t percentile(double quantile) const;

  static std::size_t bucket_of(std::uint64_t value_ns);
  static std::uint64_t bucket_upper(std::size_t bucket);

 private:
  static constexpr std::size_t kSubBits = 6;
  static constexpr std::size_t kBuckets = (64 - kSubBits + 1) << kSubBits;
  std::array<std::uint64_t, kBuckets> counts_{};
  std::uint64_t count_ = 0;
  std::uint64_t max_ = 0;
};

// One writer's sequence numbers as they arrive at one session. Per writer, etwrt delivers in
// write order, so a number below the next expected one is a duplicate (or a reordering, which
// would be a defect too); a number above it opens a gap.
class SequenceTracker {
 public:
  void observe(std::uint64_t sequence);
  // Closes the stream: `written` events were written by this writer. Numbers never seen at the
  // end form a final gap.
  void finish(std::uint64_t written);

  std::uint64_t distinct() const { return distinct_; }
  std::uint64_t duplicates() const { return duplicates_; }
  std::uint64_t gaps() const { return gaps_; }              // runs of missing numbers
  std::uint64_t missing() const { return missing_; }        // numbers in those runs
  std::uint64_t beyond_written() const { return beyond_; }  // numbers >= written (a defect)

 private:
  std::uint64_t next_ = 0;
  std::uint64_t distinct_ = 0, duplicates_ = 0, gaps_ = 0, missing_ = 0, beyond_ = 0;
  std::uint64_t max_seen_plus_one_ = 0;
};

}  // namespace etwh::stress
