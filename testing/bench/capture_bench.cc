// What etwh::testing's capture costs: 100,000 TraceLogging events (two fields, as a provider
// under test writes them) written while a capture runs, then stopped and decoded by name
// (BM_Capture/decode:1), beside the same events through a plain realtime session whose consumer
// only counts them (BM_CountingConsumer; `etwh stress`'s consumer does this and its own
// bookkeeping, so it is the cheaper side). BM_Capture/decode:0 is the capture without decoding.
// BM_CaptureOverCounting pairs the two in each iteration and reports the median ratio (the
// goal: at most 2). On etwrt all run in the private home etwh::testing makes for the process.
// Counters per iteration: events received, lost (EventsLost) and realtime buffers lost (whose
// events are not counted).
#include "etwh/testing/capture.h"
#include "../tests/tl_writer.h"

#include <benchmark/benchmark.h>
#include <evntrace.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
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

// What the runs of one benchmark received and lost, per iteration.
struct Tally {
  double received = 0, lost = 0, buffers_lost = 0;
  void report(benchmark::State& state) const {
    const auto avg = benchmark::Counter::kAvgIterations;
    state.counters["received"] = benchmark::Counter(received, avg);
    state.counters["lost"] = benchmark::Counter(lost, avg);
    state.counters["buffers_lost"] = benchmark::Counter(buffers_lost, avg);
  }
};

// One capture of kEvents; an error when the events were not decoded as asked.
std::string capture_once(etwh::testing::test::TlProvider& provider,
                         const etwh::testing::CaptureOptions& options, Tally& tally) {
  etwh::testing::Capture capture(options);
  write_all(provider);
  const etwh::testing::CaptureResult result = capture.stop();
  tally.received += static_cast<double>(result.events.size());
  for (const auto& s : result.sessions) {
    tally.lost += static_cast<double>(s.lost);
    tally.buffers_lost += static_cast<double>(s.buffers_lost);
  }
  if (!result.errors.empty()) return result.problems();
  if (options.decode && !result.events.empty()) {
    const etwh::testing::Event& last = result.events.back();
    if (last.name != "Tick" || last.field("Host") != "bench.example.org") {
      return "an event was not decoded";
    }
  }
  return {};
}

etwh::testing::CaptureOptions options_for(const GUID& id, bool decode) {
  etwh::testing::CaptureOptions options;
  options.provider = id;
  options.decode = decode;
  options.allow_loss = true;                         // counted, not hidden
  options.home = etwh::testing::HomeScope::process;  // the provider is registered once
  return options;
}

// state.range(0): decode (1) or not (0).
void BM_Capture(benchmark::State& state) {
  const GUID id = etwh::testing::provider_id_from_name(kName);
  etwh::testing::test::TlProvider provider(id, kName);
  const etwh::testing::CaptureOptions options = options_for(id, state.range(0) != 0);
  Tally tally;
  for (auto _ : state) {
    if (std::string error = capture_once(provider, options, tally); !error.empty()) {
      state.SkipWithError(error.c_str());
      return;
    }
  }
  tally.report(state);
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

// One run of kEvents through a session whose consumer only counts; false when the session did
// not start.
bool count_once(etwh::testing::test::TlProvider& provider, const GUID& id, Tally& tally) {
  std::vector<std::uint8_t> bytes = properties();
  auto* p = reinterpret_cast<EVENT_TRACE_PROPERTIES*>(bytes.data());
  TRACEHANDLE session = 0;
  char name[] = "etwh-bench-counting";
  if (StartTraceA(&session, name, p) != ERROR_SUCCESS) return false;
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
  tally.received += static_cast<double>(counting.events.load());
  tally.lost += static_cast<double>(s->EventsLost);
  tally.buffers_lost += static_cast<double>(s->RealTimeBuffersLost);
  return true;
}

void BM_CountingConsumer(benchmark::State& state) {
  (void)etwh::testing::cannot_capture();  // the same private home as the capture
  const GUID id = etwh::testing::provider_id_from_name(kName);
  etwh::testing::test::TlProvider provider(id, kName);
  Tally tally;
  for (auto _ : state) {
    if (!count_once(provider, id, tally)) {
      state.SkipWithError("StartTrace failed");
      return;
    }
  }
  tally.report(state);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// The goal's ratio, paired: each iteration runs the counting consumer, then the capture with
// decoding, on the same events, so that both see the machine's load of the same moment.
// Counters: each side's median wall time (ms) and the median of the iterations' ratios.
void BM_CaptureOverCounting(benchmark::State& state) {
  using Clock = std::chrono::steady_clock;
  const GUID id = etwh::testing::provider_id_from_name(kName);
  etwh::testing::test::TlProvider provider(id, kName);
  const etwh::testing::CaptureOptions options = options_for(id, true);
  Tally counted, captured;
  std::vector<double> counting_ms, capture_ms, ratios;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    if (!count_once(provider, id, counted)) {
      state.SkipWithError("StartTrace failed");
      return;
    }
    const auto t1 = Clock::now();
    if (std::string error = capture_once(provider, options, captured); !error.empty()) {
      state.SkipWithError(error.c_str());
      return;
    }
    const auto t2 = Clock::now();
    counting_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    capture_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
    ratios.push_back(capture_ms.back() / counting_ms.back());
  }
  state.counters["counting_ms"] = median(counting_ms);
  state.counters["capture_ms"] = median(capture_ms);
  state.counters["ratio"] = median(ratios);
  state.counters["lost"] =
      counted.lost + captured.lost + counted.buffers_lost + captured.buffers_lost;
}

BENCHMARK(BM_CountingConsumer)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Capture)
    ->ArgName("decode")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_CaptureOverCounting)->Iterations(15)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
