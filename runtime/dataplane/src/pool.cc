// The session buffer pool: creation in a memfd, attachment from a received fd, the pool
// clock, counters, and recovery of buffers held by dead peers.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <new>
#include <string>
#include <utility>

#include <etwh/invariant_tsc.h>

#include "dataplane_layout.h"
#include "etwrt_os.h"
#if defined(ETWRT_MUTANTS)
#include "etwrt_mutant.h"
#endif

namespace etwrt::dataplane {

uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

namespace {

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

struct TscCalibration {
  bool usable = false;
  uint64_t tsc_base = 0;
  uint64_t mono_base_ns = 0;
  uint64_t ns_per_tick_q32 = 0;
};

// Measured once per process (10 ms of spinning): the rate does not change, and pool creation
// must not pay it for every session.
const TscCalibration& tsc_calibration() {
  static const TscCalibration calibration = [] {
    TscCalibration c;
    if (!etwh::cpu_has_invariant_tsc()) return c;
    const uint64_t m0 = monotonic_ns();
    const uint64_t t0 = __rdtsc();
    uint64_t m1 = m0, t1 = t0;
    while (m1 - m0 < 10'000'000) {
      m1 = monotonic_ns();
      t1 = __rdtsc();
    }
    if (t1 <= t0) return c;
    c.ns_per_tick_q32 =
        static_cast<uint64_t>((static_cast<unsigned __int128>(m1 - m0) << 32) / (t1 - t0));
    c.tsc_base = t1;
    c.mono_base_ns = m1;
    c.usable = c.ns_per_tick_q32 != 0;
    return c;
  }();
  return calibration;
}

void validate(const PoolConfig& c) {
  if (c.buffer_size_kb < 1 || c.buffer_size_kb > 16384)
    throw Error("BufferSize " + std::to_string(c.buffer_size_kb) + " KB is outside 1..16384 KB");
  if (c.minimum_buffers < 1)
    throw Error("MinimumBuffers is 0; a session needs at least one buffer");
  if (c.maximum_buffers > 65536)
    throw Error("MaximumBuffers " + std::to_string(c.maximum_buffers) + " exceeds 65536");
  if (c.reserve_buffers != 0 &&
      (c.reserve_buffers < c.maximum_buffers || c.reserve_buffers > 65536))
    throw Error("reserve of " + std::to_string(c.reserve_buffers) +
                " buffers is outside MaximumBuffers.." + "65536");
  if (c.maximum_buffers < c.minimum_buffers)
    throw Error("MaximumBuffers " + std::to_string(c.maximum_buffers) +
                " is less than MinimumBuffers " + std::to_string(c.minimum_buffers));
}

bool default_is_alive(uint32_t pid) {
  return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

}  // namespace

void wake_sleeping_readers(Pool::Shared& shared, uint32_t sessions) {
  // Only the writer that clears a reader's bit pays its system call; the others see it clear.
  const uint32_t was = shared.readers_sleeping.fetch_and(~sessions, std::memory_order_acq_rel);
  for_each_session(was & sessions, [&](uint32_t i) {
    shared.session[i].wake_seq.fetch_add(1, std::memory_order_release);
    os::futex_wake_all(shared.session[i].wake_seq);
  });
}

namespace {

Pool::Shared::Session& session_block(Pool::Shared& s, uint32_t session) {
  if (session >= kMaxSessions)
    throw Error("session " + std::to_string(session) + " is outside a pool's 0.." +
                std::to_string(kMaxSessions - 1));
  return s.session[session];
}

}  // namespace

uint32_t Pool::reader_pid(uint32_t session) const {
  return session_block(*shared_, session).reader_pid.load(std::memory_order_acquire);
}

void Pool::wake_reader(uint32_t session) {
  Shared::Session& b = session_block(*shared_, session);
  shared_->readers_sleeping.fetch_and(~(1u << session), std::memory_order_relaxed);
  b.wake_seq.fetch_add(1, std::memory_order_release);
  os::futex_wake_all(b.wake_seq);
}

void free_stolen(Pool::Shared& shared, uint32_t index) {
  BufferDesc& d = shared.descs()[index];
  d.commit.store(0, std::memory_order_relaxed);
  for (auto& consumed : d.consumed) consumed.store(0, std::memory_order_relaxed);
  d.sessions.store(0, std::memory_order_relaxed);
  d.mixed.store(0, std::memory_order_relaxed);
  d.state.store(make_state(kFree, 0), std::memory_order_release);
  shared.supply_epoch.fetch_add(1, std::memory_order_release);
}

bool hand_off(Pool::Shared& shared, uint32_t index, uint32_t owner_pid) {
  BufferDesc& d = shared.descs()[index];
  d.handoff_seq.store(shared.next_seq.fetch_add(1, std::memory_order_relaxed),
                      std::memory_order_relaxed);
  // Sessions removed since their records were written no longer read it.
  const uint32_t pending = d.sessions.load(std::memory_order_relaxed) &
                           shared.sessions_active.load(std::memory_order_acquire);
  uint64_t s = d.state.load(std::memory_order_relaxed);
  uint64_t next = 0;
  for (;;) {
    if (phase_of(s) != kWriting || pid_of(s) != owner_pid) return false;
    // Nobody needs it: freed at once (through Stealing, so that no reader takes it meanwhile).
    next = pending == 0 && held_of(s) == 0 ? make_state(kStealing, static_cast<uint32_t>(getpid()))
                                           : make_state(kFull, 0, held_of(s), pending);
    if (d.state.compare_exchange_weak(s, next, std::memory_order_acq_rel,
                                      std::memory_order_relaxed))
      break;
  }
  if (phase_of(next) == kStealing) {
    free_stolen(shared, index);
    return true;
  }
  for_each_session(pending, [&](uint32_t i) {
    shared.session[i].buffers_written.fetch_add(1, std::memory_order_relaxed);
  });
  shared.supply_epoch.fetch_add(1, std::memory_order_release);
  return true;
}

uint32_t unread_records(Pool::Shared& shared, uint32_t index, uint32_t session, uint64_t commit) {
  BufferDesc& d = shared.descs()[index];
  const uint64_t consumed = d.consumed[session].load(std::memory_order_relaxed);
  if (d.mixed.load(std::memory_order_relaxed) == 0) {
    // Every record is for the same sessions (the usual case): no need to look at them.
    if ((d.sessions.load(std::memory_order_relaxed) & (1u << session)) == 0) return 0;
    return events_of(commit) > events_of(consumed) ? events_of(commit) - events_of(consumed) : 0;
  }
  const std::byte* base = shared.data(index);
  const uint32_t end = std::min(bytes_of(commit), shared.buffer_bytes);
  uint32_t offset = bytes_of(consumed);
  uint32_t passed = events_of(consumed);
  uint32_t unread = 0;
  while (offset < end) {
    uint32_t size = 0;
    uint64_t timestamp = 0;
    if (!frame_at(base + offset, end - offset, size, timestamp)) {
      return unread + (events_of(commit) > passed ? events_of(commit) - passed : 0);
    }
    const auto sessions =
        std::to_integer<uint32_t>(base[offset + offsetof(RecordHeader, sessions)]);
    if ((sessions & (1u << session)) != 0) ++unread;
    offset += size;
    ++passed;
  }
  return unread;
}

void count_reclaimed(Pool::Shared& shared, uint32_t index, uint32_t pending) {
  BufferDesc& d = shared.descs()[index];
  if (d.steal_pending.load(std::memory_order_acquire) == 0) {
    const uint64_t commit = d.commit.load(std::memory_order_acquire);
    if (commit == 0) return;  // nothing in it, or an earlier holder finished
    for_each_session(pending, [&](uint32_t i) {
      const uint32_t unread = unread_records(shared, index, i, commit);
      d.loss[i].steal_target_buffers.store(
          d.loss[i].lost_buffers.load(std::memory_order_relaxed) + (unread != 0 ? 1 : 0),
          std::memory_order_relaxed);
      d.loss[i].steal_target_events.store(
          d.loss[i].lost_events.load(std::memory_order_relaxed) + unread,
          std::memory_order_relaxed);
    });
    d.steal_pending.store(1, std::memory_order_release);
  }
  // Idempotent from here: a recoverer repeating these stores changes nothing.
  for_each_session(pending, [&](uint32_t i) {
    d.loss[i].lost_buffers.store(d.loss[i].steal_target_buffers.load(std::memory_order_relaxed),
                                 std::memory_order_relaxed);
    d.loss[i].lost_events.store(d.loss[i].steal_target_events.load(std::memory_order_relaxed),
                                std::memory_order_relaxed);
  });
  d.commit.store(0, std::memory_order_relaxed);
  for (auto& consumed : d.consumed) consumed.store(0, std::memory_order_relaxed);
  d.sessions.store(0, std::memory_order_relaxed);
  d.mixed.store(0, std::memory_order_relaxed);
  d.steal_pending.store(0, std::memory_order_release);
  shared.reclaims.fetch_add(1, std::memory_order_release);
}

RealtimeLoss reclaimed_loss(Pool::Shared& s, uint32_t session) {
  RealtimeLoss loss;
  const uint32_t allocated = s.allocated.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < allocated; ++i) {
    loss.buffers += s.descs()[i].loss[session].lost_buffers.load(std::memory_order_relaxed);
    loss.events += s.descs()[i].loss[session].lost_events.load(std::memory_order_relaxed);
  }
  return loss;
}

RealtimeLoss realtime_loss(Pool::Shared& s, uint32_t session) {
  const Pool::Shared::Session& b = s.session[session];
  RealtimeLoss loss = reclaimed_loss(s, session);
  loss.buffers += b.realtime_buffers_lost.load(std::memory_order_relaxed);
  loss.events += b.realtime_events_lost.load(std::memory_order_relaxed);
  return loss;
}

Pool::Pool(int fd, Shared* shared, size_t length, bool owns)
    : fd_(fd), shared_(shared), length_(length), owns_(owns) {}

Pool::Pool(Pool&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      shared_(std::exchange(other.shared_, nullptr)),
      length_(std::exchange(other.length_, 0)),
      owns_(std::exchange(other.owns_, true)) {}

Pool& Pool::operator=(Pool&& other) noexcept {
  if (this != &other) {
    this->~Pool();
    fd_ = std::exchange(other.fd_, -1);
    shared_ = std::exchange(other.shared_, nullptr);
    length_ = std::exchange(other.length_, 0);
    owns_ = std::exchange(other.owns_, true);
  }
  return *this;
}

Pool::~Pool() {
  if (owns_ && shared_ != nullptr) munmap(shared_, length_);
  if (owns_ && fd_ >= 0) close(fd_);
  shared_ = nullptr;
  fd_ = -1;
}

Pool Pool::alias() const { return Pool(fd_, shared_, length_, false); }

Pool Pool::create(const PoolConfig& wanted, const std::string& name) {
  validate(wanted);
  PoolConfig config = wanted;  // laid out for the reserve; grows to MaximumBuffers at first
  const uint32_t session_maximum = config.maximum_buffers;
  if (config.reserve_buffers != 0) config.maximum_buffers = config.reserve_buffers;
  const uint64_t buffer_bytes = uint64_t{config.buffer_size_kb} * 1024;
  const uint64_t header = (sizeof(Shared) + 4095) & ~uint64_t{4095};
  const uint64_t descs =
      (uint64_t{config.maximum_buffers} * sizeof(BufferDesc) + 4095) & ~uint64_t{4095};
  const uint64_t total = header + descs + buffer_bytes * config.maximum_buffers + kRelayBytes;

  const int fd = os::shared_memory_file(name.c_str());
  if (fd < 0) throw Error(errno_text("memfd_create"));
  if (ftruncate(fd, static_cast<off_t>(total)) != 0) {
    const std::string msg = errno_text("ftruncate of the session pool");
    close(fd);
    throw Error(msg);
  }
  // Peers must not be able to shrink the file under the others (SIGBUS on access).
  if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    const std::string msg = errno_text("sealing the session pool");
    close(fd);
    throw Error(msg);
  }
  void* base = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    const std::string msg = errno_text("mmap of the session pool");
    close(fd);
    throw Error(msg);
  }
  // The file is zero-filled; constructing the atomics in place keeps the object model honest.
  Shared* s = new (base) Shared{};
  s->version = kLayoutVersion;
  s->header_bytes = static_cast<uint32_t>(sizeof(Shared));
  s->total_bytes = total;
  s->desc_offset = header;
  s->data_offset = header + descs;
  s->buffer_bytes = static_cast<uint32_t>(buffer_bytes);
  s->minimum_buffers = config.minimum_buffers;
  s->maximum_buffers = config.maximum_buffers;
  s->flush_timer_s = config.flush_timer_s;
  s->realtime = config.realtime ? 1 : 0;
  const TscCalibration& tsc = tsc_calibration();
  if (config.prefer_tsc && tsc.usable) {
    s->clock_kind = kClockTsc;
    s->tsc_base = tsc.tsc_base;
    s->mono_base_ns = tsc.mono_base_ns;
    s->ns_per_tick_q32 = tsc.ns_per_tick_q32;
  } else {
    s->clock_kind = kClockMonotonic;
  }
  for (uint32_t i = 0; i < config.maximum_buffers; ++i) new (&s->descs()[i]) BufferDesc{};
  s->relay_offset = s->data_offset + buffer_bytes * config.maximum_buffers;
  for (uint32_t i = 0; i < kRelaySlots; ++i) new (s->relay(i)) RelaySlot{};
  s->allocated.store(config.minimum_buffers, std::memory_order_relaxed);
  s->growth_cap.store(session_maximum, std::memory_order_relaxed);
  s->session[0].maximum_buffers = session_maximum;
  s->sessions_active.store(1, std::memory_order_relaxed);  // the creator's session, 0
  s->sessions_used.store(1, std::memory_order_relaxed);
  // Published last: a peer that checks the magic sees a complete header.
  std::atomic_ref<uint64_t>(s->magic).store(kMagic, std::memory_order_release);
  return Pool(fd, s, total);
}

