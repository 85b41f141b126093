// etwrt control plane, measured through the Win32 API: EventProviderEnabled with no session
// and with one enabling session (the cost every event site pays), the round trip of
// EnableTraceEx2 with a Timeout to the provider's callback having completed, and EventWrite
// of a 32-byte payload with no session, one and four realtime sessions (each drained by a
// ProcessTrace thread of this process; "refused" counts events the sessions had no buffer for).
// On etwrt it runs against its own broker in a fresh ETWRT_HOME, stopped at the end; on
// Windows against the system's ETW (StartTrace needs an administrator or Performance Log Users).
#include <windows.h>
#include <evntprov.h>
#include <evntrace.h>
#include <evntcons.h>

#include <benchmark/benchmark.h>

#include "runtime_world.h"

#ifndef _WIN32
#include "empty_write.h"

#include <sched.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace {

const GUID kIdle = {0x6f1e2d3c, 0x4b5a, 0x4968, {0x87, 0x76, 0x65, 0x54, 0x43, 0x32, 0x21, 0x10}};
const GUID kBusy = {0x7a2b3c4d, 0x5e6f, 0x4071, {0x82, 0x93, 0xa4, 0xb5, 0xc6, 0xd7, 0xe8, 0xf9}};
const GUID kRoundTrip = {
    0x8b3c4d5e, 0x6f70, 0x4182, {0x93, 0xa4, 0xb5, 0xc6, 0xd7, 0xe8, 0xf9, 0x0a}};

std::atomic<std::uint64_t> g_callbacks{0};

void NTAPI count_callback(LPCGUID, ULONG, UCHAR, ULONGLONG, ULONGLONG, PEVENT_FILTER_DESCRIPTOR,
                          PVOID) {
  g_callbacks.fetch_add(1, std::memory_order_relaxed);
}

// What the benchmarks share; torn down by main after the run.
struct World {
  std::vector<REGHANDLE> providers;
  std::vector<TRACEHANDLE> sessions;
  std::vector<std::thread> consumers;  // ProcessTrace threads; end when their session stops.
};
World& world() {
  static World w;
  return w;
}

REGHANDLE register_provider(const GUID& guid) {
  REGHANDLE h = 0;
  if (EventRegister(&guid, count_callback, nullptr, &h) != ERROR_SUCCESS) return 0;
  world().providers.push_back(h);
  return h;
}

TRACEHANDLE start_session(const char* name) {
  etwh_bench::SessionProperties p;
  TRACEHANDLE h = 0;
  if (StartTraceA(&h, name, p.get()) != ERROR_SUCCESS) return 0;
  world().sessions.push_back(h);
  return h;
}

const GUID kWrite0 = {0x9c4d5e6f, 0x7081, 0x4293, {0xa4, 0xb5, 0xc6, 0xd7, 0xe8, 0xf9, 0x0a, 0x1b}};
const GUID kWrite1 = {0xad5e6f70, 0x8192, 0x43a4, {0xb5, 0xc6, 0xd7, 0xe8, 0xf9, 0x0a, 0x1b, 0x2c}};
const GUID kWrite4 = {0xbe6f7081, 0x92a3, 0x44b5, {0xc6, 0xd7, 0xe8, 0xf9, 0x0a, 0x1b, 0x2c, 0x3d}};

// Events delivered, a counter per consumer on a cache line of its own: one counter that four
// consumer threads all add to would bounce between the CPUs on every event and charge the
// consumers (and the writer sharing their CPUs) for the benchmark's own bookkeeping.
struct alignas(64) Delivered {
  std::atomic<std::uint64_t> count{0};
};
std::vector<std::unique_ptr<Delivered>> g_delivered;  // One per consume(); lives to exit.

std::uint64_t consumed_so_far() {
  std::uint64_t total = 0;
  for (const auto& d : g_delivered) total += d->count.load(std::memory_order_relaxed);
  return total;
}

void WINAPI count_record(PEVENT_RECORD record) {
  auto* delivered = static_cast<Delivered*>(record->UserContext);
  // Only its own thread adds: a load and a store, no locked instruction.
  delivered->count.store(delivered->count.load(std::memory_order_relaxed) + 1,
                         std::memory_order_relaxed);
}

