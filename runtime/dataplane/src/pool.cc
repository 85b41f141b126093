// The session buffer pool: creation in a memfd, attachment from a received fd, the pool
// clock, counters, and recovery of buffers held by dead peers.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

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
  if (c.maximum_buffers < c.minimum_buffers)
    throw Error("MaximumBuffers " + std::to_string(c.maximum_buffers) +
                " is less than MinimumBuffers " + std::to_string(c.minimum_buffers));
}

bool default_is_alive(uint32_t pid) {
  return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

}  // namespace

void wake_sleeping_reader(Pool::Shared& shared) {
  // Only the writer that clears the flag pays the system call; the others see it clear.
  if (shared.reader_sleeping.exchange(0, std::memory_order_acq_rel) == 0) return;
  shared.wake_seq.fetch_add(1, std::memory_order_release);
  os::futex_wake_all(shared.wake_seq);
}

uint32_t Pool::reader_pid() const { return shared_->reader_pid.load(std::memory_order_acquire); }

void Pool::wake_reader() {
  shared_->reader_sleeping.store(0, std::memory_order_relaxed);
  shared_->wake_seq.fetch_add(1, std::memory_order_release);
  os::futex_wake_all(shared_->wake_seq);
}

bool hand_off(Pool::Shared& shared, uint32_t index, uint32_t owner_pid) {
  BufferDesc& d = shared.descs()[index];
  d.handoff_seq.store(shared.next_seq.fetch_add(1, std::memory_order_relaxed),
                      std::memory_order_relaxed);
  uint64_t s = d.state.load(std::memory_order_relaxed);
  for (;;) {
    if (phase_of(s) != kWriting || pid_of(s) != owner_pid) return false;
    const uint64_t next = pinned(s) ? make_state(kReading, 0) : make_state(kFull, 0);
    if (d.state.compare_exchange_weak(s, next, std::memory_order_release,
                                      std::memory_order_relaxed))
      break;
  }
  shared.buffers_written.fetch_add(1, std::memory_order_relaxed);
  shared.supply_epoch.fetch_add(1, std::memory_order_release);
  return true;
}

void count_reclaimed(BufferDesc& d) {
  if (d.steal_pending.load(std::memory_order_acquire) == 0) {
    const uint64_t commit = d.commit.load(std::memory_order_acquire);
    if (commit == 0) return;  // nothing in it, or an earlier holder finished
    const uint32_t unread =
        events_of(commit) - events_of(d.consumed.load(std::memory_order_relaxed));
    d.steal_target_buffers.store(d.lost_buffers.load(std::memory_order_relaxed) + 1,
                                 std::memory_order_relaxed);
    d.steal_target_events.store(d.lost_events.load(std::memory_order_relaxed) + unread,
                                std::memory_order_relaxed);
    d.steal_pending.store(1, std::memory_order_release);
  }
  // Idempotent from here: a recoverer repeating these stores changes nothing.
  d.lost_buffers.store(d.steal_target_buffers.load(std::memory_order_relaxed),
                       std::memory_order_relaxed);
  d.lost_events.store(d.steal_target_events.load(std::memory_order_relaxed),
                      std::memory_order_relaxed);
  d.commit.store(0, std::memory_order_relaxed);
  d.consumed.store(0, std::memory_order_relaxed);
  d.steal_pending.store(0, std::memory_order_release);
}

RealtimeLoss realtime_loss(Pool::Shared& s) {
  RealtimeLoss loss{s.realtime_buffers_lost.load(std::memory_order_relaxed),
                    s.realtime_events_lost.load(std::memory_order_relaxed)};
  const uint32_t allocated = s.allocated.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < allocated; ++i) {
    loss.buffers += s.descs()[i].lost_buffers.load(std::memory_order_relaxed);
    loss.events += s.descs()[i].lost_events.load(std::memory_order_relaxed);
  }
  return loss;
}

Pool::Pool(int fd, Shared* shared, size_t length) : fd_(fd), shared_(shared), length_(length) {}