Pool Pool::attach(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0) throw Error(errno_text("fstat of the session pool fd"));
  if (static_cast<uint64_t>(st.st_size) < sizeof(Shared))
    throw Error("session pool fd is " + std::to_string(st.st_size) +
                " bytes, smaller than a pool header");
  const int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (own < 0) throw Error(errno_text("dup of the session pool fd"));
  const size_t length = static_cast<size_t>(st.st_size);
  void* base = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, own, 0);
  if (base == MAP_FAILED) {
    const std::string msg = errno_text("mmap of the session pool");
    close(own);
    throw Error(msg);
  }
  Pool pool(own, static_cast<Shared*>(base), length);  // unmaps on any throw below
  Shared* s = pool.shared_;
  if (std::atomic_ref<uint64_t>(s->magic).load(std::memory_order_acquire) != kMagic)
    throw Error("fd is not an etwrt session pool (bad magic)");
  if (s->version != kLayoutVersion)
    throw Error("session pool layout version " + std::to_string(s->version) +
                ", this library reads version " + std::to_string(kLayoutVersion));
  if (s->header_bytes != sizeof(Shared) || s->total_bytes != length ||
      s->data_offset + uint64_t{s->buffer_bytes} * s->maximum_buffers != s->relay_offset ||
      s->relay_offset + kRelayBytes != length ||
      s->desc_offset + uint64_t{s->maximum_buffers} * sizeof(BufferDesc) > s->data_offset)
    throw Error("session pool header is inconsistent with its size (" + std::to_string(length) +
                " bytes)");
  return pool;
}

