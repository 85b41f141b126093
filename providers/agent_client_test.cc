// AgentProcess against real agent processes: etwh-agent-fake (the agent over the recording
// fake, always built) and, when a runtime exists, etwh-agent itself. Each agent gets its own
// fresh ETWRT_HOME, so tests may run in parallel.
#include "agent_client.h"

#include "win32_text.h"
#ifdef ETWH_REAL_AGENT
#include "win32_ops.h"
#endif

#include <gtest/gtest.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <map>
#include <string>
#include <unistd.h>

namespace etwh {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

// Generous upper bounds, only to turn a hang into a failure.
constexpr milliseconds kLong{20000};

const char* kGuid = "{3c2ff8d4-9a59-4e2e-b9b0-4d8d11a4c0a1}";
const char* kSource = "{00000000-0000-0000-0000-00000000beef}";

class TempHome {
 public:
  TempHome() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("etwh-agent-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
    // etwrt refuses a home that other users can reach (docs/etwrt/use.md, "The home").
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::replace);
  }
  ~TempHome() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string str() const { return path_.string(); }
  // The environment of an agent using this home: its broker ends with this test process, so a
  // test that crashes or is killed leaves no broker (nor its sessions) behind.
  std::map<std::string, std::string> env() const {
    return {{"ETWRT_HOME", str()}, {"ETWRT_BROKER_OWNER_PID", std::to_string(::getpid())}};
  }

 private:
  std::filesystem::path path_;
};

// Stops a session when the test ends, passed or not: etwrt keeps a session (and its broker)
// alive until someone stops it, as Windows does.
class SessionGuard {
 public:
  SessionGuard(AgentProcess& agent, std::string label) : agent_(agent), label_(std::move(label)) {}
  ~SessionGuard() {
    try {
      agent_.call({{"op", "control"}, {"session", label_}, {"code", 1}}, std::chrono::seconds(20));
    } catch (const AgentError&) {
      // Unknown label (the start failed) or a dead agent: nothing left to stop here.
    }
  }

 private:
  AgentProcess& agent_;
  std::string label_;
};

std::vector<std::string> agents() {
  std::vector<std::string> out = {ETWH_FAKE_AGENT};
#ifdef ETWH_REAL_AGENT
  out.push_back(ETWH_REAL_AGENT);
#endif
  return out;
}

class AgentClient : public ::testing::TestWithParam<std::string> {
 protected:
  std::unique_ptr<AgentProcess> spawn(const std::string& name = "a") {
    return AgentProcess::spawn(GetParam(), name, {}, home_.env());
  }

  // A session name no other test (or earlier run) uses.
  std::string session_name(const std::string& tag) {
    return "etwh-client-test-" + std::to_string(::getpid()) + "-" + tag;
  }

  AgentError::Kind error_kind(const std::function<void()>& f, std::string* message = nullptr) {
    try {
      f();
    } catch (const AgentError& e) {
      if (message != nullptr) *message = e.what();
      return e.kind();
    }
    ADD_FAILURE() << "no AgentError";
    return AgentError::Kind::kSpawn;
  }

  // The kind of AgentError that `request` to `agent` ends in (with its message).
  AgentError::Kind call_error(AgentProcess& agent, const json& request,
                              milliseconds timeout = kLong, std::string* message = nullptr) {
    return error_kind([&] { agent.call(request, timeout); }, message);
  }

  TempHome home_;
};

TEST_P(AgentClient, SpawnsAndPings) {
  auto agent = spawn();
  auto events = agent->events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["event"], "ready");
  EXPECT_EQ(events[0]["platform"], "etwrt");
  EXPECT_EQ(events[0]["pid"], agent->pid());
  json reply = agent->call({{"op", "ping"}}, kLong);
  EXPECT_EQ(reply["ok"], true);
  EXPECT_EQ(reply["pid"], agent->pid());
  EXPECT_EQ(agent->name(), "a");
}

TEST_P(AgentClient, BadRequestIsAProtocolErrorAndChangesNothing) {
  auto agent = spawn();
  std::string message;
  EXPECT_EQ(call_error(*agent, {{"op", "frobnicate"}}, kLong, &message),
            AgentError::Kind::kProtocol);
  EXPECT_NE(message.find("op: unknown op \\\"frobnicate\\\""), std::string::npos) << message;
  EXPECT_EQ(call_error(*agent, {{"op", "register"}, {"provider", "p"}, {"guid", "nope"}}, kLong,
                       &message),
            AgentError::Kind::kProtocol);
  EXPECT_NE(message.find("guid: malformed GUID"), std::string::npos) << message;
  EXPECT_EQ(call_error(*agent, {{"op", "unregister"}, {"provider", "p"}}, kLong, &message),
            AgentError::Kind::kProtocol);
  EXPECT_NE(message.find("no provider labelled \\\"p\\\""), std::string::npos) << message;
  EXPECT_EQ(agent->call({{"op", "ping"}}, kLong)["ok"], true);
}

