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
#include <functional>
#include <memory>
#include <stdexcept>
#include <vector>

#include "dataplane_layout.h"  // the attached-reader field, to start only once readers are up
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

struct ReaderControl {
  std::atomic<uint32_t> stop{0};
};

void run_pool_reader(Pool& pool, ReaderControl& control) {
  Reader reader(pool, ReaderOptions{});
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
    while (!reader_attached(write_pool) || !reader_attached(e2e_pool)) idle_pause();
  }
  static bool reader_attached(const Pool& pool) {
    return pool.shared()->reader_pid.load(std::memory_order_acquire) != 0;
  }
};

// The pool clock alone (TSC scaled to ns, or clock_gettime): part of every write.
void pool_clock(benchmark::State& state, Pool& pool) {
  for (auto _ : state) benchmark::DoNotOptimize(pool.now_ns());
}

EventInput make_input(const Payload& payload, EVENT_DATA_DESCRIPTOR& data) {
  data.Ptr = reinterpret_cast<ULONGLONG>(&payload);
  data.Size = sizeof payload;
  data.Reserved = 0;
  EventInput in;
  in.provider_id = &kProvider;
  in.descriptor = &kDescriptor;
  in.user_data = std::span<const EVENT_DATA_DESCRIPTOR>(&data, 1);
  return in;
}

void pool_write(benchmark::State& state, Pool& pool) {
  Writer writer(pool);
  Payload payload{};
  EVENT_DATA_DESCRIPTOR data;
  const EventInput in = make_input(payload, data);
  const auto before = pool.query();
  uint64_t not_written = 0;
  for (auto _ : state) {
    ++payload.words[0];
    not_written += writer.write(in) != WriteResult::written;
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

// The writer alone: the pool is drained by this thread outside the timed region, so no
// consumer competes for the cores or the cache lines while writes are timed.
void pool_write_uncontended(benchmark::State& state) {
  constexpr uint64_t kBatch = 100'000;
  PoolConfig config = Environment::config(64, 256);  // 16 MB: a batch always fits
  config.realtime = false;
  Pool pool = Pool::create(config, "bench-write-alone");
  Reader reader(pool);
  Writer writer(pool);
  Payload payload{};
  EVENT_DATA_DESCRIPTOR data;
  const EventInput in = make_input(payload, data);
  uint64_t not_written = 0, in_batch = 0;
  const Reader::Callback ignore = [](const RecordView&) {};
  for (auto _ : state) {
    ++payload.words[0];
    not_written += writer.write(in) != WriteResult::written;
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
  Payload payload{};
  EVENT_DATA_DESCRIPTOR data;
  const EventInput in = make_input(payload, data);
  const auto before = pool.query();
  uint64_t lost = 0;
  for (auto _ : state) {
    const uint64_t target = pool.query().events_delivered + kBatch;
    for (uint64_t i = 0; i < kBatch; ++i) {
      ++payload.words[0];
      lost += writer.write(in) != WriteResult::written;
    }
    writer.release();  // the batch's last, partial buffer goes to delivery now
    while (pool.query().events_delivered + lost < target) sched_yield();
  }
  const auto after = pool.query();
  state.SetItemsProcessed(state.iterations() * kBatch);
  state.counters["lost"] = double(lost + after.realtime_events_lost - before.realtime_events_lost);
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
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
