// The broker's state machine without sockets: typed requests in, the frames it would send out.
#include "broker_state.h"

#include "wire.h"

#include <evntprov.h>
#include <evntrace.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace etwrt::broker {
namespace {

using json = nlohmann::json;

const GUID kProvider = {
    0x7b5c1e43, 0x3d4e, 0x4f50, {0xa1, 0x32, 0x43, 0x54, 0x65, 0x76, 0x87, 0x98}};
constexpr PeerId kProviderPeer = 10;
constexpr PeerId kController = 20;
constexpr std::uint64_t kToken = 77;

// Typed requests, as decode_request() would yield them.
Request request(std::uint64_t id, RequestBody body) { return Request{json(id), std::move(body)}; }

StartRequest start(const std::string& name) {
  StartRequest s;
  s.name = name;
  s.buffer_size_kb = 64;
  s.minimum_buffers = 2;
  s.maximum_buffers = 22;
  s.log_file_mode = EVENT_TRACE_REAL_TIME_MODE;
  s.flush_timer = 1;
  return s;
}

EnableRequest enable(std::uint64_t handle, ULONG code, UCHAR level, std::uint64_t any,
                     std::uint64_t all, bool wait = false) {
  EnableRequest e;
  e.handle = handle;
  e.provider = kProvider;
  e.code = code;
  e.level = level;
  e.any = any;
  e.all = all;
  e.wait = wait;
  return e;
}

// The frames of `out` to `peer` whose op is `op` ("" for replies, which have none).
std::vector<json> frames(const std::vector<Outgoing>& out, PeerId peer, const std::string& op) {
  std::vector<json> found;
  for (const Outgoing& o : out) {
    if (o.peer == peer && o.message.value("op", "") == op) found.push_back(o.message);
  }
  return found;
}

class BrokerStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    state_.connect(kProviderPeer, true);
    state_.connect(kController, true);
    state_.handle(kProviderPeer, request(1, RegisterRequest{kToken, kProvider, false}));
    const std::vector<json> reply = frames(state_.take_outbox(), kProviderPeer, "");
    ASSERT_EQ(reply.size(), 1u);
    ASSERT_EQ(reply[0]["status"], ERROR_SUCCESS);
    ASSERT_EQ(reply[0]["is_enabled"], 0u);
  }

  std::uint64_t start_session(const std::string& name) {
    state_.handle(kController, request(2, start(name)));
    const std::vector<json> reply = frames(state_.take_outbox(), kController, "");
    EXPECT_EQ(reply.size(), 1u);
    EXPECT_EQ(reply.at(0)["status"], ERROR_SUCCESS);
    return reply.at(0)["properties"]["handle"].get<std::uint64_t>();
  }

  // Sends `e` from the controller; returns the notification the provider got (must be one).
  json notified_by(const EnableRequest& e, std::vector<Outgoing>* all = nullptr) {
    state_.handle(kController, request(3, e));
    std::vector<Outgoing> out = state_.take_outbox();
    const std::vector<json> notes = frames(out, kProviderPeer, "notify");
    EXPECT_EQ(notes.size(), 1u);
    if (all != nullptr) *all = out;
    return notes.empty() ? json() : notes[0];
  }

  BrokerState state_;
};