Pool::Pool(Pool&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      shared_(std::exchange(other.shared_, nullptr)),
      length_(std::exchange(other.length_, 0)) {}

Pool& Pool::operator=(Pool&& other) noexcept {
  if (this != &other) {
    this->~Pool();
    fd_ = std::exchange(other.fd_, -1);
    shared_ = std::exchange(other.shared_, nullptr);
    length_ = std::exchange(other.length_, 0);
  }
  return *this;
}

Pool::~Pool() {
  if (shared_ != nullptr) munmap(shared_, length_);
  if (fd_ >= 0) close(fd_);
  shared_ = nullptr;
  fd_ = -1;
}

Pool Pool::create(const PoolConfig& config, const std::string& name) {
  validate(config);
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
  c.maximum_buffers = shared_->maximum_buffers;
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

void Pool::request_flush() { shared_->flush_requests.fetch_add(1, std::memory_order_release); }

Counters Pool::query() const {
  Shared& s = *shared_;
  Counters c;
  c.events_lost = s.events_lost.load(std::memory_order_relaxed);
  const RealtimeLoss loss = realtime_loss(s);
  c.realtime_buffers_lost = loss.buffers;
  c.realtime_events_lost = loss.events;
#if defined(ETWRT_MUTANTS)
  // Mutant: ControlTrace(QUERY) leaves out what a slow realtime consumer lost.
  if (etwrt::mutant::active("lost-not-counted"))
    c.realtime_buffers_lost = c.realtime_events_lost = 0;
#endif
  c.buffers_written = s.buffers_written.load(std::memory_order_relaxed);
  c.events_delivered = s.events_delivered.load(std::memory_order_relaxed);
  c.writer_recoveries = s.writer_recoveries.load(std::memory_order_relaxed);
  const uint32_t allocated = s.allocated.load(std::memory_order_acquire);
  c.number_of_buffers = allocated;
  // Committed records not yet delivered nor reclaimed are those still in buffers; adding the
  // delivered and the reclaimed ones gives every record ever committed.
  uint64_t unread = 0;
  for (uint32_t i = 0; i < allocated; ++i) {
    BufferDesc& d = s.descs()[i];
    const uint64_t state = d.state.load(std::memory_order_acquire);
    if (phase_of(state) == kFree) {
      ++c.free_buffers;
      continue;
    }
    if (phase_of(state) == kStealing) continue;
    unread += events_of(d.commit.load(std::memory_order_acquire)) -
              events_of(d.consumed.load(std::memory_order_acquire));
  }
  c.events_committed = c.events_delivered + c.realtime_events_lost + unread;
  return c;
}

uint32_t Pool::recover_dead_peers(const std::function<bool(uint32_t pid)>& is_alive_arg) {
  const auto is_alive =
      is_alive_arg ? is_alive_arg : std::function<bool(uint32_t)>(default_is_alive);
  Shared& s = *shared_;
  uint32_t recovered = 0;
  const uint32_t allocated = s.allocated.load(std::memory_order_acquire);

  const uint32_t reader = s.reader_pid.load(std::memory_order_acquire);
  const bool reader_dead = reader != 0 && !is_alive(reader);

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
      state = d.state.load(std::memory_order_acquire);
    } else if (phase == kStealing && !is_alive(owner)) {
      // Killed while reclaiming: finish the reclaim (its records count as lost, as the dead
      // writer intended) rather than deliver them now, older than what was delivered since.
      // Taking the state first keeps two recoverers from finishing it twice.
      const uint32_t me = static_cast<uint32_t>(getpid());
      if (d.state.compare_exchange_strong(state, make_state(kStealing, me),
                                          std::memory_order_acquire)) {
        count_reclaimed(d);
        d.state.store(make_state(kFree, 0), std::memory_order_release);
        ++recovered;
      }
      continue;
    }
    if (!reader_dead) continue;
    // Retried until the state is stable: a writer may hand a pinned buffer over to Reading
    // while its pin is being cleared.
    for (;;) {
      if (phase_of(state) == kReading) {
        // The claim is released; consumed tells the next reader where to resume.
        const bool done = events_of(d.commit.load(std::memory_order_acquire)) ==
                          events_of(d.consumed.load(std::memory_order_acquire));
        if (done) {
          d.commit.store(0, std::memory_order_relaxed);
          d.consumed.store(0, std::memory_order_relaxed);
        }
        if (d.state.compare_exchange_strong(state,
                                            done ? make_state(kFree, 0) : make_state(kFull, 0),
                                            std::memory_order_release)) {
          ++recovered;
          break;
        }
      } else if (phase_of(state) == kWriting && pinned(state)) {
        if (d.state.compare_exchange_strong(state, state & ~kPinned, std::memory_order_release))
          break;
      } else {
        break;
      }
    }
  }
  if (reader_dead) {
    uint32_t expected = reader;
    s.reader_pid.compare_exchange_strong(expected, 0, std::memory_order_release);
  }
  if (recovered != 0 || reader_dead) s.supply_epoch.fetch_add(1, std::memory_order_release);
  return recovered;
}

}  // namespace etwrt::dataplane