TEST_P(AgentClient, CrashIsReportedWithItsSignal) {
  auto agent = spawn();
  agent->send({{"op", "crash"}});
  std::string message;
  EXPECT_EQ(call_error(*agent, {{"op", "ping"}}, kLong, &message), AgentError::Kind::kCrashed);
  EXPECT_NE(message.find("killed by signal " + std::to_string(SIGABRT)), std::string::npos)
      << message;
  auto exit = agent->wait_exit(kLong);
  ASSERT_TRUE(exit);
  EXPECT_TRUE(exit->signaled);
  EXPECT_EQ(exit->signal, SIGABRT);
}

TEST_P(AgentClient, KillIsReportedAsSignalled) {
  auto agent = spawn();
  agent->kill();
  auto exit = agent->wait_exit(kLong);
  ASSERT_TRUE(exit);
  EXPECT_TRUE(exit->signaled);
  EXPECT_EQ(exit->signal, SIGKILL);
  EXPECT_EQ(call_error(*agent, {{"op", "ping"}}), AgentError::Kind::kCrashed);
}

TEST_P(AgentClient, TimeoutDoesNotHangAndLateRepliesAreNotMistaken) {
  auto agent = spawn();
  EXPECT_EQ(call_error(*agent, {{"op", "sleep"}, {"ms", 300}}, milliseconds(20)),
            AgentError::Kind::kTimeout);
  // The sleep's reply arrives first, late; the ping must still get its own.
  json reply = agent->call({{"op", "ping"}}, kLong);
  EXPECT_TRUE(reply.contains("pid")) << reply.dump();
}

TEST_P(AgentClient, StoppedAgentTimesOut) {
  auto agent = spawn();
  ASSERT_EQ(::kill(agent->pid(), SIGSTOP), 0);
  EXPECT_EQ(call_error(*agent, {{"op", "ping"}}, milliseconds(50)), AgentError::Kind::kTimeout);
  ASSERT_EQ(::kill(agent->pid(), SIGCONT), 0);
  EXPECT_EQ(agent->call({{"op", "ping"}}, kLong)["ok"], true);
}

TEST_P(AgentClient, ExitRepliesThenExitsWithItsCode) {
  auto agent = spawn();
  EXPECT_EQ(agent->call({{"op", "exit"}, {"code", 7}}, kLong)["ok"], true);
  auto exit = agent->wait_exit(kLong);
  ASSERT_TRUE(exit);
  EXPECT_FALSE(exit->signaled);
  EXPECT_EQ(exit->exit_code, 7);
}

TEST_P(AgentClient, EndOfInputEndsTheAgentWithCodeZero) {
  // The driver dying closes the agent's stdin; a shell gives it an empty one instead.
  auto agent = AgentProcess::spawn("/bin/sh", "eof", {"-c", "exec \"$0\" </dev/null", GetParam()},
                                   home_.env());
  auto exit = agent->wait_exit(kLong);
  ASSERT_TRUE(exit);
  EXPECT_FALSE(exit->signaled);
  EXPECT_EQ(exit->exit_code, 0);
}

TEST_P(AgentClient, DestructorEndsTheAgent) {
  int pid;
  {
    auto agent = spawn();
    pid = agent->pid();
  }
  // The child has been reaped: nothing by that pid is left for us to signal.
  EXPECT_EQ(::kill(pid, 0), -1);
}