TEST_F(BrokerStateTest, TwoSessionsAggregateAndDisablingOneLeavesTheOther) {
  const std::uint64_t a = start_session("a");
  const std::uint64_t b = start_session("b");

  std::vector<Outgoing> out;
  json n = notified_by(enable(a, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 3, 0x1, 0x3), &out);
  EXPECT_EQ(n["token"], kToken);
  EXPECT_EQ(n["is_enabled"], 1u);
  EXPECT_EQ(n["level"], 3);
  EXPECT_EQ(n["any"], 0x1u);
  EXPECT_EQ(n["all"], 0x3u);
  // The session's pool goes to the provider, with its fd, before the notification naming it.
  ASSERT_GE(out.size(), 3u);
  EXPECT_EQ(out[0].peer, kProviderPeer);
  EXPECT_EQ(out[0].message["op"], "pool");
  EXPECT_NE(out[0].pool, nullptr);
  EXPECT_EQ(frames(out, kController, "").at(0)["status"], ERROR_SUCCESS);

  n = notified_by(enable(b, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 5, 0x4, 0x1));
  EXPECT_EQ(n["level"], 5);   // max
  EXPECT_EQ(n["any"], 0x5u);  // OR
  EXPECT_EQ(n["all"], 0x1u);  // AND
  EXPECT_EQ(n["sessions"].size(), 2u);

  n = notified_by(enable(a, EVENT_CONTROL_CODE_DISABLE_PROVIDER, 0, 0, 0));
  EXPECT_EQ(n["is_enabled"], 1u);  // Still enabled by b.
  EXPECT_EQ(n["level"], 5);
  EXPECT_EQ(n["any"], 0x4u);
  EXPECT_EQ(n["all"], 0x1u);
  EXPECT_EQ(n["sessions"].size(), 1u);
}

TEST_F(BrokerStateTest, StoppingTheLastSessionDisablesAndTellsThePoolsHolders) {
  const std::uint64_t a = start_session("a");
  notified_by(enable(a, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 4, 0xff, 0));
  ControlRequest stop;
  stop.handle = a;
  stop.code = EVENT_TRACE_CONTROL_STOP;
  state_.handle(kController, request(4, stop));
  const std::vector<Outgoing> out = state_.take_outbox();
  const std::vector<json> notes = frames(out, kProviderPeer, "notify");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0]["is_enabled"], 0u);
  EXPECT_EQ(notes[0]["level"], 0);
  EXPECT_EQ(notes[0]["any"], 0u);
  EXPECT_EQ(notes[0]["source"], guid_to_wire(GUID_NULL));
  EXPECT_EQ(frames(out, kProviderPeer, "stopped").size(), 1u);  // It holds the pool.
  EXPECT_EQ(frames(out, kController, "").at(0)["status"], ERROR_SUCCESS);
  EXPECT_FALSE(state_.idle());  // Peers are still connected.
}

TEST_F(BrokerStateTest, AWaitingEnableIsAnsweredWhenTheCallbackIsAcknowledged) {
  const std::uint64_t a = start_session("a");
  state_.handle(kController, request(9, enable(a, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 2, 0, 0,
                                               /*wait=*/true)));
  std::vector<Outgoing> out = state_.take_outbox();
  EXPECT_TRUE(frames(out, kController, "").empty());  // Deferred.
  const std::vector<json> notes = frames(out, kProviderPeer, "notify");
  ASSERT_EQ(notes.size(), 1u);
  const std::uint64_t wait = notes[0]["wait"].get<std::uint64_t>();
  ASSERT_NE(wait, 0u);
  state_.handle(kProviderPeer, Request{json(), AckRequest{wait}});
  out = state_.take_outbox();
  const std::vector<json> replies = frames(out, kController, "");
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0]["id"], 9);
  EXPECT_EQ(replies[0]["status"], ERROR_SUCCESS);
}

TEST_F(BrokerStateTest, AProviderThatGoesAwayFinishesTheWaitAndLosesItsRegistration) {
  const std::uint64_t a = start_session("a");
  state_.handle(kController, request(9, enable(a, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 2, 0, 0,
                                               /*wait=*/true)));
  state_.take_outbox();
  state_.disconnect(kProviderPeer);
  std::vector<Outgoing> out = state_.take_outbox();
  ASSERT_EQ(frames(out, kController, "").size(), 1u);
  // Nobody is left to notify.
  state_.handle(kController, request(10, enable(a, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 3, 0, 0)));
  out = state_.take_outbox();
  EXPECT_TRUE(frames(out, kProviderPeer, "notify").empty());
  EXPECT_EQ(frames(out, kController, "").at(0)["status"], ERROR_SUCCESS);
}

