// etwrt: a pool's hub. A pool has one dataplane Reader; in this process a hub thread per pool
// owns it and fans its records out to every ProcessTrace consuming that session (the first
// gets what was buffered, later ones only new events). When another process holds the
// reader, the hub is fed by it through a relay slot instead (consumer_relay.cc).
#pragma once

#include "client.h"
#include "consumer_batch.h"

#include <etwrt/dataplane.h>
#include <etwrt/reader_pacing.h>

#include <windows.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace etwrt {

// One ProcessTrace handle's place at its pool's hub. Guarded by the hub's mutex.
struct Subscriber {
  std::deque<BatchPtr> queue;
  std::size_t queued_records = 0;
  std::uint64_t since_ns = 0;  // Records stamped before it joined are not its own.
  bool ended = false;          // The session stopped and everything was queued.
  // Set before join: the subscriber's ProcessTrace consumes nothing else, so it may read the
  // pool itself while it is the hub's only subscriber (Hub::direct_poll).
  bool wants_direct = false;
  bool direct = false;  // It reads the pool itself now; the hub thread waits.
  // ProcessTrace's status once the queue is taken: the pool could not be read (another
  // process reads it), or the session's broker died.
  ULONG error = ERROR_SUCCESS;
};

// Bounds what a slow consumer holds in memory: the hub waits, the pool fills, and the loss
// is the pool's (counted and reported), as with ETW's own buffers.
inline constexpr std::size_t kQueueLimit = 256;

class Hub {
 public:
  explicit Hub(SessionPool* pool);

  // Returns once the hub reads the session (or failed to): a consumer that got its header
  // event gets every event written after it.
  void join(Subscriber* s);
  void leave(Subscriber* s);
  // Takes what is queued for `s` (waiting a little when nothing is); false once it ended.
  // `direct`: `s` reads the pool itself from now on (direct_poll); nothing more is queued.
  bool take(Subscriber* s, std::deque<BatchPtr>& out, bool& direct);

  // The direct path: while a subscriber that wants it is the hub's only one, this process
  // holds the pool's reader and feeds no other process, the hub thread hands the reader to
  // that subscriber's ProcessTrace thread, which polls it and delivers each record from the
  // pool's memory (no copy, no hand-off between threads). One step: a poll (then a short spin
  // or sleep when it found nothing). Returns false, the reader given back to the hub thread,
  // when the subscriber must go back to take(): another subscriber joins, another process asks
  // to be fed, or the session stopped (the hub drains it and ends the subscribers as always).
  bool direct_poll(dataplane::EventSink& sink);

 private:
  // detached: nobody listens here. reader: this process holds the pool's one Reader (and
  // feeds the relay slots of other consuming processes). relay: another process holds it
  // and feeds this one through a relay slot (dataplane RelayConsumer).
  enum class Mode { detached, reader, relay };

  void run();
  void leave_pool();
  bool wait_for_work(bool& stopped, std::shared_ptr<Batch>& held);
  bool reader_step(bool stopped, std::shared_ptr<Batch>& held);
  std::vector<BatchPtr> poll_reader(bool stopped, std::shared_ptr<Batch>& held,
                                    std::size_t& delivered);
  bool hand_out(const std::vector<BatchPtr>& out, bool ended);
  bool attach();
  void detach();
  void set_mode(Mode mode, std::uint64_t relay_since);
  void end_locked(Subscriber* s);
  void fail_all(ULONG error);
  bool full_locked() const;
  bool grant_direct(std::shared_ptr<Batch>& held);
  void end_direct_locked();

  // The relay (consumer_relay.cc).
  bool relay_wait_active();
  bool relay_step(bool stopped);
  bool reader_alive() const;
  void feed(const std::vector<BatchPtr>& out, bool stopped);

  // After each poll (`delivered`: what it delivered), the reader's pacing (dataplane
  // ReaderPacing: back-off after a thin poll, spin, announced sleep, naps while a writer
  // woke it recently). The session's stop and a new subscriber wake it at once.
  // `waiter`: the pool's Reader, or for a relayed consumer its slot's RelayConsumer (whose
  // futex the feeder wakes per batch); both announce, cancel, wait and nap the same way.
  template <typename Waiter>
  void idle_step(Waiter& waiter, std::size_t delivered) {
    pacing_.after_poll(waiter, delivered, [this] { return pool_->pool.now_ns(); });
  }

  static constexpr std::uint64_t kRelayActivationNs = 5'000'000'000;
  static constexpr auto kAttachLimit = std::chrono::seconds(6);

  // The hub thread's own.
  std::unique_ptr<dataplane::Reader> reader_;
  std::unique_ptr<dataplane::RelayFeeder> feeder_;
  std::unique_ptr<dataplane::RelayConsumer> relay_;
  std::uint64_t relay_requested_ns_ = 0;
  std::uint64_t stopped_seen_ns_ = 0;
  std::size_t last_entries_ = 0;  // what the last poll's batch held
  std::size_t last_arena_ = 0;
  dataplane::ReaderPacing pacing_;

  SessionPool* pool_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Subscriber*> subs_;
  Mode mode_ = Mode::detached;     // Guarded by mu_ (written by the hub thread).
  std::uint64_t relay_since_ = 0;  // Guarded by mu_.
  bool finished_ = false;
  Subscriber* direct_ = nullptr;  // Guarded by mu_: the subscriber polling the reader.
  int joining_ = 0;               // Guarded by mu_: joins waiting for the reader to come back.
  // Set (under mu_) by a subscriber that joins while another one polls directly; read by
  // that one at each step.
  std::atomic<bool> want_back_{false};
  bool started_ = false;  // Guarded by mu_: the hub thread runs (from the first join on).
};

// The hub of `pool`, made at first use (its thread starts with its first subscriber); never freed,
// like the pools they read.
Hub& hub_of(SessionPool* pool);

}  // namespace etwrt
