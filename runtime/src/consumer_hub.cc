// etwrt: a pool's hub thread, its subscribers and the pool's reader (consumer_hub.h).
#include "consumer_hub.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace etwrt {

using namespace std::chrono_literals;

Hub::Hub(SessionPool* pool) : pool_(pool) {}

void Hub::join(Subscriber* s) {
  std::unique_lock lock(mu_);
  // A subscriber reading the pool itself gives the reader back first: from then on the hub
  // hands every record to both. Bounded like the attach: if its ProcessTrace is stuck in a
  // callback, this one's records start when the reader comes back (end_direct_locked).
  ++joining_;
  if (direct_ != nullptr) {
    want_back_.store(true, std::memory_order_release);
    pool_->pool.wake_reader(pool_->index);  // It may sleep on the pool's futex.
    cv_.wait_for(lock, kAttachLimit, [&] { return direct_ == nullptr; });
  }
  --joining_;
  // The subscriber that makes the hub attach the pool's reader gets what the session
  // buffered; later ones only what is written from now on (CON-RT-SECOND). In a process fed
  // by another one's reader (a relay), only what is written once the feed started.
  s->since_ns = mode_ == Mode::detached ? 0 : pool_->pool.now_ns();
  if (mode_ == Mode::relay) s->since_ns = std::max(s->since_ns, relay_since_);
  if (finished_) end_locked(s);
  subs_.push_back(s);
  if (!started_) {
    // Started with its first subscriber in: a hub that ran first would find nobody listening
    // to a session that stopped before ProcessTrace and finish, losing what it buffered.
    std::thread([this] { run(); }).detach();  // Lives as long as the process maps the pool.
    started_ = true;                          // Not before: the thread may fail to start.
  }
  cv_.notify_all();
  pool_->pool.wake_reader(pool_->index);  // The hub may sleep on the pool's futex.
  cv_.wait_for(lock, kAttachLimit,
               [&] { return mode_ != Mode::detached || s->ended || s->error != ERROR_SUCCESS; });
}

void Hub::leave(Subscriber* s) {
  std::lock_guard lock(mu_);
  if (direct_ == s) end_direct_locked();
  std::erase(subs_, s);
  cv_.notify_all();
}

bool Hub::take(Subscriber* s, std::deque<BatchPtr>& out, bool& direct) {
  std::unique_lock lock(mu_);
  if (s->queue.empty() && !s->ended && s->error == ERROR_SUCCESS && !s->direct) {
    cv_.wait_for(lock, 5ms);
  }
  direct = s->direct;  // Granted with the queue: what the hub read before is in `out`.
  out.swap(s->queue);
  s->queue.clear();
  s->queued_records = 0;
  cv_.notify_all();  // Room again for the hub.
  return !(s->ended && out.empty()) && s->error == ERROR_SUCCESS;
}

void Hub::run() {
  std::shared_ptr<Batch> held;  // Last poll's records, waiting for this poll's losses.
  for (;;) {
    bool stopped = pool_->stopped.load(std::memory_order_acquire);
    if (!wait_for_work(stopped, held)) return;
    if (mode_ == Mode::detached && !attach()) continue;
    if (mode_ == Mode::relay) {
      if (relay_step(stopped)) return;
      continue;
    }
    if (reader_step(stopped, held)) {
      leave_pool();
      return;
    }
  }
}

// The session stopped and this hub handed out its last records: in a pool shared with other
// sessions, its index leaves the pool, which frees the buffers only it still needed.
void Hub::leave_pool() {
  if (pool_->pool.sessions() == 1u) return;  // a pool of its own, or the last session left
  try {
    pool_->pool.remove_session(pool_->index);
  } catch (const dataplane::Error&) {
    // The broker took it out already (it saw no reader of the session at the stop).
  }
}

