// etwh_bench_event_path: the side-by-side run of the event path, in one binary and one run:
//  - EventWrite of 32 bytes with no session, one and four realtime sessions (runtime_bench.cc,
//    linked in, with the rest of the etwrt control-plane benchmarks);
//  - an LTTng-UST tracepoint with the same 32-byte payload, recorded by a snapshot session (no
//    consumer), then by a file session drained by lttng-consumerd, of a private session daemon
//    (lttng_session.sh) that this program starts and stops;
//  - the raw single-producer single-consumer shared-memory ring between two processes, bare
//    and with a TSC timestamp in each item; with items of 112 bytes (EventWrite's record); one
//    item into four rings (the floors of four sessions);
//  - end to end through the Win32 API: this process writes, a realtime consumer in another
//    process (this program re-executed) counts what ProcessTrace delivers; each batch is timed
//    until all of it was delivered, so the figure holds only with zero loss (`lost` counter);
//  - the latency floor: a cross-process wake-up through a futex in shared memory (p50, p99).
// Ratios between them: bench/event_path/ratios.py over --benchmark_out JSON.
#include <windows.h>
#include <evntprov.h>
#include <evntrace.h>
#include <evntcons.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "etwh/wake_floor.h"
#include "raw_ring.h"
#include "runtime_world.h"

#ifdef ETWH_BENCH_HAVE_LTTNG
#define TRACEPOINT_DEFINE
#define TRACEPOINT_PROBE_DYNAMIC_LINKAGE
#include "lttng_tp.h"
#endif

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------- LTTng-UST

// The private daemon and session: lttng_session.sh in its own mount namespace, fed by a pipe
// whose closing ends it. `error` says why the LTTng benchmark cannot run, if it cannot.
struct Lttng {
  std::string dir;
  pid_t script = -1;
  int to_script = -1;
  int from_script = -1;
  bool started = false;
  void* probe = nullptr;
  std::string error;
  // liblttng-ust's wait objects (global and per-user) that loading it created, removed at the
  // end so that the run leaves nothing behind.
  std::vector<std::string> created_shm;

