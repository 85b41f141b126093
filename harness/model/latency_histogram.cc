#include "harness/model/latency_histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace etwh::stress {

std::size_t LatencyHistogram::bucket_of(std::uint64_t v) {
  constexpr std::uint64_t kSub = 1u << kSubBits;
  if (v < 2 * kSub) return static_cast<std::size_t>(v);
  // v in [2^e, 2^(e+1)), e >= kSubBits + 1: keep the kSubBits bits below the leading one.
  const unsigned e = 63u - static_cast<unsigned>(std::countl_zero(v));
  const std::uint64_t sub = (v >> (e - kSubBits)) & (kSub - 1);
  return static_cast<std::size_t>((e - kSubBits + 1) * kSub + sub);
}

std::uint64_t LatencyHistogram::bucket_upper(std::size_t bucket) {
  constexpr std::uint64_t kSub = 1u << kSubBits;
  if (bucket < 2 * kSub) return bucket;
  const std::uint64_t e = bucket / kSub + kSubBits - 1;
  const std::uint64_t sub = bucket % kSub;
  const std::uint64_t low = (std::uint64_t{1} << e) + (sub << (e - kSubBits));
  return low + (std::uint64_t{1} << (e - kSubBits)) - 1;
}

std::uint64_t LatencyHistogram::bucket_lower(std::size_t bucket) {
  return bucket == 0 ? 0 : bucket_upper(bucket - 1) + 1;
}

std::vector<LatencyHistogram::Bucket> LatencyHistogram::nonempty_buckets() const {
  std::vector<Bucket> out;
  for (std::size_t i = 0; i < kBuckets; ++i) {
    if (counts_[i] != 0) out.push_back({i, counts_[i]});
  }
  return out;
}

bool LatencyHistogram::from_buckets(const std::vector<Bucket>& buckets, std::uint64_t max,
                                    LatencyHistogram& out) {
  LatencyHistogram h;
  std::size_t last = 0;
  for (const Bucket& b : buckets) {
    if (b.index >= kBuckets) return false;
    h.counts_[b.index] += b.count;
    h.count_ += b.count;
    if (b.count != 0) last = std::max(last, b.index);
  }
  if (h.count_ != 0 && bucket_of(max) != last) return false;
  h.max_ = h.count_ == 0 ? 0 : max;
  out = h;
  return true;
}

void LatencyHistogram::record(std::uint64_t v) {
  ++counts_[bucket_of(v)];
  ++count_;
  max_ = std::max(max_, v);
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  for (std::size_t i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  max_ = std::max(max_, other.max_);
}

std::uint64_t LatencyHistogram::percentile(double quantile) const {
  if (count_ == 0) return 0;
  const auto wanted = static_cast<std::uint64_t>(
      std::max(1.0, std::ceil(std::clamp(quantile, 0.0, 1.0) * static_cast<double>(count_))));
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= wanted) return std::min(bucket_upper(i), max_);
  }
  return max_;
}

}  // namespace etwh::stress