// A realtime consumer of `name` on its own thread (ProcessTrace until the session stops).
bool consume(const char* name) {
  auto* logfile = new EVENT_TRACE_LOGFILEA{};  // Lives until the process exits.
  logfile->LoggerName = const_cast<LPSTR>(name);
  logfile->ProcessTraceMode = PROCESS_TRACE_MODE_REAL_TIME | PROCESS_TRACE_MODE_EVENT_RECORD;
  logfile->EventRecordCallback = count_record;
  logfile->Context = g_delivered.emplace_back(std::make_unique<Delivered>()).get();
  TRACEHANDLE t = OpenTraceA(logfile);
  if (t == INVALID_PROCESSTRACE_HANDLE) return false;
  world().consumers.emplace_back([t]() mutable {
    ProcessTrace(&t, 1, nullptr, nullptr);
    CloseTrace(t);
  });
  return true;
}

// A provider enabled by `sessions` realtime sessions, each with a consumer.
REGHANDLE writer_setup(const GUID& guid, int sessions, const char* prefix) {
  const REGHANDLE r = register_provider(guid);
  if (r == 0) return 0;
  for (int i = 0; i < sessions; ++i) {
    static std::vector<std::string> names;  // OpenTraceA keeps the pointer.
    names.push_back(std::string(prefix) + std::to_string(i));
    const char* name = names.back().c_str();
    const TRACEHANDLE s = start_session(name);
    if (s == 0 ||
        EnableTraceEx2(s, &guid, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 5, 0, 0, 10000, nullptr) !=
            ERROR_SUCCESS ||
        !consume(name)) {
      return 0;
    }
  }
  return r;
}

// The CPU time of the whole process (the writer and the consumers' threads), in ns.
double process_cpu_ns() {
#ifdef _WIN32
  FILETIME created, exited, kernel, user;
  if (!GetProcessTimes(GetCurrentProcess(), &created, &exited, &kernel, &user)) return 0;
  auto ticks = [](const FILETIME& t) {
    return static_cast<double>((static_cast<ULONGLONG>(t.dwHighDateTime) << 32) | t.dwLowDateTime);
  };
  return (ticks(kernel) + ticks(user)) * 100.0;
#else
  timespec t{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
#endif
}

// How many CPUs this process may run on.
double usable_cpus() {
#ifndef _WIN32
  cpu_set_t set;
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
#endif
  return std::thread::hardware_concurrency();
}

// The two CPUs the round trip below bounces a cache line between: the first two this process
// may run on (none when it has one).
bool two_cpus(int& a, int& b) {
  a = b = -1;
#ifdef _WIN32
  DWORD_PTR process = 0, system = 0;
  if (!GetProcessAffinityMask(GetCurrentProcess(), &process, &system)) return false;
  for (int i = 0; i < static_cast<int>(8 * sizeof process) && b < 0; ++i) {
    if ((process >> i) & 1) (a < 0 ? a : b) = i;
  }
#else
  cpu_set_t set;
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return false;
  for (int i = 0; i < CPU_SETSIZE && b < 0; ++i) {
    if (CPU_ISSET(i, &set)) (a < 0 ? a : b) = i;
  }
#endif
  return b >= 0;
}

bool pin_to(int cpu) {
#ifdef _WIN32
  return SetThreadAffinityMask(GetCurrentThread(), DWORD_PTR{1} << cpu) != 0;
#else
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return ::pthread_setaffinity_np(::pthread_self(), sizeof set, &set) == 0;
#endif
}

}  // namespace

// On a virtual machine it moves with where the host runs the two vCPUs (bench/README.md: the
// four-session slow mode came with a round trip of 400 ns instead of 100).
double etwh_bench::cpu_round_trip_ns(int round_trips) {
  int a = 0, b = 0;
  if (!two_cpus(a, b)) return 0;
  alignas(64) static std::atomic<std::int64_t> line{0};
  line.store(0);
  std::atomic<bool> pinned_ok{true};
  std::thread pong([&] {
    if (!pin_to(b)) pinned_ok = false;
    for (std::int64_t i = 1; i < 2 * round_trips; i += 2) {
      while (line.load(std::memory_order_acquire) != i) {
        if (!pinned_ok.load(std::memory_order_relaxed)) return;
      }
      line.store(i + 1, std::memory_order_release);
    }
  });
  double ns = 0;
  std::thread ping([&] {
    if (!pin_to(a)) pinned_ok = false;
    if (!pinned_ok) return;
    const auto start = std::chrono::steady_clock::now();
    for (std::int64_t i = 0; i < 2 * round_trips; i += 2) {
      line.store(i + 1, std::memory_order_release);
      while (line.load(std::memory_order_acquire) != i + 2) {
        if (!pinned_ok.load(std::memory_order_relaxed)) return;
      }
    }
    ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() /
        round_trips;
  });
  ping.join();
  pong.join();
  return pinned_ok ? ns : 0;
}

