// etwrt: the per-registration table of the enabling sessions' filters that EventEnabled and
// EventProviderEnabled read without a lock or a system call. One writer at a time (the
// client serializes publishers); any number of readers. Published with a seqlock.
#pragma once

#include <evntrace.h>
#if defined(ETWRT_MUTANTS)
#include "etwrt_mutant.h"
#include <type_traits>
#endif

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace etwrt {

inline constexpr std::size_t kMaxSessionsPerProvider = 8;

// What one enabling session asks of a provider.
struct SessionFilter {
  std::uint8_t level = 0;
  std::uint64_t match_any = 0;
  std::uint64_t match_all = 0;
  std::uint32_t enable_property = 0;
  // Where the event path sends what this session accepts (the client's pool of the session),
  // and the session's slot among the provider's enabling sessions (InstanceId = 1 << slot).
  void* sink = nullptr;
  std::uint8_t slot = 0;
  // The session's event ID filter (a SystemFilter, system_filters.h), nullptr without one.
  const void* id_filter = nullptr;
};

// One accepting session, as EventWrite needs it. No member initializers: EventWrite keeps an
// array of these on its stack, and zero-filling it on every call showed in profiles.
struct Target {
  void* sink;
  std::uint8_t slot;
  const void* id_filter;
  std::uint32_t enable_property;  // EventWriteEx's EVENT_WRITE_FLAG_INPRIVATE reads it.
};

// Whether one session accepts an event of (level, keyword): level 0 events always pass the
// level test; keyword 0 events pass unless the session set EVENT_ENABLE_PROPERTY_IGNORE_KEYWORD_0;
// otherwise MatchAny 0 accepts every keyword, else some MatchAny bit and all MatchAll bits.
constexpr bool session_accepts(const SessionFilter& s, std::uint8_t level, std::uint64_t keyword) {
#if defined(ETWRT_MUTANTS)
  // Mutants: level compared with < instead of <=; keyword 0 filtered like any keyword;
  // EVENT_ENABLE_PROPERTY_IGNORE_KEYWORD_0 ignored.
  if (!std::is_constant_evaluated()) {
    if (mutant::active("level-lt") && level != 0 && level >= s.level) return false;
    if (mutant::active("keyword0-filtered") && keyword == 0 && s.match_any != 0) return false;
    if (mutant::active("ignore-keyword0-ignored") && keyword == 0)
      return level == 0 || level <= s.level;
  }
#endif
  if (level != 0 && level > s.level) return false;
  if (keyword == 0 && (s.enable_property & EVENT_ENABLE_PROPERTY_IGNORE_KEYWORD_0) == 0)
    return true;
  if (s.match_any == 0) return true;
  return (keyword & s.match_any) != 0 && (keyword & s.match_all) == s.match_all;
}

// Every publish of every table takes the next number: a table's version() names its contents
// for the process's lifetime, whatever table is later made at the same address.
inline std::atomic<std::uint64_t> g_enable_table_versions{0};

class EnableTable {
 public:
  // Replaces the table; `count` <= kMaxSessionsPerProvider. Callers serialize calls.
  void publish(const SessionFilter* filters, std::size_t count) {
    const std::uint32_t s = seq_.load(std::memory_order_relaxed);
    seq_.store(s + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    for (std::size_t i = 0; i < count && i < kMaxSessionsPerProvider; ++i) {
      slots_[i].level.store(filters[i].level, std::memory_order_relaxed);
      slots_[i].match_any.store(filters[i].match_any, std::memory_order_relaxed);
      slots_[i].match_all.store(filters[i].match_all, std::memory_order_relaxed);
      slots_[i].enable_property.store(filters[i].enable_property, std::memory_order_relaxed);
      slots_[i].sink.store(filters[i].sink, std::memory_order_relaxed);
      slots_[i].slot.store(filters[i].slot, std::memory_order_relaxed);
      slots_[i].id_filter.store(filters[i].id_filter, std::memory_order_relaxed);
    }
    count_.store(static_cast<std::uint32_t>(
                     count < kMaxSessionsPerProvider ? count : kMaxSessionsPerProvider),
                 std::memory_order_relaxed);
    seq_.store(s + 2, std::memory_order_release);
    version_.store(g_enable_table_versions.fetch_add(1, std::memory_order_relaxed) + 1,
                   std::memory_order_release);
  }

  // Names the published contents (0: never published). A snapshot taken by collect() between
  // two equal readings of version() is that version's (or, during a publish, a newer one,
  // whose version follows): EventWrite caches its snapshots under it.
  std::uint64_t version() const { return version_.load(std::memory_order_acquire); }

  // True iff some enabling session accepts (level, keyword). With no session this is one
  // relaxed load: the cost every disabled event pays.
  bool accepts(std::uint8_t level, std::uint64_t keyword) const {
    if (count_.load(std::memory_order_relaxed) == 0) return false;
    for (;;) {
      const std::uint32_t before = seq_.load(std::memory_order_acquire);
      if ((before & 1u) != 0) continue;
      const std::uint32_t n = count_.load(std::memory_order_relaxed);
      bool any = false;
      for (std::uint32_t i = 0; i < n && !any; ++i) {
        SessionFilter f;
        f.level = slots_[i].level.load(std::memory_order_relaxed);
        f.match_any = slots_[i].match_any.load(std::memory_order_relaxed);
        f.match_all = slots_[i].match_all.load(std::memory_order_relaxed);
        f.enable_property = slots_[i].enable_property.load(std::memory_order_relaxed);
        any = session_accepts(f, level, keyword);
      }
      std::atomic_thread_fence(std::memory_order_acquire);
      if (seq_.load(std::memory_order_relaxed) == before) return any;
    }
  }

  // The sessions that accept (level, keyword), as one consistent snapshot; returns how many
  // were stored in `out`. Same cost as accepts() when no session listens.
  std::size_t collect(std::uint8_t level, std::uint64_t keyword,
                      std::array<Target, kMaxSessionsPerProvider>& out) const {
    if (count_.load(std::memory_order_relaxed) == 0) return 0;
    for (;;) {
      const std::uint32_t before = seq_.load(std::memory_order_acquire);
      if ((before & 1u) != 0) continue;
      const std::uint32_t n = count_.load(std::memory_order_relaxed);
      std::size_t found = 0;
      for (std::uint32_t i = 0; i < n && i < kMaxSessionsPerProvider; ++i) {
        SessionFilter f;
        f.level = slots_[i].level.load(std::memory_order_relaxed);
        f.match_any = slots_[i].match_any.load(std::memory_order_relaxed);
        f.match_all = slots_[i].match_all.load(std::memory_order_relaxed);
        f.enable_property = slots_[i].enable_property.load(std::memory_order_relaxed);
        if (!session_accepts(f, level, keyword)) continue;
        out[found].sink = slots_[i].sink.load(std::memory_order_relaxed);
        out[found].slot = slots_[i].slot.load(std::memory_order_relaxed);
        out[found].id_filter = slots_[i].id_filter.load(std::memory_order_relaxed);
        out[found].enable_property = f.enable_property;
        ++found;
      }
      std::atomic_thread_fence(std::memory_order_acquire);
      if (seq_.load(std::memory_order_relaxed) == before) return found;
    }
  }

  bool empty() const { return count_.load(std::memory_order_relaxed) == 0; }

 private:
  struct Slot {
    std::atomic<std::uint8_t> level{0};
    std::atomic<std::uint64_t> match_any{0};
    std::atomic<std::uint64_t> match_all{0};
    std::atomic<std::uint32_t> enable_property{0};
    std::atomic<void*> sink{nullptr};
    std::atomic<std::uint8_t> slot{0};
    std::atomic<const void*> id_filter{nullptr};
  };
  alignas(64) std::atomic<std::uint32_t> count_{0};
  std::atomic<std::uint32_t> seq_{0};
  std::atomic<std::uint64_t> version_{0};
  std::array<Slot, kMaxSessionsPerProvider> slots_{};
};

}  // namespace etwrt
