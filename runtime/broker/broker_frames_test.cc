// Hostile input to a real broker: frames whose JSON is not a request object, whose op is not a
// string, or whose fields have the wrong type or range. Each gets an error reply with a reason;
// the broker keeps answering on the same connection and every other peer's state survives.
#include "test_properties.h"
#include "test_broker_home.h"
#include "wire.h"

#include <windows.h>
#include <evntprov.h>
#include <evntrace.h>

#include <gtest/gtest.h>

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

const GUID kProvider = {
    0x5f3a9c21, 0x1b2c, 0x4d3e, {0x8f, 0x10, 0x21, 0x32, 0x43, 0x54, 0x65, 0x76}};
const std::string kGuidHex = etwrt::guid_to_wire(kProvider);

// A raw peer of the broker speaking the frame format.
class RawPeer {
 public:
  explicit RawPeer(const std::string& home) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    const std::string path = etwrt::socket_path(home);
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  }
  ~RawPeer() { ::close(fd_); }
  RawPeer(const RawPeer&) = delete;
  RawPeer& operator=(const RawPeer&) = delete;

  bool connected() const { return connected_; }
  bool send(const json& frame) { return etwrt::send_frame(fd_, frame); }
  // A frame whose JSON text is given as is (one nlohmann could not produce: 1e999).
  bool send_text(const std::string& body) { return etwrt::send_frame_body(fd_, body); }

  // The next frame from the broker, or nullopt when the broker closed or 10 s passed.
  std::optional<json> receive() {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    for (;;) {
      bool corrupt = false;
      if (auto frame = reader_.next(corrupt)) return frame;
      if (corrupt || std::chrono::steady_clock::now() > deadline) return std::nullopt;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char buffer[4096];
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) return std::nullopt;
      reader_.append(buffer, static_cast<std::size_t>(n));
    }
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
  etwrt::FrameReader reader_;
};

using Properties = etwrt::testing::TraceProperties;

std::atomic<int> g_level{-1};

void NTAPI record_level(LPCGUID, ULONG is_enabled, UCHAR level, ULONGLONG, ULONGLONG,
                        PEVENT_FILTER_DESCRIPTOR, PVOID) {
  if (is_enabled == 1) g_level = level;
}

// A well-formed enable request, to be spoiled one field at a time.
json enable_request(std::uint64_t handle) {
  return {{"op", "enable"},
          {"id", 1000},
          {"handle", handle},
          {"guid", kGuidHex},
          {"code", 1},
          {"level", 4},
          {"any", 0},
          {"all", 0},
          {"wait", false},
          {"source", nullptr},
          {"property", 0},
          {"provider_filter", nullptr},
          {"system_filters", json::array()}};
}

json with(json request, const std::string& key, json value) {
  request[key] = std::move(value);
  return request;
}

pid_t broker_pid(const std::string& home) {
  std::ifstream in(home + "/broker.pid");
  pid_t pid = 0;
  in >> pid;
  return pid;
}