PoolConfig Pool::config() const {
  PoolConfig c;
  c.buffer_size_kb = shared_->buffer_bytes / 1024;
  c.minimum_buffers = shared_->minimum_buffers;
  c.maximum_buffers =
      std::min(shared_->growth_cap.load(std::memory_order_relaxed), shared_->maximum_buffers);
  c.reserve_buffers = shared_->maximum_buffers;
  c.flush_timer_s = shared_->flush_timer_s;
  c.realtime = shared_->realtime != 0;
  c.prefer_tsc = shared_->clock_kind == kClockTsc;
  return c;
}

uint32_t Pool::buffer_bytes() const { return shared_->buffer_bytes; }

uint64_t Pool::now_ns() const { return pool_now_ns(*shared_); }

Pool::ClockKey Pool::clock_key() const {
  const Shared& s = *shared_;
  // Only the TSC clock has a calibration; the others are the kernel's clock of that kind.
  if (s.clock_kind != kClockTsc) return ClockKey{s.clock_kind};
  return ClockKey{s.clock_kind, s.tsc_base, s.mono_base_ns, s.ns_per_tick_q32};
}

void Pool::request_flush(uint32_t session) {
  session_block(*shared_, session).flush_requests.fetch_add(1, std::memory_order_release);
}

uint32_t Pool::add_session(uint32_t minimum_buffers, uint32_t maximum_buffers) {
  Shared& s = *shared_;
  if (minimum_buffers > maximum_buffers)
    throw Error("MinimumBuffers " + std::to_string(minimum_buffers) + " exceeds MaximumBuffers " +
                std::to_string(maximum_buffers));
  // Room first: a session that cannot have its buffers gets no index.
  uint32_t cap = s.growth_cap.load(std::memory_order_acquire);
  do {
    if (uint64_t{cap} + maximum_buffers > s.maximum_buffers)
      throw Error("session pool has no room for " + std::to_string(maximum_buffers) +
                  " more buffers (" + std::to_string(cap) + " of its " +
                  std::to_string(s.maximum_buffers) + " given)");
  } while (
      !s.growth_cap.compare_exchange_weak(cap, cap + maximum_buffers, std::memory_order_acq_rel));
  uint32_t used = s.sessions_used.load(std::memory_order_acquire);
  for (;;) {
    if (used == kAllSessions) {
      s.growth_cap.fetch_sub(maximum_buffers, std::memory_order_acq_rel);
      throw Error("session pool has no session index left (" + std::to_string(kMaxSessions) +
                  " per pool, each given once)");
    }
    const uint32_t index = static_cast<uint32_t>(std::countr_one(used));
    if (s.sessions_used.compare_exchange_weak(used, used | (1u << index),
                                              std::memory_order_acq_rel)) {
      s.session[index].maximum_buffers = maximum_buffers;
      s.sessions_active.fetch_or(1u << index, std::memory_order_acq_rel);
      // Its MinimumBuffers are counted now (allocated grows by CAS, as writers grow it).
      const uint32_t limit = std::min(cap + maximum_buffers, s.maximum_buffers);
      uint32_t allocated = s.allocated.load(std::memory_order_acquire);
      while (allocated < limit && !s.allocated.compare_exchange_weak(
                                      allocated, std::min(allocated + minimum_buffers, limit),
                                      std::memory_order_acq_rel)) {
      }
      s.supply_epoch.fetch_add(1, std::memory_order_release);
      return index;
    }
  }
}

