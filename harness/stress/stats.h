// What the stress consumer keeps per session while events stream in, with no allocation per
// event: the latency histogram (harness/model/latency_histogram.h), per-writer sequence
// tracking that tells duplicates and gaps apart, and where a delivery's wait went.
#pragma once

#include "harness/model/latency_histogram.h"
#include "harness/model/stress_run.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace etwh::stress {

// The calls the process had made at t_ns (CLOCK_MONOTONIC), linear between its samples: 0
// before start_ns, `total` from end_ns on. The driver samples on its own clock ticks, so this
// puts the writers' counts on the driver's time axis.
double written_at(const WriterSamples& w, std::uint64_t t_ns);

// Where one delivery's latency (callback time `now_ns` - write time) went, seen from the
// consumer alone: `quiet_ns` since the later of the write and the consumer thread's previous
// callback (`prev_ns`: any record, 0 for none), a time in which it delivered nothing at all
// (its reader slept, its thread had no core, or the record was not committed yet);
// `behind_ns` before that, while it delivered other records (batch order, another buffer, a
// late commit). quiet + behind == now - write exactly; both 0 when now_ns < write_ns.
struct LatencySplit {
  std::uint64_t quiet_ns = 0, behind_ns = 0;
};
LatencySplit split_latency(std::uint64_t now_ns, std::uint64_t prev_ns, std::uint64_t write_ns);

struct SilenceInWait {
  std::uint64_t ns = 0;
  bool partial = false;
};

// The times of one thread's most recent record callbacks (the k-th at times_[k % Size]), for
// the longest silence within one delivery's wait [write_ns, now_ns]: the longest stretch in
// which the thread delivered nothing. Gaps lie between consecutive callbacks, clipped at
// write_ns (the first runs from write_ns to the first callback after it) and at now_ns. When
// the ring no longer reaches back to write_ns (more callbacks in the wait than it holds), `ns`
// is a lower bound and `partial` says so. With the previous callback in the ring,
// split_latency's quiet <= ns <= now_ns - write_ns; both 0 when now_ns < write_ns.
//
// The walk back from now takes whole blocks of Block callbacks after the write at once, by
// their longest gap, worked out the first time a walk crosses the block and kept while the
// ring holds it. Why: a consumer that falls behind makes a new step maximum with nearly every
// record, and walking the callbacks one by one cost up to Size steps per record just when it
// could least afford them; keeping a maximum per callback instead would cost every record.
// A time before the one ahead of it (one thread, one monotonic clock: it cannot be) ends no
// gap, and a block holding one is walked callback by callback: the result is the plain
// walk's for any times.
template <std::size_t Size, std::size_t Block>
class CallbackTimes {
  static_assert(Size % Block == 0 && Block > 0);

 public:
  // Stores a callback's time; returns the previous callback's (0: none).
  std::uint64_t add(std::uint64_t now_ns) {
    const std::uint64_t prev = count_ > 0 ? times_[(count_ - 1) % Size] : 0;
    times_[count_ % Size] = now_ns;
    ++count_;
    return prev;
  }
  std::uint64_t count() const { return count_; }

  SilenceInWait longest_silence(std::uint64_t now_ns, std::uint64_t write_ns) {
    if (now_ns < write_ns) return {};
    const std::uint64_t lowest = count_ - std::min<std::uint64_t>(count_, Size);  // oldest held
    std::uint64_t longest = 0, end = now_ns;  // `end`: the later callback of the gap walked
    for (std::uint64_t next = count_; next > lowest;) {  // next - 1: the callback to walk to
      const std::uint64_t i = next - 1;
      // Block [i + 1 - Block, i] at once: held, each of its gaps known (the one from i ends at
      // callback i + 1, where the walk is), its times in order and the first after the write.
      if ((i + 1) % Block == 0 && i + 1 >= lowest + Block && i + 1 < count_ &&
          times_[(i + 1) % Size] == end) {
        const std::uint64_t first = i + 1 - Block;
        const std::uint64_t t = times_[first % Size];
        if (t > write_ns) {
          const std::uint64_t block_longest = longest_gap_in_block(first);
          if (block_longest != kOutOfOrder) {
            longest = std::max(longest, block_longest);
            end = t;
            next = first;
            continue;
          }
        }
      }
      const std::uint64_t t = std::min(times_[i % Size], end);
      if (t <= write_ns) return {std::max(longest, end - write_ns), false};
      longest = std::max(longest, end - t);
      end = t;
      next = i;
    }
    // No callback at or before the write held: if every callback of the thread is, there was
    // none before and the thread was silent from the write on; else older ones were
    // overwritten and the gaps among them are unknown.
    if (count_ <= Size) return {std::max(longest, end - write_ns), false};
    return {longest, true};
  }

 private:
  static constexpr std::size_t kBlocks = Size / Block;
  static constexpr std::uint64_t kOutOfOrder = ~std::uint64_t{0};  // a block with a time inversion

  // The longest gap from a callback of the block starting at `first` to the next one (the
  // block held, with the callback after it), or kOutOfOrder.
  std::uint64_t longest_gap_in_block(std::uint64_t first) {
    Known& known = known_[(first / Block) % kBlocks];
    if (known.first_plus_one != first + 1) {
      std::uint64_t longest = 0;
      for (std::uint64_t k = first; k < first + Block && longest != kOutOfOrder; ++k) {
        const std::uint64_t from = times_[k % Size], to = times_[(k + 1) % Size];
        longest = to < from ? kOutOfOrder : std::max(longest, to - from);
      }
      known = {first + 1, longest};
    }
    return known.longest;
  }

  std::array<std::uint64_t, Size> times_{};
  std::uint64_t count_ = 0;
  // Per ring slot of a block: which block was worked out (its first callback + 1; 0: none) and
  // its longest gap.
  struct Known {
    std::uint64_t first_plus_one = 0, longest = 0;
  };
  std::array<Known, kBlocks> known_{};
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

// The number on a "Key:<whitespace>123" line of a /proc status file (proc(5)), e.g.
// nonvoluntary_ctxt_switches; nullopt when there is no such line or it holds no number.
std::optional<std::uint64_t> proc_status_number(std::string_view status, std::string_view key);

// The steal time of all CPUs (ticks of USER_HZ) on the "cpu " line of /proc/stat (proc(5): its
// eighth number); nullopt when there is no such line or it has fewer numbers (older kernels).
std::optional<std::uint64_t> proc_stat_steal_ticks(std::string_view stat);

}  // namespace etwh::stress