namespace {

// EventWrite of a 32-byte event through `h`, timed; skipped when its setup failed (h is 0).
void write_loop(benchmark::State& state, REGHANDLE h) {
  if (h == 0) {
    state.SkipWithError("setup failed (EventRegister, or the sessions)");
    return;
  }
  EVENT_DESCRIPTOR d;
  EventDescCreate(&d, 1, 0, 0, 4, 0, 0, 0x1);
  unsigned char payload[32] = {};
  EVENT_DATA_DESCRIPTOR data;
  EventDataDescCreate(&data, payload, sizeof payload);
  std::uint64_t refused = 0;
  const std::uint64_t consumed = consumed_so_far();
  const double round_trip_before = etwh_bench::cpu_round_trip_ns();
  const double cpu_before = process_cpu_ns();
  for (auto _ : state) {
    if (EventWrite(h, &d, 1, &data) != ERROR_SUCCESS) ++refused;
  }
  // The wall time's floor when the consumers run on the writer's CPUs: the process's CPU time
  // per event (writer and consumers) spread over the CPUs it may use (bench/README.md).
  const double writes = std::max<double>(1, static_cast<double>(state.iterations()));
  state.counters["process_cpu_ns_per_write"] = (process_cpu_ns() - cpu_before) / writes;
  state.counters["cpus"] = usable_cpus();
  // The lower of the two: after the loop the consumers, still draining, share the CPUs.
  state.counters["cpu_round_trip_ns"] =
      std::min(round_trip_before, etwh_bench::cpu_round_trip_ns());
  state.counters["refused"] = static_cast<double>(refused);
  // Delivered to the consumers meanwhile (all sessions together; the rest is lost or late).
  state.counters["consumed"] = static_cast<double>(consumed_so_far() - consumed);
  state.counters["writes"] = static_cast<double>(state.iterations());
}

void BM_EventWrite_NoSession(benchmark::State& state) {
  static const REGHANDLE h = register_provider(kWrite0);
  write_loop(state, h);
}
BENCHMARK(BM_EventWrite_NoSession);

void BM_EventWrite_OneSession_32B(benchmark::State& state) {
  static const REGHANDLE h = writer_setup(kWrite1, 1, "etwh-bench-write1-");
  write_loop(state, h);
}
BENCHMARK(BM_EventWrite_OneSession_32B);

void BM_EventWrite_FourSessions_32B(benchmark::State& state) {
  static const REGHANDLE h = writer_setup(kWrite4, 4, "etwh-bench-write4-");
  write_loop(state, h);
}
BENCHMARK(BM_EventWrite_FourSessions_32B);

const GUID kWriteFile = {
    0xcf708192, 0xa3b4, 0x45c6, {0xd7, 0xe8, 0xf9, 0x0a, 0x1b, 0x2c, 0x3d, 0x4e}};
const GUID kWriteCompressedFile = {
    0xcf708193, 0xa3b4, 0x45c6, {0xd7, 0xe8, 0xf9, 0x0a, 0x1b, 0x2c, 0x3d, 0x4e}};
std::vector<std::string> g_trace_files;  // the file sessions' .etl, removed by runtime_end

// A file session with its provider: the handles the benchmark writes and queries, its file.
struct FileSession {
  REGHANDLE provider = 0;
  TRACEHANDLE session = 0;
  std::string file;
};

// A provider enabled by one file session and no consumer: the session's logger (etwrt: a
// thread of the broker) writes its buffers to the file. Sequential, like LTTng's file session
// beside it (discard mode, every event it keeps reaches the disk), so that EventsLost counts
// only what the logger did not write (a circular file would count its overwritten buffers
// too). Each run of the loop gets a fresh session and file (the one before stopped and
// removed), so that repetitions never meet the file's 4 GB maximum and the disk taken stays
// one run's. `extra_mode`: EVENT_TRACE_COMPRESSED_MODE or 0. False when a call failed.
bool start_file_session(FileSession& f, const GUID& guid, const char* name, ULONG extra_mode) {
  if (f.provider == 0) f.provider = register_provider(guid);
  if (f.provider == 0) return false;
  if (f.session != 0) {
    etwh_bench::SessionProperties stop;
    ControlTraceA(f.session, nullptr, stop.get(), EVENT_TRACE_CONTROL_STOP);
    f.session = 0;
    std::error_code ignored;
    std::filesystem::remove(f.file, ignored);
  }
  f.file = (std::filesystem::temp_directory_path() /
            ("etwh-bench-" +
             std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + ".etl"))
               .string();
  g_trace_files.push_back(f.file);
  std::vector<char> bytes(sizeof(EVENT_TRACE_PROPERTIES) + 1024);
  auto* p = reinterpret_cast<EVENT_TRACE_PROPERTIES*>(bytes.data());
  p->Wnode.BufferSize = static_cast<ULONG>(bytes.size());
  p->LoggerNameOffset = sizeof(EVENT_TRACE_PROPERTIES);
  p->LogFileNameOffset = sizeof(EVENT_TRACE_PROPERTIES) + 256;
  std::snprintf(bytes.data() + p->LogFileNameOffset, 768, "%s", f.file.c_str());
  p->LogFileMode = EVENT_TRACE_FILE_MODE_SEQUENTIAL | extra_mode;
  p->MaximumFileSize = 4096;
  TRACEHANDLE s = 0;
  if (StartTraceA(&s, name, p) != ERROR_SUCCESS) return false;
  world().sessions.push_back(s);  // (stopped at the end; one stopped here already fails then)
  f.session = s;
  return EnableTraceEx2(s, &guid, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 5, 0, 0, 10000, nullptr) ==
         ERROR_SUCCESS;
}

// The file session's EventsLost once its logger has written what it holds (FLUSH, then
// QUERY); -1 when either call fails.
double file_session_lost(TRACEHANDLE session) {
  etwh_bench::SessionProperties p;
  if (ControlTraceA(session, nullptr, p.get(), EVENT_TRACE_CONTROL_FLUSH) != ERROR_SUCCESS ||
      ControlTraceA(session, nullptr, p.get(), EVENT_TRACE_CONTROL_QUERY) != ERROR_SUCCESS) {
    return -1;
  }
  return static_cast<double>(p.get()->EventsLost);
}

// The broker's CPU time so far in ns, all its threads (the logger and its writer among them),
// from /proc/<pid>/task/*/schedstat; -1 where there is no such broker (Windows: the kernel logs).
double broker_cpu_ns() {
#ifndef _WIN32
  const char* home = std::getenv("ETWRT_HOME");
  if (home == nullptr) return -1;
  std::ifstream pid_file(std::string(home) + "/broker.pid");
  long pid = 0;
  if (!(pid_file >> pid) || pid <= 0) return -1;
  std::error_code error;
  double total = 0;
  bool any = false;
  const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& task : std::filesystem::directory_iterator(tasks, error)) {
    std::ifstream stat(task.path() / "schedstat");
    double on_cpu = 0;
    if (stat >> on_cpu) {
      total += on_cpu;
      any = true;
    }
  }
  return any ? total : -1;
#else
  return -1;
#endif
}