TEST_P(AgentClient, EnableCallbackIsRecordedWithAllItsArguments) {
  auto agent = spawn();
  json reg = agent->call({{"op", "register"},
                          {"provider", "p"},
                          {"guid", kGuid},
                          {"context", "0xc0ffee"},
                          {"callback", "record"}},
                         kLong);
  EXPECT_EQ(reg["status"], 0);
  EXPECT_EQ(
      agent->call({{"op", "register"}, {"provider", "q"}, {"guid", kGuid}, {"callback", "none"}},
                  kLong)["status"],
      0);
  std::string name = session_name("cb");
  json start = agent->call({{"op", "start_session"}, {"session", "s"}, {"name", name}}, kLong);
  SessionGuard guard(*agent, "s");
  ASSERT_EQ(start["status"], 0) << start.dump();
  json enable = agent->call(
      {{"op", "enable"},
       {"session", "s"},
       {"guid", kGuid},
       {"control_code", 1},
       {"level", 4},
       {"match_any", "0x30"},
       {"match_all", "0x10"},
       {"timeout_ms", 10000},
       {"parameters", {{"source_id", kSource}, {"filters", {{{"type", 7}, {"data", "0a0b0c"}}}}}}},
      kLong);
  ASSERT_EQ(enable["status"], 0);
  ASSERT_TRUE(agent->wait_for_events("callback", 1, kLong));
  auto events = agent->events();
  std::vector<json> callbacks;
  for (const auto& e : events) {
    if (e["event"] == "callback") callbacks.push_back(e);
  }
  ASSERT_EQ(callbacks.size(), 1u);  // "q" has a NULL callback
  const json& cb = callbacks[0];
  EXPECT_EQ(cb["provider"], "p");
  EXPECT_EQ(cb["n"], 1);
  EXPECT_EQ(cb["source_id"], kSource);
  EXPECT_EQ(cb["is_enabled"], 1);
  EXPECT_EQ(cb["level"], 4);
  EXPECT_EQ(cb["match_any"], "0x30");
  EXPECT_EQ(cb["match_all"], "0x10");
  EXPECT_EQ(cb["context"], "0xc0ffee");
  EXPECT_GE(cb["duration_ns"].get<std::int64_t>(), 0);
  EXPECT_GT(cb["t_ns"].get<std::int64_t>(), 0);
  ASSERT_TRUE(cb["filter"].is_object()) << cb.dump();
  if (cb["filter"]["type"] == 0x80000000u) {
    // etwrt hands each filtering session's filter as an EVENT_FILTER_HEADER block of one
    // SCHEMATIZED chain (docs/etwrt/conformance.md, CB-FILTER-PER-SESSION): 24-byte header, then
    // data.
    EXPECT_EQ(cb["filter"]["size"], 27);
    EXPECT_EQ(cb["filter"]["data"].get<std::string>().substr(48), "0a0b0c");
  } else {
    EXPECT_EQ(cb["filter"]["type"], 7);
    EXPECT_EQ(cb["filter"]["size"], 3);
    EXPECT_EQ(cb["filter"]["data"], "0a0b0c");
  }

  EXPECT_EQ(agent->call({{"op", "unregister"}, {"provider", "p"}}, kLong)["status"], 0);
  EXPECT_EQ(agent->call({{"op", "unregister"}, {"provider", "q"}}, kLong)["status"], 0);
}

TEST_P(AgentClient, DelayedCallbackReportsItsDuration) {
  auto agent = spawn();
  agent->call(
      {{"op", "register"}, {"provider", "p"}, {"guid", kGuid}, {"behavior", {{"delay_ms", 30}}}},
      kLong);
  std::string name = session_name("delay");
  SessionGuard guard(*agent, "s");
  ASSERT_EQ(
      agent->call({{"op", "start_session"}, {"session", "s"}, {"name", name}}, kLong)["status"], 0);
  agent->call({{"op", "enable"},
               {"session", "s"},
               {"guid", kGuid},
               {"control_code", 1},
               {"level", 1},
               {"match_any", "0x1"},
               {"timeout_ms", 10000}},
              kLong);
  ASSERT_TRUE(agent->wait_for_events("callback", 1, kLong));
  json cb;
  for (const auto& e : agent->events()) {
    if (e["event"] == "callback") cb = e;
  }
  // A lower bound only: sleeping 30 ms takes at least 30 ms, however loaded the machine.
  EXPECT_GE(cb["duration_ns"].get<std::int64_t>(), 30'000'000);
  EXPECT_EQ(cb["filter"], nullptr);
}

INSTANTIATE_TEST_SUITE_P(Agents, AgentClient, ::testing::ValuesIn(agents()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return std::filesystem::path(info.param).filename().string() ==
                                          "etwh-agent-fake"
                                      ? std::string("Fake")
                                      : std::string("Real");
                         });

#ifdef ETWH_REAL_AGENT
// End to end through etwrt: behaviours the fake cannot show.
class RealAgent : public ::testing::Test {
 protected:
  std::unique_ptr<AgentProcess> spawn() {
    return AgentProcess::spawn(ETWH_REAL_AGENT, "real", {}, home_.env());
  }
  TempHome home_;
};