// Waits while nobody listens here (and no other process is fed from here), then while a slow
// consumer holds the hub back (bounded memory; the pool takes the loss). False when the session
// stopped with nobody to hand anything to: the hub is finished.
bool Hub::wait_for_work(bool& stopped, std::shared_ptr<Batch>& held) {
  std::unique_lock lock(mu_);
  if (direct_ != nullptr) {
    // A ProcessTrace thread polls the reader (direct_poll) until it gives it back.
    cv_.wait(lock, [this] { return direct_ == nullptr; });
    stopped = pool_->stopped.load(std::memory_order_acquire);
  }
  // Nobody listens: detach, so unread records wait for the next consumer.
  while (subs_.empty() && !stopped && !(feeder_ && feeder_->refresh(pool_->pool.now_ns()))) {
    if (mode_ != Mode::detached) {
      held.reset();  // Read while their consumers listened; they left first.
      lock.unlock();
      detach();
      lock.lock();
      continue;
    }
    cv_.wait_for(lock, 50ms);
    stopped = pool_->stopped.load(std::memory_order_acquire);
  }
  if (subs_.empty() && stopped && mode_ != Mode::reader) {
    finished_ = true;
    return false;
  }
  while (!subs_.empty() && full_locked()) cv_.wait_for(lock, 5ms);
  return true;
}

// One step of the process holding the pool's reader: a poll, to the relay slots it feeds and
// to the subscribers. Returns true when the session stopped and the hub is finished (the
// reader detaches with the process; nothing more will come).
bool Hub::reader_step(bool stopped, std::shared_ptr<Batch>& held) {
  std::size_t delivered = 0;
  const std::vector<BatchPtr> out = poll_reader(stopped, held, delivered);
  feed(out, stopped);
  if (hand_out(out, stopped)) return true;
  if (!stopped && grant_direct(held)) return false;
  idle_step(*reader_, delivered);
  return false;
}

// Hands the reader to the only subscriber's ProcessTrace thread when it can take it: this
// process feeds no other, nobody is joining, the session runs. What the last poll held goes
// to its queue first, so it gets everything in order. Returns true when granted.
bool Hub::grant_direct(std::shared_ptr<Batch>& held) {
  std::lock_guard lock(mu_);
  if (subs_.size() != 1 || !subs_.front()->wants_direct || joining_ != 0 || finished_ ||
      mode_ != Mode::reader || feeder_->active() != 0 ||
      pool_->stopped.load(std::memory_order_acquire)) {
    return false;
  }
  Subscriber* s = subs_.front();
  if (held && !held->entries.empty()) {
    s->queue.push_back(held);
    s->queued_records += held->records;
  }
  held.reset();
  want_back_.store(false, std::memory_order_relaxed);
  direct_ = s;
  s->direct = true;
  cv_.notify_all();
  return true;
}

bool Hub::direct_poll(dataplane::EventSink& sink) {
  if (want_back_.load(std::memory_order_acquire) ||
      pool_->stopped.load(std::memory_order_acquire) ||
      feeder_->refresh(pool_->pool.now_ns()) != 0) {
    std::lock_guard lock(mu_);
    end_direct_locked();
    return false;
  }
  idle_step(*reader_, reader_->poll(sink, false));
  return true;
}

// The reader goes back to the hub thread. A subscriber that joined meanwhile without waiting
// for it (join's bound ran out) gets what is stamped from now on.
void Hub::end_direct_locked() {
  const std::uint64_t now = pool_->pool.now_ns();
  for (Subscriber* s : subs_) {
    if (s != direct_) s->since_ns = std::max(s->since_ns, now);
  }
  direct_->direct = false;
  direct_ = nullptr;
  cv_.notify_all();
}

// What a poll hands out, in order: its loss reports, then the last poll's records (`held`);
// its own records are held for the next poll, or handed out too once the session stopped.
// A writer may reclaim a buffer (and count it) while a poll runs, after that poll took its
// report, so the report of a gap can come one poll after the records that follow the gap.
// Held one poll, those records still come after the report (RT_LostEvent ahead of the data
// after a gap). `delivered`: the records and loss reports the poll found.
std::vector<BatchPtr> Hub::poll_reader(bool stopped, std::shared_ptr<Batch>& held,
                                       std::size_t& delivered) {
  // The feed of a relay slot activated now starts with this poll's records.
  feeder_->refresh(pool_->pool.now_ns());
  auto records = std::make_shared<Batch>();
  // Sized like the last poll's: growing them record by record cost the hub ~6% of its
  // time (perf) on a busy session.
  records->entries.reserve(last_entries_);
  records->arena.reserve(last_arena_);
  auto losses = std::make_shared<Batch>();
  const auto on_record = [&records](const dataplane::RecordView& v) { records->add(v); };
  const auto on_loss = [&losses](const dataplane::LossReport& loss) { losses->add(loss); };
  std::size_t n = reader_->poll(on_record, stopped, on_loss);
  last_entries_ = records->entries.size();
  last_arena_ = records->arena.size();
  if (stopped) {
    // The session is gone: everything committed, then the end.
    while (n > 0) n = reader_->poll(on_record, true, on_loss);
  }
  delivered = records->entries.size() + losses->entries.size();
  std::vector<BatchPtr> out;
  if (!losses->entries.empty()) out.push_back(losses);
  if (held && !held->entries.empty()) out.push_back(held);
  held.reset();
  if (stopped) {
    if (!records->entries.empty()) out.push_back(records);
  } else {
    held = records;
  }
  return out;
}

