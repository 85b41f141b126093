// A log-linear latency histogram (1/64 relative resolution, like HdrHistogram's idea): what the
// stress consumer records per delivery with no allocation, and what a stress report carries.
#pragma once

#include <array>
#include <cstddef>
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
  static std::uint64_t bucket_lower(std::size_t bucket);

  // The fixed bucket layout: bucket i holds [bucket_lower(i), bucket_upper(i)]. Reports keep
  // the non-empty buckets, so runs of any build can be merged and compared bucket by bucket.
  static constexpr std::size_t kSubBucketBits = 6;
  static constexpr std::size_t kBucketCount = (64 - kSubBucketBits + 1) << kSubBucketBits;
  struct Bucket {
    std::size_t index;
    std::uint64_t count;
  };
  std::vector<Bucket> nonempty_buckets() const;
  // Rebuilds a histogram from a report's buckets and max; false (and `out` untouched) when an
  // index is out of range or the max lies outside the last non-empty bucket.
  static bool from_buckets(const std::vector<Bucket>& buckets, std::uint64_t max,
                           LatencyHistogram& out);

 private:
  static constexpr std::size_t kSubBits = kSubBucketBits;
  static constexpr std::size_t kBuckets = kBucketCount;
  std::array<std::uint64_t, kBuckets> counts_{};
  std::uint64_t count_ = 0;
  std::uint64_t max_ = 0;
};

}  // namespace etwh::stress