// Another user's request gets ERROR_ACCESS_DENIED and nothing else, malformed or not: the access
// check comes before the decoding (a malformed one got 87 with the reason).
TEST(EtwrtBrokerFrames, AnotherUsersMalformedRequestIsAccessDeniedWithoutAReason) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to connect as another user";
  etwrt::testing::PrivateBrokerHome home("etwrt-frames-user");
  Properties p;
  TRACEHANDLE session = 0;
  ASSERT_EQ(StartTraceA(&session, "frames-user", p.get()), ERROR_SUCCESS);  // the broker runs
  // Let nobody reach the socket (the broker checked its home when it started).
  const std::string socket = etwrt::socket_path(home.home());
  const std::string parent = home.home().substr(0, home.home().rfind('/'));
  ASSERT_EQ(::chmod(parent.c_str(), 0711), 0);
  ASSERT_EQ(::chmod(home.home().c_str(), 0711), 0);
  ASSERT_EQ(::chmod(socket.c_str(), 0666), 0);
  constexpr uid_t kNobody = 65534;
  const pid_t child = ::fork();
  if (child == 0) {
    if (::setgid(kNobody) != 0 || ::setuid(kNobody) != 0) ::_exit(3);
    RawPeer peer(home.home());
    if (!peer.connected()) ::_exit(4);
    const json frames[] = {json{{"op", "start"}, {"id", 7}, {"name", 5}},
                           json{{"op", 5}, {"id", 8}}, json::array({1, 2}),
                           json{{"op", "hello"}, {"id", 9}}};
    for (const json& frame : frames) {
      if (!peer.send(frame)) ::_exit(5);
      const std::optional<json> reply = peer.receive();
      if (!reply || !reply->is_object() || reply->value("status", 0u) != ERROR_ACCESS_DENIED ||
          reply->contains("reason")) {
        ::_exit(6);
      }
    }
    for (const char* text :
         {R"({"op": "hello", "id": 1e999})", R"({"op": "start", "id": 7, "name": 1e999})"}) {
      if (!peer.send_text(text)) ::_exit(5);
      const std::optional<json> reply = peer.receive();
      if (!reply || !reply->is_object() || reply->value("status", 0u) != ERROR_ACCESS_DENIED ||
          reply->contains("reason")) {
        ::_exit(6);
      }
    }
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ::chmod(home.home().c_str(), 0700);
  ::chmod(parent.c_str(), 0700);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "child status " << status << " (exit 6: a reply other than a bare 5)";
  EXPECT_EQ(ControlTraceA(session, nullptr, p.get(), EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
}

// A request that is JSON but holds a number no double holds (1e999: nlohmann refuses to
// represent it) is answered ERROR_INVALID_PARAMETER with a reason, as any malformed request is;
// the peer stays connected. Its id cannot be read back: the answer's id is null.
TEST(EtwrtBrokerFrames, ANumberOutOfRangeIsInvalidParameterNotADroppedPeer) {
  etwrt::testing::PrivateBrokerHome home("etwrt-frames-1e999");
  Properties p;
  TRACEHANDLE session = 0;
  ASSERT_EQ(StartTraceA(&session, "frames-1e999", p.get()), ERROR_SUCCESS);  // the broker runs
  RawPeer peer(home.home());
  ASSERT_TRUE(peer.connected());
  for (const char* text :
       {R"({"op": "hello", "id": 1e999})", R"({"op": "hello", "id": 1, "x": [-1e400]})",
        R"({"op": "start", "id": 2, "buffer_size": 1e999})"}) {
    SCOPED_TRACE(text);
    ASSERT_TRUE(peer.send_text(text));
    const std::optional<json> reply = peer.receive();
    ASSERT_TRUE(reply.has_value()) << "the broker closed the connection or did not answer";
    ASSERT_TRUE(reply->is_object());
    EXPECT_EQ(reply->value("status", 0u), ERROR_INVALID_PARAMETER);
    EXPECT_NE(reply->value("reason", std::string()).find("out of range"), std::string::npos);
    EXPECT_TRUE(reply->at("id").is_null());
  }
  ASSERT_TRUE(peer.send({{"op", "hello"}, {"id", 99}}));
  const std::optional<json> hello = peer.receive();
  ASSERT_TRUE(hello.has_value());
  EXPECT_EQ(hello->value("status", 87u), ERROR_SUCCESS);
  // Bytes that are not JSON still cost the connection.
  ASSERT_TRUE(peer.send_text(R"({"op": "hello", "id": 3)"));
  EXPECT_FALSE(peer.receive().has_value());
  EXPECT_EQ(ControlTraceA(session, nullptr, p.get(), EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
}

TEST(EtwrtBrokerFrames, MalformedRequestsGetAnErrorAndTheBrokerKeepsServing) {
  etwrt::testing::PrivateBrokerHome home("etwrt-frames-test");
  // Another peer's state: a session and a registration, made through the API.
  Properties p;
  TRACEHANDLE session = 0;
  ASSERT_EQ(StartTraceA(&session, "frames-alive", p.get()), ERROR_SUCCESS);
  REGHANDLE provider = 0;
  ASSERT_EQ(EventRegister(&kProvider, &record_level, nullptr, &provider), ERROR_SUCCESS);
  const pid_t pid = broker_pid(home.home());
  ASSERT_GT(pid, 0);

  RawPeer peer(home.home());
  ASSERT_TRUE(peer.connected());
  const json start = {{"op", "start"},          {"name", "frames-x"},   {"guid", kGuidHex},
                      {"buffer_size", 64},      {"minimum_buffers", 4}, {"maximum_buffers", 30},
                      {"maximum_file_size", 0}, {"log_file_mode", 256}, {"flush_timer", 1}};
  const std::vector<std::pair<json, ULONG>> bad = {
      {json::array({1, 2, 3}), ERROR_INVALID_PARAMETER},
      {json(42), ERROR_INVALID_PARAMETER},
      {json(nullptr), ERROR_INVALID_PARAMETER},
      {json("op"), ERROR_INVALID_PARAMETER},
      {json{{"op", 5}, {"id", 1}}, ERROR_INVALID_PARAMETER},
      {json{{"id", 2}}, ERROR_INVALID_PARAMETER},
      {json{{"op", "frobnicate"}, {"id", 3}}, ERROR_NOT_SUPPORTED},
      {json{{"op", "register"}, {"id", 4}, {"token", "x"}, {"guid", kGuidHex}},
       ERROR_INVALID_PARAMETER},
      {json{{"op", "register"}, {"id", 5}, {"token", 1}, {"guid", 5}}, ERROR_INVALID_PARAMETER},
      {json{{"op", "register"}, {"id", 6}, {"token", 1}, {"guid", "nope"}},
       ERROR_INVALID_PARAMETER},
      {json{{"op", "unregister"}, {"id", 7}, {"token", 1.5}}, ERROR_INVALID_PARAMETER},
      {json{{"op", "set_traits"}, {"id", 8}, {"token", 1}, {"name", json::array()}},
       ERROR_INVALID_PARAMETER},
      {with(start, "name", 7), ERROR_INVALID_PARAMETER},
      {with(start, "buffer_size", -1), ERROR_INVALID_PARAMETER},
      {with(start, "minimum_buffers", 1ull << 40), ERROR_INVALID_PARAMETER},
      {json{{"op", "control"}, {"id", 9}, {"handle", -1}, {"code", 1}}, ERROR_INVALID_PARAMETER},
      {json{{"op", "control"}, {"id", 10}, {"handle", session}}, ERROR_INVALID_PARAMETER},
      {with(enable_request(session), "handle", "1"), ERROR_INVALID_PARAMETER},
      {with(enable_request(session), "level", 300), ERROR_INVALID_PARAMETER},
      {with(enable_request(session), "any", -1), ERROR_INVALID_PARAMETER},
      {with(enable_request(session), "wait", 1), ERROR_INVALID_PARAMETER},
      {with(enable_request(session), "source", 3), ERROR_INVALID_PARAMETER},
      {with(enable_request(session), "provider_filter", "zz"), ERROR_INVALID_PARAMETER},
      {with(enable_request(session), "provider_filter", json{{"type", 1}, {"data", "xyz"}}),
       ERROR_INVALID_PARAMETER},
      {with(enable_request(session), "system_filters", json::object()), ERROR_INVALID_PARAMETER},
      {with(enable_request(session), "system_filters", json::array({json{{"type", "a"}}})),
       ERROR_INVALID_PARAMETER},
      {json{{"op", "disallow"}, {"id", 11}, {"handle", session}, {"guids", json::array({1})}},
       ERROR_INVALID_PARAMETER},
      {json{{"op", "open"}, {"id", 12}, {"name", nullptr}}, ERROR_INVALID_PARAMETER},
      {json{{"op", "ack"}, {"wait", "x"}}, ERROR_INVALID_PARAMETER},
  };
  for (const auto& [frame, status] : bad) {
    SCOPED_TRACE(frame.dump());
    ASSERT_TRUE(peer.send(frame));
    const std::optional<json> reply = peer.receive();
    ASSERT_TRUE(reply.has_value()) << "the broker closed the connection or did not answer";
    ASSERT_TRUE(reply->is_object());
    EXPECT_EQ(reply->value("status", 0u), status);
    EXPECT_FALSE(reply->value("reason", std::string()).empty());
    if (frame.is_object() && frame.contains("id")) {
      EXPECT_EQ(reply->at("id"), frame["id"]);
    }
  }
  // None of the refused requests changed anything: the session "frames-x" was never made.
  Properties query;
  EXPECT_EQ(QueryTraceA(0, "frames-x", query.get()), ERROR_WMI_INSTANCE_NOT_FOUND);

  // The same connection still gets answers.
  ASSERT_TRUE(peer.send({{"op", "hello"}, {"id", 99}}));
  const std::optional<json> hello = peer.receive();
  ASSERT_TRUE(hello.has_value());
  EXPECT_EQ(hello->value("status", 87u), ERROR_SUCCESS);
  EXPECT_EQ(hello->value("id", 0), 99);

  // The same broker, with the other peer's session and registration intact.
  EXPECT_EQ(broker_pid(home.home()), pid);
  EXPECT_EQ(QueryTraceA(session, nullptr, query.get()), ERROR_SUCCESS);
  EXPECT_EQ(EnableTraceEx2(session, &kProvider, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 5, 0, 0, 10000,
                           nullptr),
            ERROR_SUCCESS);
  EXPECT_EQ(g_level.load(), 5);
  EXPECT_EQ(EventUnregister(provider), ERROR_SUCCESS);
  Properties stop;
  EXPECT_EQ(ControlTraceA(session, nullptr, stop.get(), EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
}

}  // namespace
