// Benchmarks of etwrt's data plane, side by side in one run:
//  - raw_ring: a single-producer single-consumer ring of 32-byte items in shared memory, with
//    the consumer in another process: the physical ceiling of this machine; the same with a
//    TSC timestamp per item, and the pool clock alone (every record carries a timestamp);
//  - write/threads:N: Writer::write of a record with a 32-byte payload into a realtime session
//    pool drained by a reader process (the cost EventWrite will pay per enabled session), and
//    the same with the pool drained between timed batches (the writer alone);
//  - end_to_end: batches of events from this process to a reader process, each batch timed
//    until the reader has delivered all of it; any loss is reported in the `lost` counter.
// Consumer processes are forked once, before any benchmark thread exists.
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <functional>
#include <memory>
#include <stdexcept>
#include <vector>

#include "etwrt/dataplane.h"
#include "raw_ring.h"

namespace {

using etwh_bench::Consumer;
using etwh_bench::idle_pause;
using etwh_bench::Payload;
using etwh_bench::raw_ring;
using etwh_bench::raw_ring_timestamped;
using etwh_bench::RawRing;
using etwh_bench::run_ring_consumer;
using etwh_bench::shared_object;
using etwrt::dataplane::EventInput;
using etwrt::dataplane::Pool;
using etwrt::dataplane::PoolConfig;
using etwrt::dataplane::Reader;
using etwrt::dataplane::ReaderOptions;
using etwrt::dataplane::RecordView;
using etwrt::dataplane::Writer;
using etwrt::dataplane::WriteResult;

constexpr GUID kProvider{0x5f0e3c2a, 0x77aa, 0x4bcd, {1, 2, 3, 4, 5, 6, 7, 8}};
constexpr EVENT_DESCRIPTOR kDescriptor{1, 0, 0, 4, 0, 0, 0x1};

template <typename Fn>
void for_each_bit(uint32_t mask, Fn fn) {
  for (uint32_t i = 0; i < 32; ++i)
    if ((mask & (1u << i)) != 0) fn(i);
}

struct ReaderControl {
  std::atomic<uint32_t> stop{0};
};

void run_pool_reader(Pool& pool, ReaderControl& control, uint32_t session = 0) {
  Reader reader(pool, ReaderOptions{}, session);
  uint64_t sum = 0;
  const Reader::Callback count = [&](const RecordView& r) { sum += r.user_data.size(); };
  while (control.stop.load(std::memory_order_relaxed) == 0) {
    if (reader.poll(count) == 0) idle_pause();
  }
  while (reader.poll(count, true) != 0) {
  }
  benchmark::DoNotOptimize(sum);
}

struct Environment {
  RawRing* ring = shared_object<RawRing>();
  ReaderControl* write_control = shared_object<ReaderControl>();
  ReaderControl* e2e_control = shared_object<ReaderControl>();
  Pool write_pool = Pool::create(config(64, 64), "bench-write");
  Pool e2e_pool = Pool::create(config(64, 256), "bench-e2e");
  std::vector<std::unique_ptr<Consumer>> consumers;

  static PoolConfig config(uint32_t kb, uint32_t buffers) {
    PoolConfig c;
    c.buffer_size_kb = kb;
    c.minimum_buffers = buffers;
    c.maximum_buffers = buffers;
    c.flush_timer_s = 1;
    c.realtime = true;
    return c;
  }
  Environment() {
    consumers.push_back(
        std::make_unique<Consumer>(&ring->stop, [this] { run_ring_consumer(*ring); }));
    consumers.push_back(std::make_unique<Consumer>(
        &write_control->stop, [this] { run_pool_reader(write_pool, *write_control); }));
    consumers.push_back(std::make_unique<Consumer>(
        &e2e_control->stop, [this] { run_pool_reader(e2e_pool, *e2e_control); }));
    // The readers must be attached before the first write, or early events would be kept
    // (no consumer) instead of delivered.
    while (write_pool.reader_pid() == 0 || e2e_pool.reader_pid() == 0) idle_pause();
  }
};

// Four sessions' consumer processes, one per session: of one pool they share, or of a pool
// each. Made for one benchmark run and stopped after it: idle, they would still poll and take
// CPU from whatever runs next.
struct FourSessions {
  static constexpr uint32_t kSessions = 4;
  std::vector<Pool> pools;  // one shared by the four sessions, or one per session
  ReaderControl* control = shared_object<ReaderControl>();
  std::vector<std::unique_ptr<Consumer>> consumers;