  std::string log_tail() const {
    std::ifstream in(dir + "/lttng.log");
    std::string line, last;
    while (std::getline(in, line)) {
      if (!line.empty()) last = line;
    }
    return last.empty() ? "no output" : last;
  }
  void start();
  void stop();
  // One command line to lttng_session.sh and its one-line answer ("" when it has ended).
  std::string command(const std::string& line) {
    const std::string text = line + "\n";
    if (::write(to_script, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
      return "";
    }
    std::string answer;
    char c = 0;
    while (::read(from_script, &c, 1) == 1 && c != '\n') answer += c;
    return answer;
  }
  // Last thing before exit: liblttng-ust's listener threads re-create them until then.
  void remove_shm() const {
    for (const std::string& name : created_shm) ::shm_unlink(name.c_str());
  }
};

Lttng& lttng() {
  static Lttng l;
  return l;
}

void Lttng::start() {
  if (started) return;
  started = true;
#ifndef ETWH_BENCH_HAVE_LTTNG
  error = "built without liblttng-ust-dev";
#else
  char pattern[] = "/tmp/etwh-bench-lttng-XXXXXX";
  if (::mkdtemp(pattern) == nullptr) {
    error = std::string("mkdtemp: ") + std::strerror(errno);
    return;
  }
  dir = pattern;
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) {
    error = std::string("pipe: ") + std::strerror(errno);
    return;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  std::string script_path = ETWH_BENCH_LTTNG_SCRIPT;
  std::string event = "etwh_bench:event32";
  std::vector<char*> argv = {const_cast<char*>("unshare"),
                             const_cast<char*>("--mount"),
                             const_cast<char*>("--propagation"),
                             const_cast<char*>("private"),
                             const_cast<char*>("/bin/sh"),
                             script_path.data(),
                             dir.data(),
                             event.data(),
                             nullptr};
  const int rc = posix_spawnp(&script, "unshare", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  ::close(out[1]);
  to_script = in[1];
  if (rc != 0) {
    ::close(out[0]);
    script = -1;
    error = std::string("cannot run unshare: ") + std::strerror(rc);
    return;
  }
  // "ready", or end of file when the script failed (set -e).
  from_script = out[0];
  std::string answer;
  char c = 0;
  while (::read(from_script, &c, 1) == 1 && c != '\n') answer += c;
  if (answer != "ready") {
    error = "lttng-sessiond or the session could not be started: " + log_tail() + " (" + dir +
            "/lttng.log)";
    return;
  }
  // liblttng-ust finds the daemon through LTTNG_HOME when the probe module loads it.
  ::setenv("LTTNG_HOME", (dir + "/home").c_str(), 1);
  for (std::string name :
       {std::string("/lttng-ust-wait-8"), "/lttng-ust-wait-8-" + std::to_string(::getuid())}) {
    if (!std::filesystem::exists("/dev/shm" + name)) created_shm.push_back(name);
  }
  probe = ::dlopen(ETWH_BENCH_LTTNG_PROBE, RTLD_NOW);
  if (probe == nullptr) {
    error = std::string("dlopen of the tracepoint probe: ") + ::dlerror();
    return;
  }
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (!tracepoint_enabled(etwh_bench, event32) && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!tracepoint_enabled(etwh_bench, event32)) {
    error = "the session daemon never enabled etwh_bench:event32 in this process";
  }
#endif
}

void Lttng::stop() {
  if (to_script >= 0) ::close(to_script);
  if (from_script >= 0) ::close(from_script);
  if (script > 0) {
    int status = 0;
    ::waitpid(script, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "etwh_bench_event_path: lttng_session.sh ended badly: %s (kept %s)\n",
                   log_tail().c_str(), dir.c_str());
      return;
    }
  }
  if (!dir.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
}

// False, the benchmark skipped with LTTng's error, when LTTng could not be set up.
bool lttng_usable(benchmark::State& state) {
  if (lttng().error.empty()) return true;
  state.SkipWithError(lttng().error.c_str());
  return false;
}

void BM_LTTngUST_Tracepoint_32B(benchmark::State& state) {
  static const bool started = [] {
    lttng().start();
    return true;
  }();
  (void)started;
  if (!lttng_usable(state)) return;
#ifdef ETWH_BENCH_HAVE_LTTNG
  etwh_bench::Payload payload{};
  for (auto _ : state) {
    ++payload.words[0];
    tracepoint(etwh_bench, event32, payload.words);
  }
  state.counters["writes"] = static_cast<double>(state.iterations());
#endif
}

// The same tracepoint recorded by the file session, whose consumer daemon drains it meanwhile
// (discard mode: `discarded` counts the events the full buffers refused, `recorded` the rest).
void BM_LTTngUST_Tracepoint_32B_FileSession(benchmark::State& state) {
  static const bool started = [] {
    lttng().start();
    if (lttng().error.empty() && lttng().command("file") != "ok") {
      lttng().error = "switching to the file session failed: " + lttng().log_tail();
    }
    return true;
  }();
  (void)started;
  if (!lttng_usable(state)) return;
#ifdef ETWH_BENCH_HAVE_LTTNG
  const auto discarded = [] {
    const std::string n = lttng().command("discarded");
    return n.empty() || n.find_first_not_of("0123456789") != std::string::npos ? -1.0
                                                                               : std::stod(n);
  };
  const double before = discarded();
  const double round_trip_before = etwh_bench::cpu_round_trip_ns();
  etwh_bench::Payload payload{};
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    ++payload.words[0];
    tracepoint(etwh_bench, event32, payload.words);
  }
  const double loop_ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  const double after = discarded();
  if (before < 0 || after < 0) {
    state.SkipWithError("no discarded-event count from lttng list");
    return;
  }
  state.counters["writes"] = static_cast<double>(state.iterations());
  state.counters["discarded"] = after - before;
  const double recorded = static_cast<double>(state.iterations()) - (after - before);
  state.counters["recorded"] = recorded;
  // As BM_EventWrite_FileSession_32B's: the loop's wall time per event that reached the file.
  state.counters["ns_per_recorded"] = recorded > 0 ? loop_ns / recorded : 0;
  state.counters["cpu_round_trip_ns"] =
      std::min(round_trip_before, etwh_bench::cpu_round_trip_ns());
#endif
}

// ---------------------------------------------------------------- the latency floor

// A cross-process wake-up through a futex in shared memory (etwh/wake_floor.h): what any
// delivery to a consumer asleep costs at least, measured in the same run as the rest. One
// iteration of 2000 wake-ups 50 us apart; p50 and p99 as counters (ratios.py prints them).
// Three placements: the scheduler's choice (two values mixed, wake_floor.h), then the sleeper
// on the waker's CPU and on another one, each a stable figure.
void BM_FutexWake(benchmark::State& state, etwh::WakePlacement placement) {
  etwh::WakeSamples samples;
  for (auto _ : state) {
    try {
      samples = etwh::measure_futex_wake_floor(2000, std::chrono::microseconds(50), placement);
    } catch (const std::exception& e) {
      state.SkipWithError(e.what());
      return;
    }
  }
  if (samples.ns.empty()) {
    state.SkipWithError(("no such placement: " + samples.unavailable).c_str());
    return;
  }
  state.counters["p50_ns"] = static_cast<double>(etwh::sample_quantile(samples.ns, 0.5));
  state.counters["p99_ns"] = static_cast<double>(etwh::sample_quantile(samples.ns, 0.99));
}

// ---------------------------------------------------------------- end to end (Win32 API)

const GUID kEndToEnd = {
    0xcf708192, 0xa3b4, 0x45c6, {0xd7, 0xe8, 0xf9, 0x0a, 0x1b, 0x2c, 0x3d, 0x4e}};
constexpr const char* kEndToEndSession = "etwh-bench-e2e";
constexpr const char* kConsumerFlag = "--etwh-e2e-consumer";

// Shared by the writer and the consumer process (a file both map).
struct EndToEndShared {
  std::atomic<std::uint64_t> delivered{0};       // our provider's records seen by the callback
  std::atomic<std::uint64_t> lost_announced{0};  // RT_LostEvent records
  std::atomic<std::uint32_t> attached{0};        // 1 once OpenTraceA succeeded, 2 if it failed
  std::atomic<std::uint32_t> done{0};            // ProcessTrace returned
};

EndToEndShared* map_shared(const std::string& path, bool create) {
  const int fd = ::open(path.c_str(), create ? (O_RDWR | O_CREAT | O_EXCL) : O_RDWR, 0600);
  if (fd < 0) return nullptr;
  if (create && ::ftruncate(fd, sizeof(EndToEndShared)) != 0) {
    ::close(fd);
    return nullptr;
  }
  void* p = ::mmap(nullptr, sizeof(EndToEndShared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) return nullptr;
  return create ? new (p) EndToEndShared{} : static_cast<EndToEndShared*>(p);
}

void WINAPI e2e_record(PEVENT_RECORD r) {
  auto* shared = static_cast<EndToEndShared*>(r->UserContext);
  if (IsEqualGUID(r->EventHeader.ProviderId, kEndToEnd)) {
    // Only this thread writes it: a plain increment, published for the writer's wait.
    shared->delivered.store(shared->delivered.load(std::memory_order_relaxed) + 1,
                            std::memory_order_release);
  } else if (IsEqualGUID(r->EventHeader.ProviderId, RTLostEventGuid)) {
    shared->lost_announced.fetch_add(1, std::memory_order_relaxed);
  }
}

// The consumer process: argv = program --etwh-e2e-consumer SHARED_FILE.
int consumer_main(const char* shared_path) {
  EndToEndShared* shared = map_shared(shared_path, false);
  if (shared == nullptr) return 3;
  EVENT_TRACE_LOGFILEA logfile{};
  logfile.LoggerName = const_cast<LPSTR>(kEndToEndSession);
  logfile.ProcessTraceMode = PROCESS_TRACE_MODE_REAL_TIME | PROCESS_TRACE_MODE_EVENT_RECORD;
  logfile.EventRecordCallback = e2e_record;
  logfile.Context = shared;
  TRACEHANDLE t = OpenTraceA(&logfile);
  if (t == INVALID_PROCESSTRACE_HANDLE) {
    shared->attached.store(2);
    return 4;
  }
  shared->attached.store(1);
  const ULONG status = ProcessTrace(&t, 1, nullptr, nullptr);
  CloseTrace(t);
  shared->done.store(1);
  return status == ERROR_SUCCESS ? 0 : 5;
}

struct EndToEnd {
  std::string dir;
  EndToEndShared* shared = nullptr;
  REGHANDLE provider = 0;
  TRACEHANDLE session = 0;
  pid_t consumer = -1;
  std::string error;

  void start();
  void stop();
};

EndToEnd& e2e() {
  static EndToEnd e;
  return e;
}

void EndToEnd::start() {
  char pattern[] = "/tmp/etwh-bench-e2e-XXXXXX";
  if (::mkdtemp(pattern) == nullptr) {
    error = std::string("mkdtemp: ") + std::strerror(errno);
    return;
  }
  dir = pattern;
  std::string shared_path = dir + "/shared";
  shared = map_shared(shared_path, true);
  if (shared == nullptr) {
    error = "cannot map " + shared_path;
    return;
  }
  if (EventRegister(&kEndToEnd, nullptr, nullptr, &provider) != ERROR_SUCCESS) {
    error = "EventRegister failed";
    return;
  }
  // 64 KB x 512 buffers (32 MB): a whole batch fits even if the consumer falls behind.
  etwh_bench::SessionProperties p;
  p.get()->BufferSize = 64;
  p.get()->MinimumBuffers = 512;
  p.get()->MaximumBuffers = 512;
  p.get()->FlushTimer = 1;
  ULONG status = StartTraceA(&session, kEndToEndSession, p.get());
  if (status != ERROR_SUCCESS) {
    error = "StartTraceA failed: " + std::to_string(status);
    return;
  }
  status = EnableTraceEx2(session, &kEndToEnd, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 5, 0, 0, 10000,
                          nullptr);
  if (status != ERROR_SUCCESS) {
    error = "EnableTraceEx2 failed: " + std::to_string(status);
    return;
  }
  // ETWH_BENCH_CONSUMER_PREFIX: a command the consumer runs under, words separated by spaces
  // (e.g. "valgrind --tool=callgrind" to count its instructions per event).
  std::vector<std::string> words;
  if (const char* prefix = std::getenv("ETWH_BENCH_CONSUMER_PREFIX")) {
    std::istringstream in(prefix);
    for (std::string w; in >> w;) words.push_back(w);
  }
  std::error_code ec;
  words.push_back(std::filesystem::read_symlink("/proc/self/exe", ec).string());
  words.push_back(kConsumerFlag);
  words.push_back(shared_path);
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  const int rc = posix_spawnp(&consumer, argv[0], nullptr, nullptr, argv.data(), environ);
  if (rc != 0) {
    consumer = -1;
    error = std::string("cannot start the consumer process: ") + std::strerror(rc);
    return;
  }
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (shared->attached.load() == 0 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (shared->attached.load() != 1) error = "the consumer process could not open the session";
}

void EndToEnd::stop() {
  if (session != 0) {
    etwh_bench::SessionProperties p;
    ControlTraceA(session, nullptr, p.get(), EVENT_TRACE_CONTROL_STOP);
  }
  if (consumer > 0) {
    int status = 0;
    ::waitpid(consumer, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "etwh_bench_event_path: the end-to-end consumer ended with status %d\n",
                   status);
    }
  }
  if (provider != 0) EventUnregister(provider);
  if (!dir.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
}

// One iteration: a batch written, flushed and waited for until the consumer has all of it.
void BM_EndToEnd_Win32_1Provider_1RealtimeConsumer_32B(benchmark::State& state) {
  constexpr std::uint64_t kBatch = 100'000;
  static const bool started = [] {
    e2e().start();
    return true;
  }();
  (void)started;
  EndToEnd& e = e2e();
  if (!e.error.empty()) {
    state.SkipWithError(e.error.c_str());
    return;
  }
  EVENT_DESCRIPTOR d;
  EventDescCreate(&d, 1, 0, 0, 4, 0, 0, 0x1);
  etwh_bench::Payload payload{};
  EVENT_DATA_DESCRIPTOR data;
  EventDataDescCreate(&data, &payload, sizeof payload);
  std::uint64_t refused = 0;
  const std::uint64_t announced_before = e.shared->lost_announced.load();
  const std::uint64_t delivered_before = e.shared->delivered.load();
  std::uint64_t target = delivered_before;
  for (auto _ : state) {
    for (std::uint64_t i = 0; i < kBatch; ++i) {
      ++payload.words[0];
      if (EventWrite(e.provider, &d, 1, &data) != ERROR_SUCCESS) ++refused;
    }
    target += kBatch;
    etwh_bench::SessionProperties p;
    ControlTraceA(e.session, nullptr, p.get(), EVENT_TRACE_CONTROL_FLUSH);
    // Generous bound: only a loss or a dead consumer keeps the count from arriving.
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    while (e.shared->delivered.load(std::memory_order_acquire) + refused < target) {
      if (Clock::now() > deadline || e.shared->done.load() != 0) {
        state.SkipWithError("the consumer stopped short of the written events (loss)");
        break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }
  etwh_bench::SessionProperties q;
  ControlTraceA(e.session, nullptr, q.get(), EVENT_TRACE_CONTROL_QUERY);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kBatch));
  state.counters["delivered"] = static_cast<double>(e.shared->delivered.load() - delivered_before);
  state.counters["lost"] =
      static_cast<double>(refused + e.shared->lost_announced.load() - announced_before);
  state.counters["session_events_lost"] = static_cast<double>(q.get()->EventsLost);
  state.counters["session_rt_buffers_lost"] = static_cast<double>(q.get()->RealTimeBuffersLost);
}

}  // namespace

namespace {

// The rings, each with its consumer processes (main forks them first).
constexpr int kRings = 4;
struct Rings {
  etwh_bench::RawRing* ring = nullptr;
  etwh_bench::RecordRing* records = nullptr;
  etwh_bench::RawRing* four = nullptr;
  etwh_bench::RecordRing* four_records = nullptr;
  etwh_bench::SharedRecordRing4* shared_records = nullptr;
};

// A ring benchmark with the cache line's round trip beside it, the lower of before and after,
// as EventWrite's (runtime_world.h): ratios.py compares the two only within one host mode.
template <typename Run>
void with_round_trip(benchmark::State& s, const Run& run) {
  const double before = etwh_bench::cpu_round_trip_ns();
  run();
  s.counters["cpu_round_trip_ns"] = std::min(before, etwh_bench::cpu_round_trip_ns());
}

// The floors: the raw rings against which EventWrite is judged (ratios.py).
void register_ring_benchmarks(const Rings& r) {
  benchmark::RegisterBenchmark("RawRing_32B/2proc", [ring = r.ring](benchmark::State& s) {
    with_round_trip(s, [&] { etwh_bench::raw_ring(s, *ring); });
  })->UseRealTime();
  // The same ring with a TSC read into each item: the ceiling for records that carry a
  // timestamp, as every ETW event does.
  benchmark::RegisterBenchmark("RawRing_32B_timestamped/2proc", [ring =
                                                                     r.ring](benchmark::State& s) {
    with_round_trip(s, [&] { etwh_bench::raw_ring_timestamped(s, *ring); });
  })->UseRealTime();
  // The same with items of 112 bytes, the size of EventWrite's record of a 32-byte payload: the
  // floor of BM_EventWrite_OneSession_32B, which moves that many bytes to the consumer's core.
  benchmark::RegisterBenchmark("RawRing_112B_timestamped/2proc", [records = r.records](
                                                                     benchmark::State& s) {
    with_round_trip(s, [&] { etwh_bench::raw_ring_timestamped(s, *records); });
  })->UseRealTime();
  // One TSC reading per item into four rings: the floor of BM_EventWrite_FourSessions_32B (four
  // hand-offs to consumers on another core) against the single timestamped ring above.
  benchmark::RegisterBenchmark("RawRing_32B_timestamped/4rings_5proc", [four = r.four](
                                                                           benchmark::State& s) {
    with_round_trip(s, [&] { etwh_bench::raw_rings_timestamped(s, four, kRings); });
  })->UseRealTime();
  // The same with record-sized items: what BM_EventWrite_FourSessions_32B moves (four records of
  // 112 bytes), against RawRing_112B_timestamped/2proc.
  benchmark::RegisterBenchmark("RawRing_112B_timestamped/4rings_5proc", [four_records =
                                                                             r.four_records](
                                                                            benchmark::State& s) {
    with_round_trip(s, [&] { etwh_bench::raw_rings_timestamped(s, four_records, kRings); });
  })->UseRealTime();
  // One record-sized item per event in one ring that four consumers read: what the four
  // sessions would cost if they shared their buffers, against RawRing_112B_timestamped/2proc.
  benchmark::RegisterBenchmark(
      "RawRing_112B_timestamped/1ring_4readers_5proc",
      [shared_records = r.shared_records](benchmark::State& s) {
        with_round_trip(s, [&] { etwh_bench::shared_ring_timestamped(s, *shared_records); });
      })
      ->UseRealTime();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], kConsumerFlag) == 0) return consumer_main(argv[2]);