// Counters: `recorded` (written and not reported lost: in the file), `lost` (the session's
// EventsLost during the run, the `refused` calls included), and `ns_per_recorded`, the loop's wall
// time per recorded event: a lost call is cheaper than a recorded one, so the per-call time alone
// flatters a logger that falls behind. LTTngUST_Tracepoint_32B/file_session reports the same three.
// The payload's first word counts the calls, as LTTng's row does: a compressed file gets no
// identical records to shrink. `broker_cpu_ns_per_recorded`: the broker's CPU time per recorded
// event, what the logger costs whatever share of a CPU the machine's load left it;
// `cpu_round_trip_ns`, the host's mode (as write_loop's).
void file_write_loop(benchmark::State& state, bool started, const FileSession& f) {
  if (!started) {
    state.SkipWithError("setup failed");
    return;
  }
  const double lost_before = file_session_lost(f.session);
  const double broker_before = broker_cpu_ns();
  const double round_trip_before = etwh_bench::cpu_round_trip_ns();
  EVENT_DESCRIPTOR d;
  EventDescCreate(&d, 1, 0, 0, 4, 0, 0, 0x1);  // As write_loop's.
  std::uint64_t payload[4] = {};
  EVENT_DATA_DESCRIPTOR data;
  EventDataDescCreate(&data, payload, sizeof payload);
  std::uint64_t refused = 0;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    ++payload[0];
    if (EventWrite(f.provider, &d, 1, &data) != ERROR_SUCCESS) ++refused;
  }
  const double loop_ns = static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count());
  const double lost_after = file_session_lost(f.session);
  const double broker_after = broker_cpu_ns();
  if (lost_before < 0 || lost_after < 0) {
    state.SkipWithError("ControlTrace FLUSH/QUERY on the file session failed");
    return;
  }
  const double writes = static_cast<double>(state.iterations());
  // A refused call (the buffers full) is one of the session's lost events too.
  const double lost = lost_after - lost_before;
  const double recorded = writes - lost;
  if (recorded <= 0) {  // ns_per_recorded would read 0, the best figure of all
    state.SkipWithError("nothing recorded: the file is at its 4 GB maximum or the logger stopped");
    return;
  }
  state.counters["writes"] = writes;
  state.counters["refused"] = static_cast<double>(refused);
  state.counters["lost"] = lost;
  state.counters["recorded"] = recorded;
  state.counters["ns_per_recorded"] = recorded > 0 ? loop_ns / recorded : 0;
  if (broker_before >= 0 && broker_after >= broker_before) {
    state.counters["broker_cpu_ns_per_recorded"] = (broker_after - broker_before) / recorded;
  }
  // The logger reads every record a writer on the other CPU wrote: its cost moves with the host's
  // mode, as EventWrite's does.
  state.counters["cpu_round_trip_ns"] =
      std::min(round_trip_before, etwh_bench::cpu_round_trip_ns());
}