  explicit FourSessions(bool shared) {
    if (shared) {
      pools.push_back(Pool::create(Environment::config(64, 64 * kSessions), "bench-shared"));
      for (uint32_t i = 1; i < kSessions; ++i) pools[0].add_session();
    } else {
      for (uint32_t i = 0; i < kSessions; ++i)
        pools.push_back(Pool::create(Environment::config(64, 64), "bench-own"));
    }
    for (uint32_t i = 0; i < kSessions; ++i) {
      Pool& pool = pools[shared ? 0 : i];
      const uint32_t session = shared ? i : 0;
      consumers.push_back(std::make_unique<Consumer>(
          &control->stop, [this, &pool, session] { run_pool_reader(pool, *control, session); }));
    }
    const auto all_attached = [&] {
      for (uint32_t i = 0; i < kSessions; ++i)
        if (pools[shared ? 0 : i].reader_pid(shared ? i : 0) == 0) return false;
      return true;
    };
    while (!all_attached()) idle_pause();
  }
  ~FourSessions() {
    consumers.clear();  // each stops and is waited for
    munmap(control, sizeof(ReaderControl));
  }
};

// The pool clock alone (TSC scaled to ns, or clock_gettime): part of every write.
void pool_clock(benchmark::State& state, Pool& pool) {
  for (auto _ : state) benchmark::DoNotOptimize(pool.now_ns());
}

// The benchmarks' event: a 32-byte payload whose first word counts up (no two the same), its
// one data descriptor, and the writer's input that describes them.
class BenchEvent {
 public:
  BenchEvent() {
    data_.Ptr = reinterpret_cast<ULONGLONG>(&payload_);
    data_.Size = sizeof payload_;
    data_.Reserved = 0;
    in_.provider_id = &kProvider;
    in_.descriptor = &kDescriptor;
    in_.user_data = std::span<const EVENT_DATA_DESCRIPTOR>(&data_, 1);
  }
  BenchEvent(const BenchEvent&) = delete;
  BenchEvent& operator=(const BenchEvent&) = delete;

  // The next event to write.
  const EventInput& next() {
    ++payload_.words[0];
    return in_;
  }

 private:
  Payload payload_{};
  EVENT_DATA_DESCRIPTOR data_;
  EventInput in_;
};

void pool_write(benchmark::State& state, Pool& pool) {
  Writer writer(pool);
  BenchEvent event;
  const auto before = pool.query();
  uint64_t not_written = 0;
  for (auto _ : state) {
    not_written += writer.write(event.next()) != WriteResult::written;
  }
  writer.release();
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) {
    const auto after = pool.query();
    state.counters["rt_buffers_lost"] =
        double(after.realtime_buffers_lost - before.realtime_buffers_lost);
  }
  state.counters["not_written"] = double(not_written);
}

// One event for four sessions, as EventWrite does it today: encoded once into the first
// session's pool, then copied into each other's (write_copy), each pool read by its session's
// consumer process.
void write_four_pools(benchmark::State& state, std::vector<Pool>& pools) {
  std::vector<std::unique_ptr<Writer>> writers;
  for (Pool& pool : pools) writers.push_back(std::make_unique<Writer>(pool));
  BenchEvent event;
  uint64_t not_written = 0, lost_before = 0;
  for (const Pool& pool : pools) lost_before += pool.query().realtime_events_lost;
  for (auto _ : state) {
    not_written += writers[0]->write(event.next()) != WriteResult::written;
    const std::span<const std::byte> record = writers[0]->last_record();
    for (size_t i = 1; i < writers.size(); ++i)
      not_written += writers[i]->write_copy(record) != WriteResult::written;
  }
  writers.clear();
  uint64_t lost_after = 0;
  for (const Pool& pool : pools) lost_after += pool.query().realtime_events_lost;
  state.SetItemsProcessed(state.iterations());
  state.counters["rt_events_lost"] = double(lost_after - lost_before);
  state.counters["not_written"] = double(not_written);
}

// The same four sessions sharing one pool: the record is written once, with the four
// sessions' bits, and each session's consumer process reads it there.
void write_shared_pool(benchmark::State& state, Pool& pool, uint32_t sessions) {
  Writer writer(pool);
  BenchEvent event;
  uint64_t not_written = 0, lost_before = 0, lost_after = 0;
  for_each_bit(sessions, [&](uint32_t i) { lost_before += pool.query(i).realtime_events_lost; });
  for (auto _ : state) {
    not_written += writer.write(event.next(), 0, sessions) != WriteResult::written;
  }
  writer.release();
  for_each_bit(sessions, [&](uint32_t i) { lost_after += pool.query(i).realtime_events_lost; });
  state.SetItemsProcessed(state.iterations());
  state.counters["rt_events_lost"] = double(lost_after - lost_before);
  state.counters["not_written"] = double(not_written);
}

