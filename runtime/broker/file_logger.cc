#include "file_logger.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace etwrt::broker {
namespace {

// How long the thread sleeps when a poll found nothing: a record waits at most this long
// before it is taken from the pool (it reaches the file when its buffer is full, at the
// FlushTimer, a FLUSH or the stop).
constexpr auto kIdleWait = std::chrono::microseconds(2000);
// The first nap after a poll that found records, doubled at each empty poll up to kIdleWait.
// A writer at full speed fills a 64 KB buffer in about 100 us, and a session's pool holds
// tens of buffers: 2 ms asleep while it streams is most of the pool, and a logger that is
// also late for its core loses events. Waking writers on commit instead would cost them a
// system call per wake-up.
constexpr auto kStreamingNap = std::chrono::microseconds(50);

}  // namespace

std::unique_ptr<FileLogger> FileLogger::start(std::shared_ptr<dataplane::Pool> pool,
                                              std::uint32_t session, const EtlSettings& settings,
                                              std::uint32_t flush_timer_s, bool realtime,
                                              ULONG& status, std::string& reason) {
  std::unique_ptr<FileLogger> logger(new FileLogger());
  logger->pool_ = std::move(pool);
  logger->session_ = session;
  logger->flush_timer_ns_ = std::uint64_t{flush_timer_s} * 1'000'000'000u;
  try {
    dataplane::ReaderOptions options;
    options.max_claim_per_poll = 0;  // every full buffer at each poll: the file takes them all
    if (realtime) {  // Realtime consumers fed from here get records as the hub's would.
      options.eager_partial = true;
      options.streaming_hold_back_ns = 10'000;
    }
    logger->reader_ = std::make_unique<dataplane::Reader>(*logger->pool_, options, session);
    if (realtime) {
      logger->feeder_ = std::make_unique<dataplane::RelayFeeder>(*logger->pool_, session);
    }
  } catch (const dataplane::Error& e) {
    status = ERROR_BUSY;
    reason = e.what();
    return nullptr;
  }
  logger->file_ = EtlFile::open(settings, status, reason);
  if (!logger->file_) return nullptr;
  logger->thread_ = std::thread([raw = logger.get()] { raw->run(); });
  return logger;
}

FileLogger::~FileLogger() { stop(); }

std::uint64_t FileLogger::events_lost() const {
  const dataplane::Counters c = pool_->query(session_);
  return c.events_lost + c.realtime_events_lost + file_->counts().events_lost;
}

std::size_t FileLogger::poll(bool flush) {
  if (!feeder_) return reader_->poll(*this, flush);
  feeder_->refresh(pool_->now_ns());
  const std::size_t n = reader_->poll(
      [&](const dataplane::RecordView& r) {
        file_->add(r);
        feeder_->push(r);
      },
      flush, [&](const dataplane::LossReport& loss) { feeder_->push_loss(loss); });
  if (n != 0) feeder_->wake();
  return n;
}

// For a FLUSH, the FlushTimer or a switch: what is committed now, partial buffers too, and the
// pool's losses noted for the header of a file closed before the stop (not at every poll: QUERY
// reads every buffer's descriptor, lines the writers are writing). Bounded: writers that never
// pause would keep it busy for ever.
std::size_t FileLogger::drain() {
  std::size_t n = 0;
  for (int k = 0; k < 64 && poll(true) != 0; ++k) ++n;
  const dataplane::Counters c = pool_->query(session_);
  file_->note_pool_lost(c.events_lost + c.realtime_events_lost);
  return n;
}

void FileLogger::run() {
  auto last_flush = std::chrono::steady_clock::now();
  std::chrono::microseconds nap = kIdleWait;
  std::unique_lock lock(mu_);
  while (!stopping_) {
    const std::uint64_t asked = flush_requested_;
    const bool switching = switch_.asked;
    const std::string switch_name = switching ? switch_.name : std::string();
    lock.unlock();
    std::size_t n = poll(false);
    const auto now = std::chrono::steady_clock::now();
    const bool timer =
        flush_timer_ns_ != 0 && now - last_flush >= std::chrono::nanoseconds(flush_timer_ns_);
    if (switching) {
      n += drain();
      ULONG status = ERROR_SUCCESS;
      std::string reason;
      const bool ok = file_->switch_to(switch_name, status, reason);
      lock.lock();
      switch_ = Switch{false, {}, ok ? ULONG{ERROR_SUCCESS} : status, reason};
      cv_.notify_all();
      lock.unlock();
      last_flush = now;
    } else if (timer || asked != flush_done_) {
      n += drain();
      file_->flush();
      last_flush = now;
    } else if (n == 0) {
      file_->write_staged();  // idle: what is staged goes to the file now, not with later buffers
    }
    lock.lock();
    if (asked != flush_done_) {
      flush_done_ = asked;
      cv_.notify_all();
    }
    if (n != 0) {
      nap = kStreamingNap;
    } else if (!stopping_ && flush_requested_ == flush_done_ && !switch_.asked) {
      cv_.wait_for(lock, nap);
      nap = std::min<std::chrono::microseconds>(nap * 2, kIdleWait);
    }
  }
  lock.unlock();
  for (int k = 0; k < 1024 && poll(true) != 0; ++k) {
  }
  const dataplane::Counters c = pool_->query(session_);
  file_->finish(c.events_lost + c.realtime_events_lost);
  if (feeder_) {
    feeder_->end();
    feeder_->wake();
  }
}

void FileLogger::flush() {
  std::unique_lock lock(mu_);
  if (stopping_) return;
  const std::uint64_t mine = ++flush_requested_;
  cv_.notify_all();
  cv_.wait(lock, [&] { return flush_done_ >= mine || stopping_; });
}

bool FileLogger::switch_file(const std::string& name, ULONG& status, std::string& reason) {
  std::unique_lock lock(mu_);
  if (stopping_) {
    status = ERROR_WMI_INSTANCE_NOT_FOUND;
    reason = "the session is stopping";
    return false;
  }
  switch_ = Switch{true, name, ERROR_SUCCESS, {}};
  cv_.notify_all();
  cv_.wait(lock, [&] { return !switch_.asked || stopping_; });
  if (switch_.asked) {
    status = ERROR_WMI_INSTANCE_NOT_FOUND;
    reason = "the session stopped";
    return false;
  }
  status = switch_.status;
  reason = switch_.reason;
  return status == ERROR_SUCCESS;
}

void FileLogger::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    stopping_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  reader_.reset();
  feeder_.reset();
}

}  // namespace etwrt::broker