uint32_t Pool::sessions() const { return shared_->sessions_active.load(std::memory_order_acquire); }

void Pool::remove_session(uint32_t session) {
  Shared& s = *shared_;
  session_block(s, session);
  const uint32_t bit = 1u << session;
  if ((s.sessions_active.fetch_and(~bit, std::memory_order_acq_rel) & bit) == 0)
    throw Error("session " + std::to_string(session) + " is not in this pool");
  // The pool grows no further for it; the buffers it already counted stay (as at a session's
  // stop, NumberOfBuffers never shrinks).
  s.growth_cap.fetch_sub(s.session[session].maximum_buffers, std::memory_order_acq_rel);
  // Off every buffer: those only it still needed are freed. Writers hand over the buffers they
  // hold without it (hand_off masks the sessions with the active ones).
  const uint32_t allocated = s.allocated.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < allocated; ++i) {
    change_masks(
        s, i,
        [bit](uint64_t, uint32_t& held, uint32_t& pending) {
          if (((held | pending) & bit) == 0) return false;
          held &= ~bit;
          pending &= ~bit;
          return true;
        },
        [] {});
  }
  s.supply_epoch.fetch_add(1, std::memory_order_release);
}

Counters Pool::query(uint32_t session) const {
  Shared& s = *shared_;
  Shared::Session& b = session_block(s, session);
  Counters c;
  c.events_lost = b.events_lost.load(std::memory_order_relaxed);
  const RealtimeLoss loss = realtime_loss(s, session);
  c.realtime_buffers_lost = loss.buffers;
  c.realtime_events_lost = loss.events;
#if defined(ETWRT_MUTANTS)
  // Mutant: ControlTrace(QUERY) leaves out what a slow realtime consumer lost.
  if (etwrt::mutant::active("lost-not-counted"))
    c.realtime_buffers_lost = c.realtime_events_lost = 0;
#endif
  c.buffers_written = b.buffers_written.load(std::memory_order_relaxed);
  c.events_delivered = b.events_delivered.load(std::memory_order_relaxed);
  c.writer_recoveries = s.writer_recoveries.load(std::memory_order_relaxed);
  const uint32_t allocated = s.allocated.load(std::memory_order_acquire);
  c.number_of_buffers = allocated;
  // The session's committed records not yet delivered nor reclaimed are those still in
  // buffers; adding the delivered and the reclaimed ones gives every record ever committed.
  uint64_t unread = 0;
  for (uint32_t i = 0; i < allocated; ++i) {
    BufferDesc& d = s.descs()[i];
    const uint64_t state = d.state.load(std::memory_order_acquire);
    if (phase_of(state) == kFree) {
      ++c.free_buffers;
      continue;
    }
    const bool readable = phase_of(state) == kWriting ||
                          (phase_of(state) == kFull && (pending_of(state) & (1u << session)) != 0);
    if (readable) unread += unread_records(s, i, session, d.commit.load(std::memory_order_acquire));
  }
  c.events_committed = c.events_delivered + c.realtime_events_lost + unread;
  // Sessions sharing the pool each report their share of its buffers, in proportion to their
  // MaximumBuffers, so that adding the sessions' figures gives the pool's. Never more than the
  // session's MaximumBuffers, as on Windows (NumberOfBuffers is "the number of buffers allocated
  // for the event tracing session's buffer pool", MaximumBuffers their maximum): the pool keeps
  // the buffers it grew for sessions that left, so its remaining ones would otherwise report
  // them. Those in use are shared the same way, the rest of the share is free.
  const uint32_t cap = s.growth_cap.load(std::memory_order_relaxed);
  const uint64_t share = b.maximum_buffers;
  if (cap != 0 && (std::popcount(s.sessions_active.load(std::memory_order_acquire)) > 1 ||
                   c.number_of_buffers > share)) {
    const uint64_t in_use = c.number_of_buffers - c.free_buffers;
    auto part = [&](uint64_t n) { return std::min<uint64_t>(share, (n * share + cap / 2) / cap); };
    c.number_of_buffers = static_cast<uint32_t>(part(c.number_of_buffers));
    c.free_buffers = c.number_of_buffers - static_cast<uint32_t>(part(in_use));
  }
  return c;
}

