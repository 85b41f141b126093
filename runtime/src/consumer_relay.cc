// etwrt: the relay. A pool has one reader; a process that consumes a session another live
// process reads is fed by that process through a relay slot of the pool (dataplane
// RelayFeeder on the reading side, RelayConsumer on the fed side). Hub members (consumer_hub.h).
#include "consumer_hub.h"

#include <signal.h>

#include <cerrno>
#include <cstdio>

namespace etwrt {

using namespace std::chrono_literals;

// The feeder activates the slot at its next loop (it is woken for that).
bool Hub::relay_wait_active() {
  for (;;) {
    std::uint64_t since = 0;
    if (relay_->active(since)) {
      set_mode(Mode::relay, since);
      return true;
    }
    if (!reader_alive() || pool_->pool.now_ns() - relay_requested_ns_ > kRelayActivationNs) {
      // The reader went away (take its place next time) or never answers.
      relay_.reset();
      if (pool_->pool.now_ns() - relay_requested_ns_ > kRelayActivationNs) {
        std::fprintf(stderr,
                     "etwrt: ProcessTrace: the session's reading process does not feed"
                     " this one\n");
        fail_all(ERROR_BUSY);
      }
      return false;
    }
    std::this_thread::sleep_for(100us);
  }
}

// One step of a relayed consumer: what the ring holds, to the subscribers. Returns true
// when the feed ended (the session stopped) and the hub is finished.
bool Hub::relay_step(bool stopped) {
  auto batch = std::make_shared<Batch>();
  const auto on_record = [&batch](const dataplane::RecordView& v) { batch->add(v); };
  const auto on_loss = [&batch](const dataplane::LossReport& loss) { batch->add(loss); };
  relay_->drain(on_record, on_loss);
  bool ended = relay_->ended(on_loss);
  bool orphan = false;
  if (!ended && !reader_alive()) {
    // The feeding process is gone: drain what it left, then read the pool itself (the
    // dead reader's claims went back to delivery; the subscribers keep their since).
    relay_->drain(on_record, on_loss);
    orphan = true;
  }
  if (!ended && stopped) {
    if (stopped_seen_ns_ == 0) stopped_seen_ns_ = pool_->pool.now_ns();
    // The feeder drains the session and ends the feed; bounded in case it never does.
    ended = pool_->pool.now_ns() - stopped_seen_ns_ > kRelayActivationNs;
  }
  const bool idle = batch->entries.empty();
  if (hand_out(idle ? std::vector<BatchPtr>{} : std::vector<BatchPtr>{batch}, ended)) {
    relay_.reset();
    return true;
  }
  if (orphan) {
    relay_.reset();
    std::lock_guard lock(mu_);
    mode_ = Mode::detached;  // The next loop attaches the reader; since values stay.
    return false;
  }
  idle_step(*relay_, batch->entries.size());
  return false;
}

bool Hub::reader_alive() const {
  const std::uint32_t pid = pool_->pool.reader_pid(pool_->index);
  return pid != 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
}

// Hands what this process's reader delivers to the processes it feeds.
void Hub::feed(const std::vector<BatchPtr>& out, bool stopped) {
  if (feeder_->active() > 0) {
    dataplane::RecordView v;
    for (const BatchPtr& b : out) {
      for (const std::uint64_t e : b->entries) {
        if (Batch::is_loss(e)) {
          feeder_->push_loss(b->loss(e));
        } else if (b->view(e, v)) {
          feeder_->push(v);
        }
      }
    }
    if (!out.empty()) feeder_->wake();
  }
  if (stopped) feeder_->end();
}

}  // namespace etwrt