void BM_EventWrite_FileSession_32B(benchmark::State& state) {
  static FileSession f;
  const bool started = start_file_session(f, kWriteFile, "etwh-bench-file", 0);
  file_write_loop(state, started, f);
}
BENCHMARK(BM_EventWrite_FileSession_32B);

// The same with EVENT_TRACE_COMPRESSED_MODE: each buffer compressed (MS-XCA plain LZ77) before
// it is written, so that the disk takes several times fewer bytes and the logger's CPU time is
// the limit.
void BM_EventWrite_CompressedFileSession_32B(benchmark::State& state) {
  static FileSession f;
  const bool started = start_file_session(f, kWriteCompressedFile, "etwh-bench-file-compressed",
                                          EVENT_TRACE_COMPRESSED_MODE);
  file_write_loop(state, started, f);
}
BENCHMARK(BM_EventWrite_CompressedFileSession_32B);

// The floor on this machine: an out-of-line call that only returns FALSE, made the way a PLT
// call to libetwrt is (indirect). EventProviderEnabled with no session should be close to it.
BOOLEAN NTAPI return_false(REGHANDLE, UCHAR, ULONGLONG) { return FALSE; }
BOOLEAN(NTAPI* volatile g_return_false)(REGHANDLE, UCHAR, ULONGLONG) = return_false;

void BM_Baseline_IndirectCall(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(g_return_false(1, 4, 0x10));
}
BENCHMARK(BM_Baseline_IndirectCall);

#ifndef _WIN32
// The floor for EventWrite with no session: the same call, arguments and loop as
// BM_EventWrite_NoSession, into a shared library's function that only returns.
void BM_Baseline_SharedLibraryCall(benchmark::State& state) {
  EVENT_DESCRIPTOR d;
  EventDescCreate(&d, 1, 0, 0, 4, 0, 0, 0x1);
  unsigned char payload[32] = {};
  EVENT_DATA_DESCRIPTOR data;
  EventDataDescCreate(&data, payload, sizeof payload);
  const REGHANDLE h = 1;
  std::uint64_t refused = 0;
  for (auto _ : state) {
    if (etwh_bench_empty_write(h, &d, 1, &data) != ERROR_SUCCESS) ++refused;
  }
  state.counters["refused"] = static_cast<double>(refused);
}
BENCHMARK(BM_Baseline_SharedLibraryCall);
#endif

