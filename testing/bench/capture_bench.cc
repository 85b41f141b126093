// What etwh::testing's capture costs: 100,000 TraceLogging events (two fields, as a provider
// under test writes them) written while a capture runs, then stopped and decoded by name
// (BM_Capture/decode:1), beside the same events through a plain realtime session whose consumer
// only counts them, as `etwh stress`'s consumer does (BM_CountingConsumer). The ratio of the two
// is the capture's price; BM_Capture/decode:0 is the capture without TDH. On etwrt both run in
// the private home etwh::testing makes for the process. Counters per iteration: events
// received, lost (EventsLost) and realtime buffers lost (whose events are not counted).
#include "etwh/testing/capture.h"
#include "../tests/tl_writer.h"

#include <benchmark/benchmark.h>
#include <evntrace.h>

#include <atomic>
#include <thread>
#include <vector>

namespace {

constexpr int kEvents = 100000;
const char kName[] = "Etwh.Testing.Bench";

void write_all(etwh::testing::test::TlProvider& provider) {
  for (int i = 0; i < kEvents; ++i) {
    provider.write("Tick", 4, 0x1, static_cast<std::uint32_t>(i), "bench.example.org");
  }
}

// state.range(0): decode (1) or not (0).
void BM_Capture(benchmark::State& state) {
  const GUID id = etwh::testing::provider_id_from_name(kName);
  etwh::testing::test::TlProvider provider(id, kName);
  etwh::testing::CaptureOptions options;
  options.provider = id;
  options.decode = state.range(0) != 0;
  options.allow_loss = true;                         // counted below, not hidden
  options.home = etwh::testing::HomeScope::process;  // the provider registered once, above
  double received = 0, lost = 0, buffers_lost = 0;
  for (auto _ : state) {
    etwh::testing::Capture capture(options);
    write_all(provider);
    const etwh::testing::CaptureResult result = capture.stop();
    received += static_cast<double>(result.events.size());
    for (const auto& s : result.sessions) {
      lost += static_cast<double>(s.lost);
      buffers_lost += static_cast<double>(s.buffers_lost);
    }
    if (options.decode && !result.events.empty() && !result.events.back().field("Port")) {
      state.SkipWithError("an event was not decoded");
    }
  }
  state.counters["received"] = benchmark::Counter(received, benchmark::Counter::kAvgIterations);
  state.counters["lost"] = benchmark::Counter(lost, benchmark::Counter::kAvgIterations);
  state.counters["buffers_lost"] =
      benchmark::Counter(buffers_lost, benchmark::Counter::kAvgIterations);
}

struct Counting {
  std::atomic<std::uint64_t> events{0};
};

void WINAPI count_record(PEVENT_RECORD record) {
  static_cast<Counting*>(record->UserContext)->events.fetch_add(1, std::memory_order_relaxed);
}

// EVENT_TRACE_PROPERTIES with room for the name, sized as the capture's sessions are.
std::vector<std::uint8_t> properties() {
  std::vector<std::uint8_t> bytes(sizeof(EVENT_TRACE_PROPERTIES) + 1024);
  auto* p = reinterpret_cast<EVENT_TRACE_PROPERTIES*>(bytes.data());
  p->Wnode.BufferSize = static_cast<ULONG>(bytes.size());
  p->LoggerNameOffset = sizeof(EVENT_TRACE_PROPERTIES);
  p->LogFileMode = EVENT_TRACE_REAL_TIME_MODE;
  p->Wnode.Flags = WNODE_FLAG_TRACED_GUID;
  p->Wnode.ClientContext = 1;
  p->BufferSize = 64;
  p->MinimumBuffers = 16;
  p->MaximumBuffers = 256;
  return bytes;
}

void BM_CountingConsumer(benchmark::State& state) {
  (void)etwh::testing::cannot_capture();  // the same private home as the capture
  const GUID id = etwh::testing::provider_id_from_name(kName);
  etwh::testing::test::TlProvider provider(id, kName);
  double received = 0, lost = 0, buffers_lost = 0;
  for (auto _ : state) {
    std::vector<std::uint8_t> bytes = properties();
    auto* p = reinterpret_cast<EVENT_TRACE_PROPERTIES*>(bytes.data());
    TRACEHANDLE session = 0;
    char name[] = "etwh-bench-counting";
    if (StartTraceA(&session, name, p) != ERROR_SUCCESS) {
      state.SkipWithError("StartTrace failed");
      return;
    }
    Counting counting;
    EVENT_TRACE_LOGFILEA logfile{};
    logfile.LoggerName = name;
    logfile.ProcessTraceMode = PROCESS_TRACE_MODE_REAL_TIME | PROCESS_TRACE_MODE_EVENT_RECORD;
    logfile.EventRecordCallback = &count_record;
    logfile.Context = &counting;
    TRACEHANDLE trace = OpenTraceA(&logfile);
    std::thread consumer([&] { ProcessTrace(&trace, 1, nullptr, nullptr); });
    EnableTraceEx2(session, &id, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 5, 0, 0, 5000, nullptr);
    write_all(provider);
    std::vector<std::uint8_t> stop = properties();
    auto* s = reinterpret_cast<EVENT_TRACE_PROPERTIES*>(stop.data());
    ControlTraceA(session, nullptr, s, EVENT_TRACE_CONTROL_STOP);
    consumer.join();
    CloseTrace(trace);
    received += static_cast<double>(counting.events.load());
    lost += static_cast<double>(s->EventsLost);
    buffers_lost += static_cast<double>(s->RealTimeBuffersLost);
  }
  state.counters["received"] = benchmark::Counter(received, benchmark::Counter::kAvgIterations);
  state.counters["lost"] = benchmark::Counter(lost, benchmark::Counter::kAvgIterations);
  state.counters["buffers_lost"] =
      benchmark::Counter(buffers_lost, benchmark::Counter::kAvgIterations);
}

BENCHMARK(BM_CountingConsumer)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Capture)
    ->ArgName("decode")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