TEST_F(RealAgent, PreEnabledProviderHearsInsideRegisterWithNullSourceId) {
  auto agent = spawn();
  std::string name = "etwh-client-test-" + std::to_string(::getpid()) + "-pre";
  SessionGuard guard(*agent, "s");
  ASSERT_EQ(
      agent->call({{"op", "start_session"}, {"session", "s"}, {"name", name}}, kLong)["status"], 0);
  ASSERT_EQ(agent->call({{"op", "enable"},
                         {"session", "s"},
                         {"guid", kGuid},
                         {"control_code", 1},
                         {"level", 3},
                         {"match_any", "0x5"},
                         {"parameters", {{"source_id", kSource}}}},
                        kLong)["status"],
            0);
  EXPECT_EQ(
      agent->call({{"op", "register"}, {"provider", "p"}, {"guid", kGuid}, {"context", "0x77"}},
                  kLong)["status"],
      0);
  // Emitted before the register reply, so already here.
  std::vector<json> callbacks;
  for (const auto& e : agent->events()) {
    if (e["event"] == "callback") callbacks.push_back(e);
  }
  ASSERT_EQ(callbacks.size(), 1u);
  EXPECT_EQ(callbacks[0]["source_id"], format_guid(GUID_NULL));
  EXPECT_EQ(callbacks[0]["filter"], nullptr);
  EXPECT_EQ(callbacks[0]["level"], 3);
  EXPECT_EQ(callbacks[0]["match_any"], "0x5");
  EXPECT_EQ(callbacks[0]["context"], "0x77");
  json enabled = agent->call({{"op", "query_enabled"},
                              {"provider", "p"},
                              {"level", 3},
                              {"keyword", "0x1"},
                              {"descriptor", {{"level", 4}, {"keyword", "0x1"}}}},
                             kLong);
  EXPECT_EQ(enabled["provider_enabled"], true);
  EXPECT_EQ(enabled["event_enabled"], false);  // level 4 > the session's 3
  json written = agent->call({{"op", "write"},
                              {"provider", "p"},
                              {"descriptor", {{"id", 1}, {"level", 2}, {"keyword", "0x1"}}},
                              {"payload", "00ff"},
                              {"count", 3}},
                             kLong);
  EXPECT_TRUE(written.contains("status") && written.contains("failed")) << written.dump();
  json stop =
      agent->call({{"op", "control"}, {"session", "s"}, {"code", EVENT_TRACE_CONTROL_STOP}}, kLong);
  EXPECT_EQ(stop["status"], 0);
  EXPECT_EQ(stop["properties"]["logger_name"], name);
}

TEST_F(RealAgent, TraitsAreAcceptedOnceThroughTheAgent) {
  auto agent = spawn();
  agent->call({{"op", "register"}, {"provider", "p"}, {"guid", kGuid}}, kLong);
  GUID group = parse_guid(kSource).value();
  std::string blob = [&] {
    auto bytes = build_traits_blob("EtwhTestProvider", {group_trait(group)});
    return bytes_to_hex(bytes.data(), bytes.size());
  }();
  json set = {{"op", "set_information"}, {"provider", "p"}, {"class", 2}, {"data", blob}};
  EXPECT_EQ(agent->call(set, kLong)["status"], 0);
  EXPECT_NE(agent->call(set, kLong)["status"], 0);
}