// The writer alone: the pool is drained by this thread outside the timed region, so no
// consumer competes for the cores or the cache lines while writes are timed.
void pool_write_uncontended(benchmark::State& state) {
  constexpr uint64_t kBatch = 100'000;
  PoolConfig config = Environment::config(64, 256);  // 16 MB: a batch always fits
  config.realtime = false;
  Pool pool = Pool::create(config, "bench-write-alone");
  Reader reader(pool);
  Writer writer(pool);
  BenchEvent event;
  uint64_t not_written = 0, in_batch = 0;
  const Reader::Callback ignore = [](const RecordView&) {};
  for (auto _ : state) {
    not_written += writer.write(event.next()) != WriteResult::written;
    if (++in_batch == kBatch) {
      state.PauseTiming();
      writer.release();
      while (reader.poll(ignore, true) != 0) {
      }
      in_batch = 0;
      state.ResumeTiming();
    }
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["not_written"] = double(not_written);
}

void end_to_end(benchmark::State& state, Pool& pool) {
  constexpr uint64_t kBatch = 100'000;
  Writer writer(pool);
  BenchEvent event;
  const auto before = pool.query();
  uint64_t lost = 0;
  for (auto _ : state) {
    const uint64_t target = pool.query().events_delivered + kBatch;
    for (uint64_t i = 0; i < kBatch; ++i) {
      lost += writer.write(event.next()) != WriteResult::written;
    }
    writer.release();  // the batch's last, partial buffer goes to delivery now
    while (pool.query().events_delivered + lost < target) sched_yield();
  }
  const auto after = pool.query();
  state.SetItemsProcessed(state.iterations() * kBatch);
  state.counters["lost"] = double(lost + after.realtime_events_lost - before.realtime_events_lost);
}

// End to end for four sessions, with zero loss: a batch that fits written, then waited for
// until every session's consumer process delivered all of it. `write` writes one event to the
// four sessions; `least_delivered` is what the slowest session delivered so far.
template <typename Write, typename LeastDelivered>
void end_to_end_four(benchmark::State& state, Write write, LeastDelivered least_delivered,
                     const std::function<void()>& release) {
  constexpr uint64_t kBatch = 30'000;  // fits in each session's 64 buffers of 64 KB
  BenchEvent event;
  uint64_t lost = 0;
  for (auto _ : state) {
    const uint64_t target = least_delivered() + kBatch;
    for (uint64_t i = 0; i < kBatch; ++i) {
      lost += !write(event.next());
    }
    release();
    while (least_delivered() + lost < target) sched_yield();
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
  state.counters["lost"] = double(lost);
}

void end_to_end_four_pools(benchmark::State& state, std::vector<Pool>& pools) {
  std::vector<std::unique_ptr<Writer>> writers;
  for (Pool& pool : pools) writers.push_back(std::make_unique<Writer>(pool));
  const auto write = [&](const EventInput& in) {
    bool ok = writers[0]->write(in) == WriteResult::written;
    for (size_t i = 1; i < writers.size(); ++i)
      ok &= writers[i]->write_copy(writers[0]->last_record()) == WriteResult::written;
    return ok;
  };
  const auto least = [&] {
    uint64_t least = UINT64_MAX;
    for (const Pool& pool : pools) least = std::min(least, pool.query().events_delivered);
    return least;
  };
  end_to_end_four(state, write, least, [&] {
    for (auto& w : writers) w->release();
  });
}

void end_to_end_shared_pool(benchmark::State& state, Pool& pool, uint32_t sessions) {
  Writer writer(pool);
  const auto write = [&](const EventInput& in) {
    return writer.write(in, 0, sessions) == WriteResult::written;
  };
  const auto least = [&] {
    uint64_t least = UINT64_MAX;
    for_each_bit(sessions,
                 [&](uint32_t i) { least = std::min(least, pool.query(i).events_delivered); });
    return least;
  };
  end_to_end_four(state, write, least, [&] { writer.release(); });
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  Environment env;
  benchmark::RegisterBenchmark("raw_ring_32B/2proc", [&](benchmark::State& s) {
    raw_ring(s, *env.ring);
  })->UseRealTime();
  benchmark::RegisterBenchmark("raw_ring_32B_timestamped/2proc", [&](benchmark::State& s) {
    raw_ring_timestamped(s, *env.ring);
  })->UseRealTime();
  benchmark::RegisterBenchmark("pool_clock", [&](benchmark::State& s) {
    pool_clock(s, env.write_pool);
  })->UseRealTime();
  benchmark::RegisterBenchmark("write_32B",
                               [&](benchmark::State& s) { pool_write(s, env.write_pool); })
      ->Threads(1)
      ->Threads(2)
      ->UseRealTime();
  benchmark::RegisterBenchmark("write_32B_no_consumer", pool_write_uncontended)->UseRealTime();
  benchmark::RegisterBenchmark("end_to_end_32B/2proc",
                               [&](benchmark::State& s) { end_to_end(s, env.e2e_pool); })
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("write_32B/4sessions_4pools/5proc", [](benchmark::State& s) {
    FourSessions four(false);
    write_four_pools(s, four.pools);
  })->UseRealTime();
  benchmark::RegisterBenchmark("write_32B/4sessions_1pool/5proc", [](benchmark::State& s) {
    FourSessions four(true);
    write_shared_pool(s, four.pools[0], 0b1111);
  })->UseRealTime();
  benchmark::RegisterBenchmark("end_to_end_32B/4sessions_4pools/5proc",
                               [](benchmark::State& s) {
                                 FourSessions four(false);
                                 end_to_end_four_pools(s, four.pools);
                               })
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("end_to_end_32B/4sessions_1pool/5proc",
                               [](benchmark::State& s) {
                                 FourSessions four(true);
                                 end_to_end_shared_pool(s, four.pools[0], 0b1111);
                               })
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