// Queues `out` for every subscriber; with `ended` (the session stopped and this was the
// rest), ends them and the hub. Returns `ended`.
bool Hub::hand_out(const std::vector<BatchPtr>& out, bool ended) {
  std::lock_guard lock(mu_);
  for (Subscriber* s : subs_) {
    for (const BatchPtr& b : out) {
      s->queue.push_back(b);
      s->queued_records += b->records;
    }
    if (ended) end_locked(s);
  }
  if (ended) {
    finished_ = true;
    subs_.clear();
    cv_.notify_all();
    return true;
  }
  if (!out.empty()) cv_.notify_all();
  return false;
}

// The pool's reader if nobody else holds it, else a relay slot fed by whoever does.
bool Hub::attach() {
  try {
    dataplane::ReaderOptions options;
    options.eager_partial = true;             // Realtime: deliver as soon as committed ...
    options.streaming_hold_back_ns = 10'000;  // ... but 10 us behind a streaming writer.
    reader_ = std::make_unique<dataplane::Reader>(pool_->pool, options, pool_->index);
    feeder_ = std::make_unique<dataplane::RelayFeeder>(pool_->pool, pool_->index);
    set_mode(Mode::reader, 0);
    return true;
  } catch (const dataplane::Error& e) {
    // Another live process reads the session: be fed by it.
  }
  try {
    relay_ = std::make_unique<dataplane::RelayConsumer>(pool_->pool, pool_->index);
    relay_requested_ns_ = pool_->pool.now_ns();
    return relay_wait_active();
  } catch (const dataplane::Error& e) {
    std::fprintf(stderr, "etwrt: ProcessTrace: %s\n", e.what());
    fail_all(ERROR_BUSY);
    return false;
  }
}

void Hub::detach() {
  pacing_.reset();
  relay_.reset();
  feeder_.reset();  // Only when it feeds nobody (run()'s loop).
  reader_.reset();
  std::lock_guard lock(mu_);
  mode_ = Mode::detached;
}

void Hub::set_mode(Mode mode, std::uint64_t relay_since) {
  std::lock_guard lock(mu_);
  mode_ = mode;
  relay_since_ = relay_since;
  if (mode == Mode::relay) {
    for (Subscriber* s : subs_) s->since_ns = std::max(s->since_ns, relay_since);
  }
  cv_.notify_all();
}

// The session ended and everything was queued: ProcessTrace returns once it took the rest,
// with ERROR_SUCCESS after a stop, kBrokerLostStatus when the broker died instead.
void Hub::end_locked(Subscriber* s) {
  s->ended = true;
  if (pool_->broker_lost.load(std::memory_order_acquire)) s->error = kBrokerLostStatus;
}

void Hub::fail_all(ULONG error) {
  std::lock_guard lock(mu_);
  for (Subscriber* s : subs_) s->error = error;
  subs_.clear();
  cv_.notify_all();
}

bool Hub::full_locked() const {
  for (const Subscriber* s : subs_) {
    if (s->queued_records >= kQueueLimit) return true;
  }
  return false;
}

namespace {
std::mutex g_hubs_mu;
std::map<SessionPool*, Hub*> g_hubs;  // Never freed, like the pools they read.
}  // namespace

Hub& hub_of(SessionPool* pool) {
  std::lock_guard lock(g_hubs_mu);
  Hub*& hub = g_hubs[pool];
  if (hub == nullptr) hub = new Hub(pool);
  return *hub;
}

}  // namespace etwrt
