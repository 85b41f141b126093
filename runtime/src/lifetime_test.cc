// libetwrt when its broker dies: a consumer in ProcessTrace returns after delivering what the
// session had, writers never block. Each test has its own ETWRT_HOME and broker.
#include "test_properties.h"
#include "test_broker_home.h"
#include "test_consumer.h"
#include "wire.h"

#include <windows.h>
#include <evntcons.h>
#include <evntprov.h>
#include <evntrace.h>

#include <gtest/gtest.h>

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;

const GUID kProvider = {
    0x5b1e6c33, 0x1d2f, 0x4a60, {0x8b, 0x31, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99}};

using Properties = etwrt::testing::TraceProperties;

pid_t broker_pid(const std::string& home) {
  std::ifstream in(home + "/broker.pid");
  pid_t pid = 0;
  in >> pid;
  return pid;
}

ULONG write_indexed(REGHANDLE h, std::uint32_t index) {
  EVENT_DESCRIPTOR d;
  EventDescCreate(&d, 7, 0, 0, 4, 0, 0, 0);
  EVENT_DATA_DESCRIPTOR data;
  EventDataDescCreate(&data, &index, sizeof index);
  return EventWrite(h, &d, 1, &data);
}

// OpenTraceA + ProcessTrace on a thread of its own; keeps the indices kProvider's events carry.
// Heap-allocated and leaked when ProcessTrace never returns (the test fails instead of hanging).
class Consumer {
 public:
  explicit Consumer(const std::string& session) : name_(session) {
    handle_ = etwrt::testing::open_realtime(logfile_, name_, &Consumer::on_event, this);
  }
  bool opened() const { return handle_ != INVALID_PROCESSTRACE_HANDLE; }
  void start() {
    std::thread([this] {
      const ULONG status = ProcessTrace(&handle_, 1, nullptr, nullptr);
      done_.set_value(status);
    }).detach();
  }
  bool wait_for_header() {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 20s, [&] { return header_; });
  }
  // ProcessTrace's status, or nullopt when it did not return within `limit`.
  std::optional<ULONG> join(std::chrono::milliseconds limit) {
    auto future = done_.get_future();
    if (future.wait_for(limit) != std::future_status::ready) return std::nullopt;
    CloseTrace(handle_);
    return future.get();
  }
  std::vector<std::uint32_t> indices() {
    std::lock_guard lock(mu_);
    return indices_;
  }

 private:
  static void WINAPI on_event(PEVENT_RECORD r) {
    auto* self = static_cast<Consumer*>(r->UserContext);
    std::lock_guard lock(self->mu_);
    if (r->EventHeader.ProviderId == EventTraceGuid) self->header_ = true;
    if (r->EventHeader.ProviderId == kProvider && r->UserDataLength == sizeof(std::uint32_t)) {
      std::uint32_t i;
      std::memcpy(&i, r->UserData, sizeof i);
      self->indices_.push_back(i);
    }
    self->cv_.notify_all();
  }

  std::string name_;
  EVENT_TRACE_LOGFILEA logfile_{};
  TRACEHANDLE handle_ = INVALID_PROCESSTRACE_HANDLE;
  std::promise<ULONG> done_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool header_ = false;
  std::vector<std::uint32_t> indices_;
};