namespace {

// Lets go of the buffers readers that died held (`dead`: their sessions): each session's
// consumed tells its next reader where to resume; a buffer they had read to the end is no
// longer pending for them, and freed when nobody else needs it. True when it changed.
bool release_dead_holds(Pool::Shared& s, uint32_t index, uint32_t dead) {
  BufferDesc& d = s.descs()[index];
  bool full = false;  // as the change that took effect saw it
  const MaskChange result = change_masks(
      s, index,
      [&](uint64_t state, uint32_t& held, uint32_t& pending) {
        if ((held & dead) == 0) return false;
        full = phase_of(state) == kFull;
        if (full) {
          const uint32_t committed = events_of(d.commit.load(std::memory_order_acquire));
          for_each_session(held & dead, [&](uint32_t i) {
            if (events_of(d.consumed[i].load(std::memory_order_acquire)) == committed)
              pending &= ~(1u << i);
          });
        }
        held &= ~dead;
        return true;
      },
      [] {});
  return result != MaskChange::none && full;
}

}  // namespace

uint32_t Pool::recover_dead_peers(const std::function<bool(uint32_t pid)>& is_alive_arg) {
  const auto is_alive =
      is_alive_arg ? is_alive_arg : std::function<bool(uint32_t)>(default_is_alive);
  Shared& s = *shared_;
  uint32_t recovered = 0;
  const uint32_t allocated = s.allocated.load(std::memory_order_acquire);

  uint32_t readers[kMaxSessions] = {};
  uint32_t dead = 0;  // the sessions whose reader died
  for (uint32_t i = 0; i < kMaxSessions; ++i) {
    readers[i] = s.session[i].reader_pid.load(std::memory_order_acquire);
    if (readers[i] != 0 && !is_alive(readers[i])) dead |= 1u << i;
  }

  for (uint32_t i = 0; i < allocated; ++i) {
    BufferDesc& d = s.descs()[i];
    uint64_t state = d.state.load(std::memory_order_acquire);
    const Phase phase = phase_of(state);
    const uint32_t owner = pid_of(state);
    if (phase == kWriting && !is_alive(owner)) {
      // The dead writer's committed records are complete; bytes past commit are a torn record
      // or nothing, and are never read.
      if (hand_off(s, i, owner)) {
        s.writer_recoveries.fetch_add(1, std::memory_order_relaxed);
        ++recovered;
      }
    } else if (phase == kStealing && !is_alive(owner)) {
      // Killed while reclaiming: finish the reclaim (its records count as lost, as the dead
      // writer intended) rather than deliver them now, older than what was delivered since;
      // or killed while freeing it (nothing pending). Taking the state first keeps two
      // recoverers from finishing it twice.
      const uint32_t me = static_cast<uint32_t>(getpid());
      const uint32_t pending = pending_of(state);
      if (d.state.compare_exchange_strong(state, make_state(kStealing, me, 0, pending),
                                          std::memory_order_acquire)) {
        count_reclaimed(s, i, pending);
        free_stolen(s, i);
        ++recovered;
      }
      continue;
    }
    if (dead != 0 && release_dead_holds(s, i, dead)) ++recovered;
  }
  for_each_session(dead, [&](uint32_t i) {
    uint32_t expected = readers[i];
    s.session[i].reader_pid.compare_exchange_strong(expected, 0, std::memory_order_release);
  });
  if (recovered != 0 || dead != 0) s.supply_epoch.fetch_add(1, std::memory_order_release);
  return recovered;
}

}  // namespace etwrt::dataplane