TEST_F(BrokerStateTest, APeerOfAnotherUserIsRefused) {
  state_.connect(30, /*allowed=*/false);
  state_.handle(30, request(5, start("x")));
  const std::vector<json> reply = frames(state_.take_outbox(), 30, "");
  ASSERT_EQ(reply.size(), 1u);
  EXPECT_EQ(reply[0]["status"], ERROR_ACCESS_DENIED);
}

TEST_F(BrokerStateTest, NinthSessionOnOneProviderIsRefused) {
  for (int i = 0; i < 8; ++i) {
    notified_by(enable(start_session("s" + std::to_string(i)), EVENT_CONTROL_CODE_ENABLE_PROVIDER,
                       1, 0, 0));
  }
  const std::uint64_t ninth = start_session("s8");
  state_.handle(kController,
                request(6, enable(ninth, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 1, 0, 0)));
  const std::vector<Outgoing> out = state_.take_outbox();
  EXPECT_TRUE(frames(out, kProviderPeer, "notify").empty());
  EXPECT_EQ(frames(out, kController, "").at(0)["status"], ERROR_NO_SYSTEM_RESOURCES);
}

// ETWRT_MAX_SESSIONS: the system-wide limit on running sessions (StartTrace's
// ERROR_NO_SYSTEM_RESOURCES); a stopped session frees its place.
TEST(BrokerStateLimits, StartBeyondTheSessionLimitIsRefusedUntilOneStops) {
  BrokerState state(/*max_sessions=*/2);
  state.connect(kController, true);
  auto start_status = [&](const std::string& name) {
    state.handle(kController, request(1, start(name)));
    return frames(state.take_outbox(), kController, "").at(0);
  };
  const json a = start_status("a");
  ASSERT_EQ(a["status"], ERROR_SUCCESS);
  ASSERT_EQ(start_status("b")["status"], ERROR_SUCCESS);
  EXPECT_EQ(start_status("c")["status"], ERROR_NO_SYSTEM_RESOURCES);
  ControlRequest stop;
  stop.handle = a["properties"]["handle"].get<std::uint64_t>();
  stop.code = EVENT_TRACE_CONTROL_STOP;
  state.handle(kController, request(2, stop));
  state.take_outbox();
  EXPECT_EQ(start_status("c")["status"], ERROR_SUCCESS);
}

// QueryAllTraces: every session with its properties, in start order, but private ones.
TEST(BrokerStateLimits, EnumerateListsTheSessionsButPrivateOnes) {
  BrokerState state;
  state.connect(kController, true);
  StartRequest hidden = start("private");
  hidden.log_file_mode = EVENT_TRACE_REAL_TIME_MODE | EVENT_TRACE_PRIVATE_LOGGER_MODE;
  for (const StartRequest& s : {start("first"), hidden, start("second")}) {
    state.handle(kController, request(1, s));
    ASSERT_EQ(frames(state.take_outbox(), kController, "").at(0)["status"], ERROR_SUCCESS);
  }
  state.handle(kController, request(2, EnumerateRequest{}));
  const json reply = frames(state.take_outbox(), kController, "").at(0);
  EXPECT_EQ(reply["id"], 2);
  EXPECT_EQ(reply["status"], ERROR_SUCCESS);
  ASSERT_EQ(reply["sessions"].size(), 2u);
  EXPECT_EQ(reply["sessions"][0]["name"], "first");
  EXPECT_EQ(reply["sessions"][1]["name"], "second");
  EXPECT_EQ(reply["sessions"][1]["log_file_mode"], EVENT_TRACE_REAL_TIME_MODE);
}