// EventProviderEnabled through `h`, timed; skipped when its setup failed (h is 0).
void enabled_loop(benchmark::State& state, REGHANDLE h) {
  if (h == 0) {
    state.SkipWithError("setup failed (EventRegister, or the session)");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(EventProviderEnabled(h, 4, 0x10));
}

void BM_EventProviderEnabled_NoSession(benchmark::State& state) {
  static const REGHANDLE h = register_provider(kIdle);
  enabled_loop(state, h);
}
BENCHMARK(BM_EventProviderEnabled_NoSession);

void BM_EventProviderEnabled_OneSession(benchmark::State& state) {
  static const REGHANDLE h = [] {
    const REGHANDLE r = register_provider(kBusy);
    const TRACEHANDLE s = start_session("etwh-bench-enabled");
    if (r == 0 || s == 0 ||
        EnableTraceEx2(s, &kBusy, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 5, 0x30, 0x10, 10000,
                       nullptr) != ERROR_SUCCESS) {
      return REGHANDLE{0};
    }
    return r;
  }();
  enabled_loop(state, h);
}
BENCHMARK(BM_EventProviderEnabled_OneSession);

// One iteration = one EnableTraceEx2 (enable, then disable on the next) that returns once the
// same-process provider's callback has completed.
void BM_EnableTraceEx2_RoundTrip(benchmark::State& state) {
  static const TRACEHANDLE s = [] {
    return register_provider(kRoundTrip) == 0 ? TRACEHANDLE{0}
                                              : start_session("etwh-bench-roundtrip");
  }();
  if (s == 0) {
    state.SkipWithError("setup failed");
    return;
  }
  ULONG code = EVENT_CONTROL_CODE_ENABLE_PROVIDER;
  const std::uint64_t before = g_callbacks.load();
  for (auto _ : state) {
    if (EnableTraceEx2(s, &kRoundTrip, code, 4, 0x1, 0, 10000, nullptr) != ERROR_SUCCESS) {
      state.SkipWithError("EnableTraceEx2 failed");
      break;
    }
    code = code == EVENT_CONTROL_CODE_ENABLE_PROVIDER ? EVENT_CONTROL_CODE_DISABLE_PROVIDER
                                                      : EVENT_CONTROL_CODE_ENABLE_PROVIDER;
  }
  if (code == EVENT_CONTROL_CODE_DISABLE_PROVIDER) {
    EnableTraceEx2(s, &kRoundTrip, EVENT_CONTROL_CODE_DISABLE_PROVIDER, 0, 0, 0, 10000, nullptr);
  }
  state.counters["callbacks"] = static_cast<double>(g_callbacks.load() - before);
}
BENCHMARK(BM_EnableTraceEx2_RoundTrip)->UseRealTime();

#ifndef _WIN32
void stop_broker(const std::string& home) {
  std::ifstream in(home + "/broker.pid");
  pid_t pid = 0;
  if (!(in >> pid) || pid <= 0) return;
  ::kill(pid, SIGTERM);
  for (int i = 0; i < 500 && std::filesystem::exists(home + "/broker.sock"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}
#endif

}  // namespace

namespace etwh_bench {

std::string runtime_begin() {
  // Our own broker in a fresh ETWRT_HOME, unless the caller chose one.
  std::string owned_dir;
#ifndef _WIN32
  if (std::getenv("ETWRT_HOME") == nullptr) {
    char pattern[] = "/tmp/etwh-bench-runtime-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
    owned_dir = pattern;
    ::setenv("ETWRT_HOME", (owned_dir + "/home").c_str(), 1);
    // Our broker ends with us, however we end (a benchmark killed mid-run too).
    ::setenv("ETWRT_BROKER_OWNER_PID", std::to_string(::getpid()).c_str(), 1);
  }
#endif
  return owned_dir;
}

void runtime_end(const std::string& owned_dir) {
  for (TRACEHANDLE s : world().sessions) {
    etwh_bench::SessionProperties p;
    ControlTraceA(s, nullptr, p.get(), EVENT_TRACE_CONTROL_STOP);
  }
  for (std::thread& t : world().consumers) t.join();
  for (REGHANDLE h : world().providers) EventUnregister(h);
  for (const std::string& file : g_trace_files) {
    std::error_code ignored;
    std::filesystem::remove(file, ignored);
  }
#ifndef _WIN32
  if (!owned_dir.empty()) {
    stop_broker(owned_dir + "/home");
    std::error_code ignored;
    std::filesystem::remove_all(owned_dir, ignored);
  }
#else
  (void)owned_dir;
#endif
}

}  // namespace etwh_bench