std::vector<std::uint32_t> iota(std::uint32_t n) {
  std::vector<std::uint32_t> v(n);
  for (std::uint32_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

class EtwrtBrokerDeath : public ::testing::Test {
 protected:
  etwrt::testing::PrivateBrokerHome home_{"etwrt-lifetime-test"};

  // A session enabling kProvider, a registration of it and a consumer in ProcessTrace that
  // saw its header event; then `count` events written (not waited for).
  Consumer* start_and_write(const std::string& name, REGHANDLE& h, std::uint32_t count) {
    Properties p;
    TRACEHANDLE session = 0;
    EXPECT_EQ(StartTraceA(&session, name.c_str(), p.get()), ERROR_SUCCESS);
    EXPECT_EQ(EventRegister(&kProvider, nullptr, nullptr, &h), ERROR_SUCCESS);
    EXPECT_EQ(EnableTraceEx2(session, &kProvider, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 5, 0, 0,
                             10000, nullptr),
              ERROR_SUCCESS);
    auto* consumer = new Consumer(name);
    EXPECT_TRUE(consumer->opened());
    consumer->start();
    EXPECT_TRUE(consumer->wait_for_header());
    for (std::uint32_t i = 0; i < count; ++i) EXPECT_EQ(write_indexed(h, i), ERROR_SUCCESS);
    return consumer;
  }

  // A consumer of a session with 300 events, the broker then sent `signal`: ProcessTrace
  // returns `expected`, after delivering what the session had.
  void expect_process_trace_returns(const std::string& name, int signal, ULONG expected) {
    REGHANDLE h = 0;
    Consumer* consumer = start_and_write(name, h, 300);
    kill_broker(signal);
    const std::optional<ULONG> status = consumer->join(10s);
    ASSERT_TRUE(status.has_value())
        << "ProcessTrace did not return after signal " << signal << " to the broker";
    EXPECT_EQ(*status, expected);
    EXPECT_EQ(consumer->indices(), iota(300)) << "what the session had is delivered first";
    EventUnregister(h);
    delete consumer;
  }

  // Kills the broker and waits until it is gone (it is nobody's child here: a zombie counts).
  void kill_broker(int signal) {
    const pid_t pid = broker_pid(home_.home());
    ASSERT_GT(pid, 0);
    ASSERT_EQ(::kill(pid, signal), 0);
    for (int i = 0; i < 500 && ::kill(pid, 0) == 0 && !zombie(pid); ++i) {
      std::this_thread::sleep_for(10ms);
    }
  }

  static bool zombie(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string a, b, state;
    return !(stat >> a >> b >> state) || state == "Z";
  }
};

TEST_F(EtwrtBrokerDeath, ProcessTraceReturnsWhenTheBrokerIsKilled) {
  expect_process_trace_returns("death-kill", SIGKILL, ERROR_WMI_INSTANCE_NOT_FOUND);
}

TEST_F(EtwrtBrokerDeath, ProcessTraceReturnsWhenTheBrokerIsTerminated) {
  // A terminated broker stops its sessions: ProcessTrace ends as after ControlTrace(STOP).
  expect_process_trace_returns("death-term", SIGTERM, ERROR_SUCCESS);
}

TEST_F(EtwrtBrokerDeath, WritersDoNotBlockWhenTheBrokerIsGone) {
  REGHANDLE h = 0;
  Consumer* consumer = start_and_write("death-writers", h, 0);
  std::atomic<bool> stop{false};
  std::atomic<std::int64_t> slowest_us{0};
  std::atomic<std::uint64_t> writes{0};
  std::atomic<ULONG> unexpected{ERROR_SUCCESS};
  std::thread writer([&] {
    for (std::uint32_t i = 0; !stop.load(); ++i) {
      const auto before = std::chrono::steady_clock::now();
      const ULONG status = write_indexed(h, i);
      const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                          std::chrono::steady_clock::now() - before)
                          .count();
      if (us > slowest_us.load()) slowest_us.store(us);
      if (status != ERROR_SUCCESS && status != ERROR_NOT_ENOUGH_MEMORY) unexpected.store(status);
      writes.fetch_add(1);
    }
  });
  std::this_thread::sleep_for(200ms);
  kill_broker(SIGKILL);
  const std::uint64_t at_kill = writes.load();
  std::this_thread::sleep_for(1s);
  stop.store(true);
  writer.join();
  EXPECT_GT(writes.load(), at_kill + 1000) << "the writer kept writing after the broker died";
  EXPECT_LT(slowest_us.load(), 500'000) << "one EventWrite took " << slowest_us.load() << " us";
  EXPECT_EQ(unexpected.load(), ULONG{ERROR_SUCCESS});
  EXPECT_TRUE(consumer->join(10s).has_value());
  EventUnregister(h);
  delete consumer;
}

// The home: opened without following links, refused (not repaired) when others can reach it,
// and only this user's broker is talked to.
class EtwrtHome : public ::testing::Test {
 protected:
  etwrt::testing::PrivateBrokerHome home_{"etwrt-home-test"};

  std::string in_home(const char* name) const { return home_.home() + "/" + name; }

  static ULONG start_session(const std::string& name) {
    Properties p;
    TRACEHANDLE session = 0;
    return StartTraceA(&session, name.c_str(), p.get());
  }

  static ULONG stop_session(const std::string& name) {
    Properties p;
    return ControlTraceA(0, name.c_str(), p.get(), EVENT_TRACE_CONTROL_STOP);
  }

  // Runs etwrt-broker on the home directly; its exit code (-1 if it did not end within 10 s).
  int run_broker() const {
    const pid_t child = ::fork();
    if (child == 0) {
      ::execl(ETWRT_BROKER_PATH, ETWRT_BROKER_PATH, "--home", home_.home().c_str(), nullptr);
      ::_exit(127);
    }
    for (int i = 0; i < 1000; ++i) {
      int status = 0;
      if (::waitpid(child, &status, WNOHANG) == child) {
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      std::this_thread::sleep_for(10ms);
    }
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    return -1;
  }
};

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST_F(EtwrtHome, PlantedLinksAreNotFollowed) {
  ASSERT_EQ(::mkdir(home_.home().c_str(), 0700), 0);
  const std::string victim = home_.dir() + "/victim";
  const std::string lock_target = home_.dir() + "/lock-target";
  std::ofstream(victim) << "precious\n";
  ASSERT_EQ(::symlink(victim.c_str(), in_home("broker.pid").c_str()), 0);
  ASSERT_EQ(::symlink(victim.c_str(), in_home("broker.log").c_str()), 0);
  ASSERT_EQ(::symlink(lock_target.c_str(), in_home("broker.lock").c_str()), 0);
  EXPECT_EQ(start_session("planted"), ULONG{ERROR_ACCESS_DENIED});
  EXPECT_EQ(run_broker(), 1) << "the broker refuses the home too";
  EXPECT_EQ(read_all(victim), "precious\n") << "the link's target was written to";
  EXPECT_FALSE(std::filesystem::exists(lock_target)) << "a file was created through a link";
  EXPECT_TRUE(std::filesystem::is_symlink(in_home("broker.pid")));
  EXPECT_FALSE(std::filesystem::exists(in_home("broker.sock")));
}

TEST_F(EtwrtHome, HomeThatOthersCanReachIsRefusedNotRepaired) {
  ASSERT_EQ(::mkdir(home_.home().c_str(), 0700), 0);
  ASSERT_EQ(::chmod(home_.home().c_str(), 0777), 0);
  EXPECT_EQ(start_session("open-home"), ULONG{ERROR_ACCESS_DENIED});
  EXPECT_EQ(run_broker(), 1);
  struct stat st {};
  ASSERT_EQ(::stat(home_.home().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0777u) << "left as it was, for its owner to judge";
  EXPECT_FALSE(std::filesystem::exists(in_home("broker.sock")));
}

TEST_F(EtwrtHome, PidFileIsPrivate) {
  ASSERT_EQ(start_session("pid-mode"), ULONG{ERROR_SUCCESS});
  struct stat st {};
  ASSERT_EQ(::stat(in_home("broker.pid").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(home_.home().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_EQ(stop_session("pid-mode"), ULONG{ERROR_SUCCESS});
}

constexpr uid_t kNobody = 65534;

TEST_F(EtwrtHome, AnotherUsersHomeIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to make a directory of another user";
  ASSERT_EQ(::mkdir(home_.home().c_str(), 0700), 0);
  ASSERT_EQ(::chown(home_.home().c_str(), kNobody, kNobody), 0);
  EXPECT_EQ(start_session("taken-home"), ULONG{ERROR_ACCESS_DENIED});
  EXPECT_EQ(run_broker(), 1);
  struct stat st {};
  ASSERT_EQ(::stat(home_.home().c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, kNobody);
  EXPECT_FALSE(std::filesystem::exists(in_home("broker.sock")));
}

TEST_F(EtwrtHome, AnotherUsersListenerIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to listen as another user (setuid)";
  ASSERT_EQ(::mkdir(home_.home().c_str(), 0700), 0);
  int ready[2], result[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(result), 0);
  const std::string path = in_home("broker.sock");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Bound as root (the socket file passes every check of the file), listening as nobody:
    // only the peer's credentials tell the client it is not its broker.
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) ::_exit(2);
    if (::setgid(kNobody) != 0 || ::setuid(kNobody) != 0 || ::listen(fd, 4) != 0) ::_exit(3);
    if (::write(ready[1], "r", 1) != 1) ::_exit(4);
    long received = 0;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 5000) == 1) {
      const int peer = ::accept(fd, nullptr, nullptr);
      pollfd q{peer, POLLIN, 0};
      char buffer[4096];
      while (::poll(&q, 1, 1000) == 1) {
        const ssize_t n = ::read(peer, buffer, sizeof buffer);
        if (n <= 0) break;
        received += n;
      }
    }
    if (::write(result[1], &received, sizeof received) != sizeof received) ::_exit(5);
    ::_exit(0);
  }
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  const auto before = std::chrono::steady_clock::now();
  EXPECT_EQ(start_session("foreign-listener"), ULONG{ERROR_ACCESS_DENIED});
  EXPECT_LT(std::chrono::steady_clock::now() - before, 3s) << "refused at once, not retried";
  long received = -1;
  ASSERT_EQ(::read(result[0], &received, sizeof received), static_cast<ssize_t>(sizeof received));
  EXPECT_EQ(received, 0) << "the request went to another user's listener";
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  for (int fd : {ready[0], ready[1], result[0], result[1]}) ::close(fd);
}

// ETWRT_BROKER_OWNER_PID: a broker of a throwaway home ends with the process that made it.
class EtwrtOwner : public EtwrtBrokerDeath {
 protected:
  void TearDown() override { ::unsetenv("ETWRT_BROKER_OWNER_PID"); }

  static bool ended_within(pid_t pid, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      if (::kill(pid, 0) != 0 || zombie(pid)) return true;
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }
};

TEST_F(EtwrtOwner, BrokerStopsItsSessionsAndExitsWhenItsOwnerEnds) {
  const pid_t owner = ::fork();
  ASSERT_GE(owner, 0);
  if (owner == 0) {
    ::pause();
    ::_exit(0);
  }
  ::setenv("ETWRT_BROKER_OWNER_PID", std::to_string(owner).c_str(), 1);
  REGHANDLE h = 0;
  Consumer* consumer = start_and_write("owned", h, 50);
  const pid_t broker = broker_pid(home_.home());
  ASSERT_GT(broker, 0);
  // The broker has its owner; brokers started later (the provider's reconnection) have none.
  ::unsetenv("ETWRT_BROKER_OWNER_PID");
  std::this_thread::sleep_for(300ms);
  EXPECT_FALSE(ended_within(broker, 0ms)) << "the broker ended while its owner lived";
  ::kill(owner, SIGKILL);
  ::waitpid(owner, nullptr, 0);
  EXPECT_TRUE(ended_within(broker, 1500ms)) << "the broker outlived its owner";
  const std::optional<ULONG> status = consumer->join(5s);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(*status, ULONG{ERROR_SUCCESS}) << "the session was stopped, as by ControlTrace";
  EXPECT_EQ(consumer->indices(), iota(50));
  EventUnregister(h);
  delete consumer;
  // The session is gone: a new broker does not know it.
  Properties p;
  EXPECT_EQ(ControlTraceA(0, "owned", p.get(), EVENT_TRACE_CONTROL_QUERY),
            ULONG{ERROR_WMI_INSTANCE_NOT_FOUND});
}

TEST_F(EtwrtOwner, BadOwnerPidIsRefused) {
  ::setenv("ETWRT_BROKER_OWNER_PID", "12abc", 1);
  ASSERT_EQ(::mkdir(home_.home().c_str(), 0700), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    ::execl(ETWRT_BROKER_PATH, ETWRT_BROKER_PATH, "--home", home_.home().c_str(), nullptr);
    ::_exit(127);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
  EXPECT_FALSE(std::filesystem::exists(home_.home() + "/broker.sock"));
}

// Sizes are bounded: a session's pool, a frame.
class EtwrtBounds : public ::testing::Test {
 protected:
  etwrt::testing::PrivateBrokerHome home_{"etwrt-bounds-test"};
};

TEST_F(EtwrtBounds, AbsurdBufferSettingsGetABoundedPool) {
  Properties p;
  p.get()->BufferSize = 16 * 1024;  // 16 MB ...
  p.get()->MaximumBuffers = 65536;  // ... x 65536 = 1 TiB asked.
  TRACEHANDLE session = 0;
  ASSERT_EQ(StartTraceA(&session, "huge-pool", p.get()), ULONG{ERROR_SUCCESS});
  const auto pool_bytes = [](EVENT_TRACE_PROPERTIES* q) {
    return std::uint64_t{q->BufferSize} * 1024 * q->MaximumBuffers;
  };
  EXPECT_LE(pool_bytes(p.get()), std::uint64_t{1} << 30) << "StartTraceA's properties";
  EXPECT_LE(p.get()->MinimumBuffers, p.get()->MaximumBuffers);
  Properties q;
  ASSERT_EQ(ControlTraceA(session, nullptr, q.get(), EVENT_TRACE_CONTROL_QUERY), ERROR_SUCCESS);
  EXPECT_LE(pool_bytes(q.get()), std::uint64_t{1} << 30) << "QUERY's properties";
  Properties u;
  u.get()->MaximumBuffers = 65536;
  ASSERT_EQ(ControlTraceA(session, nullptr, u.get(), EVENT_TRACE_CONTROL_UPDATE), ERROR_SUCCESS);
  EXPECT_LE(pool_bytes(u.get()), std::uint64_t{1} << 30) << "UPDATE's properties";
  EXPECT_EQ(ControlTraceA(session, nullptr, q.get(), EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
}

TEST(EtwrtBoundsFrames, FramesOverTheLimitAreRefused) {
  const auto header = [](std::uint32_t n) {
    std::string h(4, '\0');
    for (int i = 0; i < 4; ++i) h[i] = static_cast<char>((n >> (8 * i)) & 0xff);
    return h;
  };
  bool corrupt = false;
  etwrt::FrameReader at_limit;
  const std::string h1 = header(etwrt::kMaxFrameBytes);
  at_limit.append(h1.data(), h1.size());
  EXPECT_FALSE(at_limit.next(corrupt).has_value());
  EXPECT_FALSE(corrupt) << "a frame of exactly the limit waits for its bytes";
  etwrt::FrameReader over;
  const std::string h2 = header(etwrt::kMaxFrameBytes + 1);
  over.append(h2.data(), h2.size());
  EXPECT_FALSE(over.next(corrupt).has_value());
  EXPECT_TRUE(corrupt) << "a longer one is refused before its bytes are read";
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
  EXPECT_FALSE(etwrt::send_frame_body(pair[0], std::string(etwrt::kMaxFrameBytes + 1, ' ')));
  ::close(pair[0]);
  ::close(pair[1]);
}

}  // namespace
