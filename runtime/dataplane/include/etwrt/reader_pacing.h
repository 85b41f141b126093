/*
 * etwrt data plane: how a reader's thread paces its polls (dataplane/README.md, "Reader
 * pacing"). After each poll, ReaderPacing::after_poll decides, from what the poll delivered
 * and the clock, what the thread does before the next one:
 * - a thin poll (fewer than kThinPoll records: the reader caught up with a writer that is
 *   still writing) waits kBackOffNs, touching no shared line: a reader that re-reads the
 *   commit word after every record or two takes the writer's cache lines on every write.
 *   kThinPoll is above what a writer at full speed commits while a poll runs (2-4 us at
 *   50-60 M events/s: 100-250 records);
 * - an empty poll: polls again for kSpinNs (a stream with small gaps never sleeps), then
 *   announces the sleep (Waiter::prepare_wait), and after one more empty poll sleeps until a
 *   writer's commit wakes it (Waiter::wait, bounded by kIdleWaitNs);
 * - within kWakeIntervalNs of being woken by a writer, an empty poll naps kNapNs instead,
 *   unannounced (Waiter::nap): a stream dense enough to wake the reader that often would
 *   make its writers pay a system call every few events. A record waits one nap at most.
 *   A wake-up a writer made for an announcement the next poll cancelled starts the interval
 *   too (Waiter::cancel_wait returns whether one was made).
 * Waiter: dataplane::Reader or RelayConsumer (prepare_wait, cancel_wait, wait, nap).
 * Clock: a callable returning nanoseconds of a monotonic clock.
 */
#ifndef ETWRT_READER_PACING_H
#define ETWRT_READER_PACING_H

#include <cstddef>
#include <cstdint>

namespace etwrt::dataplane {

class ReaderPacing {
 public:
  static constexpr std::size_t kThinPoll = 256;
  static constexpr std::uint64_t kBackOffNs = 2'000;
  static constexpr std::uint64_t kSpinNs = 20'000;
  static constexpr std::uint64_t kIdleWaitNs = 2'000'000;
  static constexpr std::uint64_t kWakeIntervalNs = 1'000'000;
  static constexpr std::uint64_t kNapNs = 25'000;

  template <typename Waiter, typename Clock>
  void after_poll(Waiter& waiter, std::size_t delivered, const Clock& now) {
    if (delivered != 0) {
      idle_since_ns_ = 0;
      // A writer that saw the announcement before the cancel paid a wake-up all the same: the
      // interval starts there too, else racing announcements cost writers more than one per
      // interval (seen under ThreadSanitizer, where the race window is wide).
      if (armed_ && waiter.cancel_wait(token_)) woken_ns_ = now();
      armed_ = false;
      if (delivered < kThinPoll) back_off(now);
      return;
    }
    if (armed_) {
      armed_ = false;
      idle_since_ns_ = 0;
      // True: woken before the timeout, by a writer's commit (or a stop, which ends the loop).
      if (waiter.wait(token_, kIdleWaitNs)) woken_ns_ = now();
      return;
    }
    const std::uint64_t t = now();
    if (woken_ns_ != 0 && t - woken_ns_ < kWakeIntervalNs) {
      waiter.nap(kNapNs);
      return;
    }
    if (idle_since_ns_ == 0) idle_since_ns_ = t;
    if (t - idle_since_ns_ < kSpinNs) {
      pause();
      return;
    }
    token_ = waiter.prepare_wait();
    armed_ = true;
  }

  // The reader changed hands or restarts: the next empty poll starts a fresh spin.
  void reset() {
    armed_ = false;
    idle_since_ns_ = 0;
    woken_ns_ = 0;
  }

 private:
  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    for (int i = 0; i < 16; ++i) __builtin_ia32_pause();
#endif
  }
  template <typename Clock>
  static void back_off(const Clock& now) {
    const std::uint64_t until = now() + kBackOffNs;
    do pause();
    while (now() < until);
  }

  bool armed_ = false;
  std::uint32_t token_ = 0;
  std::uint64_t idle_since_ns_ = 0;  // 0: the last poll delivered
  std::uint64_t woken_ns_ = 0;       // 0: no writer woke the reader yet
};

}  // namespace etwrt::dataplane

#endif  // ETWRT_READER_PACING_H
