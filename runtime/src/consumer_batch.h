// etwrt: what a pool's hub hands to the ProcessTrace calls consuming its session (consumer.cc).
#pragma once

#include <etwrt/dataplane.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace etwrt {

// Records copied out of the pool (a view is valid only inside the reader's callback), in
// one arena per poll, shared read-only by every subscriber: no allocation per record. Each
// record is kept as the pool encodes it (one copy) and decoded again when delivered: copying
// the decoded view and its three spans cost the hub more than the copy of the record itself.
struct Batch {
  // A record's offset in `arena`, or kLoss | the index of a loss report in `losses`.
  static constexpr std::uint64_t kLoss = std::uint64_t{1} << 63;
  std::vector<std::uint64_t> entries;
  std::vector<std::byte> arena;
  std::vector<dataplane::LossReport> losses;
  std::size_t records = 0;

  void add(const dataplane::RecordView& v) {
    entries.push_back(arena.size());
    arena.insert(arena.end(), v.encoded.begin(), v.encoded.end());
    ++records;
  }
  void add(const dataplane::LossReport& loss) {
    entries.push_back(kLoss | losses.size());
    losses.push_back(loss);
  }
  static bool is_loss(std::uint64_t entry) { return (entry & kLoss) != 0; }
  const dataplane::LossReport& loss(std::uint64_t entry) const { return losses[entry & ~kLoss]; }
  // False only if the copy does not decode, which the reader checked in the pool already.
  bool view(std::uint64_t entry, dataplane::RecordView& v) const {
    std::size_t size = 0;
    return dataplane::decode_record(
        std::span<const std::byte>(arena.data() + entry, arena.size() - entry), v, size);
  }
};
using BatchPtr = std::shared_ptr<const Batch>;

}  // namespace etwrt