// Pools are bounded: unreasonable buffer settings are replaced, as EVENT_TRACE_PROPERTIES says
// ETW does (the values used come back in the properties).
TEST(BrokerStatePools, BufferSettingsAreBoundedByTheMemoryLimit) {
  constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
  const BufferPlan huge = plan_buffers(16 * 1024, 0, 65536, 2, kGiB);  // 1 TiB asked.
  EXPECT_EQ(huge.buffer_size_kb, 16u * 1024);
  EXPECT_EQ(huge.maximum_buffers, 64u);  // 64 x 16 MB = 1 GiB.
  EXPECT_EQ(huge.minimum_buffers, 4u);
  const BufferPlan both = plan_buffers(16 * 1024, 1000, 2000, 2, kGiB);
  EXPECT_EQ(both.maximum_buffers, 64u);
  EXPECT_EQ(both.minimum_buffers, 64u) << "MinimumBuffers never above MaximumBuffers";
  const BufferPlan tight = plan_buffers(16 * 1024, 0, 0, 1, 1);  // Below two buffers.
  EXPECT_EQ(tight.maximum_buffers, 2u);
  EXPECT_EQ(tight.minimum_buffers, 2u);
  const BufferPlan usual = plan_buffers(64, 8, 64, 2, kGiB);  // Within bounds: unchanged.
  EXPECT_EQ(usual.buffer_size_kb, 64u);
  EXPECT_EQ(usual.minimum_buffers, 8u);
  EXPECT_EQ(usual.maximum_buffers, 64u);
  const BufferPlan defaults = plan_buffers(0, 0, 0, 4, kGiB);
  EXPECT_EQ(defaults.buffer_size_kb, 64u);
  EXPECT_EQ(defaults.minimum_buffers, 8u);
  EXPECT_EQ(defaults.maximum_buffers, 28u);
  EXPECT_LE(pool_limit_bytes(), kMaxPoolBytes);
  EXPECT_GT(pool_limit_bytes(), 0u);
}

TEST(BrokerStatePools, StartReportsTheBoundedPool) {
  BrokerState state;
  state.connect(kController, true);
  StartRequest s = start("huge");
  s.buffer_size_kb = 16 * 1024;
  s.maximum_buffers = 65536;
  state.handle(kController, request(1, s));
  const json reply = frames(state.take_outbox(), kController, "").at(0);
  ASSERT_EQ(reply["status"], ERROR_SUCCESS);
  const std::uint64_t kb = reply["properties"]["buffer_size"].get<std::uint64_t>();
  const std::uint64_t buffers = reply["properties"]["maximum_buffers"].get<std::uint64_t>();
  EXPECT_LE(kb * 1024 * buffers, kMaxPoolBytes);
  EXPECT_GE(buffers, reply["properties"]["minimum_buffers"].get<std::uint64_t>());
}

}  // namespace
}  // namespace etwrt::broker

namespace etwrt::broker {
namespace {

// Found by fuzz/broker_requests_fuzz.cc: a schematized provider filter shorter than its
// EVENT_FILTER_HEADER was read past its end when the broker chained the sessions' filters.
TEST(BrokerRequests, SchematizedFilterShorterThanItsHeaderIsRefused) {
  nlohmann::json frame = {
      {"op", "enable"},
      {"id", 5},
      {"handle", 1},
      {"guid", "51999c3b8034204293779c8e5132f5a1"},
      {"source", nullptr},
      {"code", 1},
      {"level", 5},
      {"any", 255},
      {"all", 0},
      {"provider_filter", {{"type", EVENT_FILTER_TYPE_SCHEMATIZED}, {"data", "0102"}}}};
  const Decoded short_filter = decode_request(frame);
  const auto* bad = std::get_if<DecodeError>(&short_filter);
  ASSERT_NE(bad, nullptr);
  EXPECT_EQ(bad->status, static_cast<ULONG>(ERROR_INVALID_PARAMETER));
  EXPECT_NE(bad->reason.find("/provider_filter/data"), std::string::npos) << bad->reason;
  frame["provider_filter"]["data"] = std::string(2 * sizeof(EVENT_FILTER_HEADER), '0');
  const Decoded whole = decode_request(frame);
  EXPECT_TRUE(std::holds_alternative<Request>(whole));
}

}  // namespace
}  // namespace etwrt::broker