// A consumer's records carry the event as TDH decodes it: a TraceLogging event from its schema
// item, a manifest event once the consumer loaded the manifest; the driver's 8-byte sequence
// number is left out (decode_skip).
TEST_F(RealAgent, ConsumerRecordsCarryDecodedEvents) {
  auto agent = spawn();
  const std::string name = "etwh-client-test-" + std::to_string(::getpid()) + "-decode";
  SessionGuard guard(*agent, "s");
  ASSERT_EQ(
      agent->call({{"op", "start_session"}, {"session", "s"}, {"name", name}}, kLong)["status"], 0);
  // The provider of runtime/testdata/tdh_test.man.
  const char* manifest_guid = "{6e2b9f10-0d4c-4a3b-9b1e-2c3d4e5f6a7b}";
  for (const auto& [label, guid] : {std::pair{"tl", kGuid}, std::pair{"man", manifest_guid}}) {
    ASSERT_EQ(
        agent->call({{"op", "register"}, {"provider", label}, {"guid", guid}}, kLong)["status"], 0);
    ASSERT_EQ(agent->call({{"op", "enable"},
                           {"session", "s"},
                           {"guid", guid},
                           {"control_code", 1},
                           {"level", 5},
                           {"match_any", "0xff"}},
                          kLong)["status"],
              0);
  }
  ASSERT_EQ(
      agent->call({{"op", "set_information"}, {"provider", "tl"}, {"class", 3}, {"data", "01"}},
                  kLong)["status"],
      0);
  json consume = agent->call({{"op", "consume_start"},
                              {"consumer", "c"},
                              {"name", name},
                              {"decode_skip", 8},
                              {"manifest", ETWH_TDH_TEST_MANIFEST}},
                             kLong);
  ASSERT_EQ(consume["status"], 0) << consume.dump();
  // TraceLogging: "Etwh.Tl.Event" with n (UINT32) and s (ANSISTRING).
  json tl = agent->call(
      {{"op", "write"},
       {"provider", "tl"},
       {"descriptor", {{"level", 4}, {"keyword", "0x1"}, {"channel", 11}}},
       {"payload", "2a000000686900"},
       {"sequence", 1},
       {"typed", {{{"type", 1}, {"data", "170000457477682e546c2e4576656e74006e0008730002"}}}}},
      kLong);
  ASSERT_EQ(tl["status"], 0);
  // Manifest event 3 has no template; event 2 ("Strings") is long, so 1 with its 15 scalars.
  std::string scalars;
  for (int size : {1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 4, 16, 8, 8, 16})
    scalars += std::string(2 * size, '0');
  scalars.replace(0, 2, "fb");  // I8 = -5
  json man = agent->call({{"op", "write"},
                          {"provider", "man"},
                          {"descriptor", {{"id", 1}, {"level", 4}, {"keyword", "0x5"}}},
                          {"payload", scalars},
                          {"sequence", 2}},
                         kLong);
  ASSERT_EQ(man["status"], 0);
  agent->call({{"op", "control"}, {"session", "s"}, {"code", EVENT_TRACE_CONTROL_STOP}}, kLong);
  json stop = agent->call({{"op", "consume_stop"}, {"consumer", "c"}}, kLong);
  std::vector<json> events;
  for (const json& r : stop["records"]) {
    if (r["kind"] == "event") events.push_back(r);
  }
  ASSERT_EQ(events.size(), 2u) << stop.dump();
  EXPECT_EQ(
      events[0]["decoded"],
      (json{{"name", "Etwh.Tl.Event"},
            {"fields", {{{"name", "n"}, {"value", "42"}}, {{"name", "s"}, {"value", "hi"}}}}}))
      << events[0].dump();
  ASSERT_TRUE(events[1].contains("decoded")) << events[1].dump();
  EXPECT_EQ(events[1]["decoded"]["name"], "AllScalars");
  ASSERT_EQ(events[1]["decoded"]["fields"].size(), 15u);
  EXPECT_EQ(events[1]["decoded"]["fields"][0], (json{{"name", "I8"}, {"value", "-5"}}));
  EXPECT_EQ(events[1]["decoded"]["fields"][11]["value"], "{00000000-0000-0000-0000-000000000000}");
  EXPECT_EQ(events[1]["decoded"]["fields"][10]["value"], "false");
}

TEST_F(RealAgent, AManifestThatDoesNotLoadFailsTheConsumerStart) {
  auto agent = spawn();
  json consume = agent->call({{"op", "consume_start"},
                              {"consumer", "c"},
                              {"name", "nobody"},
                              {"manifest", "/nonexistent/x.man"}},
                             kLong);
  EXPECT_EQ(consume["status"], ERROR_FILE_NOT_FOUND);
  EXPECT_EQ(consume["manifest_status"], ERROR_FILE_NOT_FOUND);
}
#endif

TEST(AgentClientSpawn, MissingExecutableIsASpawnError) {
  try {
    AgentProcess::spawn("/nonexistent/etwh-agent", "x", {}, {});
    FAIL() << "spawned a missing executable";
  } catch (const AgentError& e) {
    EXPECT_EQ(e.kind(), AgentError::Kind::kSpawn);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/etwh-agent"), std::string::npos);
  }
}

TEST(AgentClientSpawn, ProgramThatNeverGetsReadyIsASpawnError) {
  try {
    AgentProcess::spawn("/bin/sh", "sh", {"-c", "echo oops >&2; exit 3"}, {});
    FAIL() << "a shell was taken for an agent";
  } catch (const AgentError& e) {
    EXPECT_EQ(e.kind(), AgentError::Kind::kSpawn);
    EXPECT_NE(std::string(e.what()).find("exited with code 3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("oops"), std::string::npos) << e.what();
  }
}

TEST(AgentClientSpawn, EnvironmentOverridesReachTheChild) {
  // A shell stands in for the agent: it prints the variable as its ready event's platform.
  auto agent = AgentProcess::spawn(
      "/bin/sh", "sh",
      {"-c", "printf '{\"event\":\"ready\",\"platform\":\"%s\"}\\n' \"$ETWH_TEST_VAR\"; read x"},
      {{"ETWH_TEST_VAR", "from-driver"}});
  EXPECT_EQ(agent->events().at(0)["platform"], "from-driver");
}

}  // namespace
}  // namespace etwh