  // The rings' consumers are forked before any thread or etwrt connection exists: the raw
  // ring, a ring of record-sized items (what EventWrite of 32 bytes stores), four more of
  // each size (the floors of one event to four sessions), and one ring of record-sized items
  // that four consumers read (the floor of buffers shared among the four sessions).
  std::vector<std::unique_ptr<etwh_bench::Consumer>> consumers;
  Rings rings;
  try {
    rings.ring = etwh_bench::rings_with_consumers<etwh_bench::RawRing>(1, consumers);
    rings.records = etwh_bench::rings_with_consumers<etwh_bench::RecordRing>(1, consumers);
    rings.four = etwh_bench::rings_with_consumers<etwh_bench::RawRing>(kRings, consumers);
    rings.four_records =
        etwh_bench::rings_with_consumers<etwh_bench::RecordRing>(kRings, consumers);
    rings.shared_records =
        etwh_bench::shared_ring_with_consumers<etwh_bench::SharedRecordRing4>(kRings, consumers);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "etwh_bench_event_path: %s\n", e.what());
    return 2;
  }
  benchmark::RegisterBenchmark("LTTngUST_Tracepoint_32B", BM_LTTngUST_Tracepoint_32B);
  benchmark::RegisterBenchmark("LTTngUST_Tracepoint_32B/file_session",
                               BM_LTTngUST_Tracepoint_32B_FileSession);
  register_ring_benchmarks(rings);
  benchmark::RegisterBenchmark("EndToEnd_Win32_32B/1provider_1consumer/2proc",
                               BM_EndToEnd_Win32_1Provider_1RealtimeConsumer_32B)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("FutexWake_CrossProcess", BM_FutexWake, etwh::WakePlacement::kAnyCpu)
      ->Iterations(1);
  benchmark::RegisterBenchmark("FutexWake_SameCpu", BM_FutexWake, etwh::WakePlacement::kSameCpu)
      ->Iterations(1);
  benchmark::RegisterBenchmark("FutexWake_OtherCpu", BM_FutexWake, etwh::WakePlacement::kOtherCpu)
      ->Iterations(1);
  const int status = etwh_bench::run_in_runtime("etwh_bench_event_path", argc, argv, [&] {
    e2e().stop();
    lttng().stop();
    consumers.clear();
  });
  if (status != 0) return status;
  lttng().remove_shm();
  return 0;
}
