// The raw ring: a single-producer single-consumer ring of 32-byte items in shared memory with
// its consumer in another (forked) process, the physical ceiling of an inter-process hand-off on
// this machine. Shared by etwrt_dataplane_bench and etwh_bench_event_path (Linux only).
#pragma once

#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <new>
#include <stdexcept>
#include <vector>

namespace etwh_bench {

struct Payload {
  uint64_t words[4];
};
static_assert(sizeof(Payload) == 32);

// An item the size etwrt stores for an event with a 32-byte payload (its 80-byte record header,
// then the payload): the bytes EventWrite itself moves to the consumer's core.
struct Record112 {
  uint64_t words[14];
};
static_assert(sizeof(Record112) == 112);

inline void idle_pause() {
  timespec ts{0, 50'000};
  nanosleep(&ts, nullptr);
}

template <typename T>
T* shared_object() {
  void* p = mmap(nullptr, sizeof(T), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::runtime_error("mmap of a shared benchmark object failed");
  return new (p) T{};
}

// `n` of them, contiguous.
template <typename T>
T* shared_objects(size_t n) {
  void* p = mmap(nullptr, sizeof(T) * n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::runtime_error("mmap of shared benchmark objects failed");
  T* objects = static_cast<T*>(p);
  for (size_t i = 0; i < n; ++i) new (&objects[i]) T{};
  return objects;
}

// A consumer process running `body` until `stop` is set; joined by the destructor.
class Consumer {
 public:
  Consumer(std::atomic<uint32_t>* stop, const std::function<void()>& body) : stop_(stop) {
    const pid_t parent = getpid();
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      // Ends with the benchmark process, even when that is killed (no stop flag is then set).
      if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(1);
      body();
      _exit(0);
    }
  }
  ~Consumer() {
    stop_->store(1);
    int status = 0;
    waitpid(pid_, &status, 0);
  }

 private:
  std::atomic<uint32_t>* stop_;
  pid_t pid_;
};

// The raw ring: the least an inter-process hand-off of 32-byte items can cost here.
template <typename Item>
struct RingOf {
  static constexpr uint64_t kSlots = 1 << 16;
  alignas(64) std::atomic<uint64_t> head{0};
  alignas(64) std::atomic<uint64_t> tail{0};
  alignas(64) std::atomic<uint32_t> stop{0};
  // Set while a benchmark uses the ring: otherwise its consumer polls every 1 ms, not every
  // 50 us, so that idle rings' processes do not take cores from the other benchmarks.
  std::atomic<uint32_t> active{0};
  std::atomic<uint64_t> checksum{0};
  alignas(64) Item slots[kSlots];
};
using RawRing = RingOf<Payload>;
using RecordRing = RingOf<Record112>;

// One ring read by `Readers` consumer processes, each at its own pace from its own tail: one
// copy of each item however many read it. The floor of buffers shared among sessions
// (runtime/dataplane/README.md, "Buffers shared among sessions"), against one ring per reader.
template <typename Item, int Readers>
struct SharedRingOf {
  static constexpr uint64_t kSlots = 1 << 16;
  struct alignas(64) Tail {
    std::atomic<uint64_t> value{0};
  };
  alignas(64) std::atomic<uint64_t> head{0};
  Tail tails[Readers];
  alignas(64) std::atomic<uint32_t> stop{0};
  std::atomic<uint32_t> active{0};  // as RingOf::active
  std::atomic<uint64_t> checksum{0};
  alignas(64) Item slots[kSlots];
};
using SharedRecordRing4 = SharedRingOf<Record112, 4>;

// Drains `ring` from the tail `tail_word` (RingOf::tail, or one of SharedRingOf::tails).
template <typename Ring>
void run_ring_consumer(Ring& ring, std::atomic<uint64_t>& tail_word) {
  uint64_t tail = tail_word.load(std::memory_order_relaxed);
  uint64_t sum = 0;
  while (ring.stop.load(std::memory_order_relaxed) == 0) {
    const uint64_t head = ring.head.load(std::memory_order_acquire);
    if (head == tail) {
      if (ring.active.load(std::memory_order_relaxed) != 0) {
        idle_pause();
      } else {
        timespec ts{0, 1'000'000};
        nanosleep(&ts, nullptr);
      }
      continue;
    }
    for (; tail != head; ++tail) sum += ring.slots[tail % Ring::kSlots].words[0];
    tail_word.store(tail, std::memory_order_release);
  }
  ring.checksum.store(sum);
}

template <typename Ring>
void run_ring_consumer(Ring& ring) {
  run_ring_consumer(ring, ring.tail);
}

// `n` rings, each drained by its own consumer process (added to `consumers`, which stop and join
// them when destroyed).
template <typename Ring>
Ring* rings_with_consumers(int n, std::vector<std::unique_ptr<Consumer>>& consumers) {
  Ring* rings = shared_objects<Ring>(n);
  for (int r = 0; r < n; ++r) {
    consumers.push_back(
        std::make_unique<Consumer>(&rings[r].stop, [rings, r] { run_ring_consumer(rings[r]); }));
  }
  return rings;
}

// A shared ring with a consumer process per reader (added to `consumers`).
template <typename Ring>
Ring* shared_ring_with_consumers(int readers, std::vector<std::unique_ptr<Consumer>>& consumers) {
  Ring* ring = shared_object<Ring>();
  for (int r = 0; r < readers; ++r) {
    consumers.push_back(std::make_unique<Consumer>(
        &ring->stop, [ring, r] { run_ring_consumer(*ring, ring->tails[r].value); }));
  }
  return ring;
}

// Marks rings in use for a benchmark's duration (RingOf::active).
template <typename Ring>
class ActiveRings {
 public:
  ActiveRings(Ring* rings, int n) : rings_(rings), n_(n) {
    for (int r = 0; r < n_; ++r) rings_[r].active.store(1, std::memory_order_relaxed);
  }
  ~ActiveRings() {
    for (int r = 0; r < n_; ++r) rings_[r].active.store(0, std::memory_order_relaxed);
  }

 private:
  Ring* rings_;
  int n_;
};

// Items with a TSC timestamp each into `ring`, waiting for room as `tail()` (the slowest
// reader's position) says.
template <typename Ring, typename Tail>
void timestamped_writes(benchmark::State& state, Ring& ring, Tail tail) {
  const ActiveRings<Ring> in_use(&ring, 1);
  uint64_t head = ring.head.load(std::memory_order_relaxed);
  uint64_t tail_seen = tail();
  for (auto _ : state) {
    while (head - tail_seen == Ring::kSlots) tail_seen = tail();
    auto& slot = ring.slots[head % Ring::kSlots];
    slot.words[0] = head;
    slot.words[1] = __rdtsc();
    for (size_t w = 2; w < std::size(slot.words); ++w) slot.words[w] = head * (2 * w + 1);
    ring.head.store(++head, std::memory_order_release);
  }
  state.SetItemsProcessed(state.iterations());
}

// The ring with a TSC timestamp in each item: the ceiling for records that must carry one.
template <typename Ring>
void raw_ring_timestamped(benchmark::State& state, Ring& ring) {
  timestamped_writes(state, ring, [&ring] { return ring.tail.load(std::memory_order_acquire); });
}

// One item with one TSC reading into each of `n` rings (each drained by its own consumer
// process): the ceiling for one event written to n sessions, where every session is a
// hand-off to another core that no sharing inside the writer can remove.
template <typename Ring>
void raw_rings_timestamped(benchmark::State& state, Ring* rings, int n) {
  const ActiveRings<Ring> in_use(rings, n);
  uint64_t head = rings[0].head.load(std::memory_order_relaxed);
  uint64_t tail_seen[8] = {};
  for (int r = 0; r < n; ++r) tail_seen[r] = rings[r].tail.load(std::memory_order_acquire);
  for (auto _ : state) {
    const uint64_t stamp = __rdtsc();
    for (int r = 0; r < n; ++r) {
      Ring& ring = rings[r];
      while (head - tail_seen[r] == Ring::kSlots)
        tail_seen[r] = ring.tail.load(std::memory_order_acquire);
      auto& slot = ring.slots[head % Ring::kSlots];
      slot.words[0] = head;
      slot.words[1] = stamp;
      for (size_t w = 2; w < std::size(slot.words); ++w) slot.words[w] = head * (2 * w + 1);
      ring.head.store(head + 1, std::memory_order_release);
    }
    ++head;
  }
  state.SetItemsProcessed(state.iterations());
}

// One item with one TSC reading into a ring that `Readers` consumers read: the writer waits
// only for the slowest reader.
template <typename Item, int Readers>
void shared_ring_timestamped(benchmark::State& state, SharedRingOf<Item, Readers>& ring) {
  timestamped_writes(state, ring, [&ring] {
    uint64_t least = UINT64_MAX;
    for (auto& t : ring.tails) least = std::min(least, t.value.load(std::memory_order_acquire));
    return least;
  });
}

inline void raw_ring(benchmark::State& state, RawRing& ring) {
  const ActiveRings<RawRing> in_use(&ring, 1);
  uint64_t head = ring.head.load(std::memory_order_relaxed);
  uint64_t tail_seen = ring.tail.load(std::memory_order_acquire);
  for (auto _ : state) {
    while (head - tail_seen == RawRing::kSlots)
      tail_seen = ring.tail.load(std::memory_order_acquire);
    Payload& slot = ring.slots[head % RawRing::kSlots];
    slot.words[0] = head;
    slot.words[1] = head * 3;
    slot.words[2] = head * 5;
    slot.words[3] = head * 7;
    ring.head.store(++head, std::memory_order_release);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * sizeof(Payload));
}

}  // namespace etwh_bench
