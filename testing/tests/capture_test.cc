// The capture against etwrt: each test is its own process under ctest (gtest_discover_tests), so
// each gets its own private home and broker.
#include "etwh/testing/capture.h"
#include "etwh/testing/matchers.h"
#include "tl_writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace etwh::testing {
namespace {

using test::TlProvider;
using ::testing::Contains;
using ::testing::ElementsAre;

const char kName[] = "Etwh.Testing.Sample";

CaptureOptions options_for_sample() {
  CaptureOptions o;
  o.provider = provider_id_from_name(kName);
  return o;
}

// Runs this test program again as a child, with `variables` set, on `test` alone; the value its
// line "<key>=<value>" printed ("" when none). The child must exit 0.
std::string child_says(const std::string& variables, const std::string& test,
                       const std::string& key) {
  const std::string command =
      variables + " /proc/" + std::to_string(::getpid()) + "/exe --gtest_filter=" + test;
  FILE* child = ::popen(command.c_str(), "r");
  EXPECT_NE(child, nullptr) << command;
  if (child == nullptr) return "";
  std::string value;
  char line[1024];
  while (std::fgets(line, sizeof line, child) != nullptr) {
    if (std::string(line).rfind(key + "=", 0) == 0) value = std::string(line + key.size() + 1);
  }
  EXPECT_EQ(::pclose(child), 0) << command;
  if (!value.empty() && value.back() == '\n') value.pop_back();
  return value;
}

TEST(TestingProviderName, HashesAsTheReferencePageExamples) {
  // TRACELOGGING_DEFINE_PROVIDER's reference page: "MyProvider" with its name-hashed ID.
  EXPECT_EQ(guid_text(provider_id_from_name("MyProvider")),
            "{b3864c38-4273-58c5-545b-8b3608343471}");
  // The same page's "MyCompany.MyComponent" example GUID, likewise from the hash.
  EXPECT_EQ(guid_text(provider_id_from_name("MyCompany.MyComponent")),
            "{ce5fa4ea-ab00-5402-8b76-9f76ac858fb5}");
  // Case does not matter: the name is upper-cased first.
  EXPECT_EQ(guid_text(provider_id_from_name("myprovider")),
            guid_text(provider_id_from_name("MYPROVIDER")));
}

TEST(TestingCapture, DecodesTraceLoggingFieldsByName) {
  TlProvider provider(provider_id_from_name(kName), kName);
  ASSERT_TRUE(provider.registered());
  const GUID activity = provider_id_from_name("activity");
  const GUID related = provider_id_from_name("related");
  CaptureResult result = capture(options_for_sample(), [&] {
    provider.write("Started", 4, 0x1, 8080, "example.org", &activity, &related);
    provider.write("Stopped", 4, 0x2, 8080, "example.org");
  });
  ASSERT_THAT(result, CaptureOk());
  ASSERT_EQ(result.events.size(), 2u);
  const Event& e = result.events[0];
  EXPECT_EQ(e.name, "Started");
  EXPECT_EQ(e.field("Port"), "8080");
  EXPECT_EQ(e.field("Host"), "example.org");
  EXPECT_EQ(e.field("Missing"), std::nullopt);
  EXPECT_EQ(e.level, 4);
  EXPECT_EQ(e.keyword, 0x1u);
  EXPECT_EQ(e.channel, 11);
  EXPECT_EQ(e.process_id, static_cast<ULONG>(::getpid()));
  EXPECT_NE(e.thread_id, 0u);
  EXPECT_EQ(guid_text(e.activity_id), guid_text(activity));
  ASSERT_TRUE(e.related_activity_id.has_value());
  EXPECT_EQ(guid_text(*e.related_activity_id), guid_text(related));
  EXPECT_FALSE(result.events[1].related_activity_id.has_value());
  EXPECT_LE(result.events[0].timestamp, result.events[1].timestamp);
  ASSERT_EQ(result.sessions.size(), 1u);
  EXPECT_EQ(result.sessions[0].delivered, 2u);
  EXPECT_EQ(result.sessions[0].lost, 0u);
  EXPECT_THAT(result.events, EventsInOrder({EventSpec().named("Started").field_eq("Port", "8080"),
                                            EventSpec().named("Stopped")}));
}

TEST(TestingCapture, SessionsFilterByLevelKeywordsAndEventId) {
  TlProvider provider(provider_id_from_name(kName), kName);
  CaptureOptions o = options_for_sample();
  SessionOptions errors_only;
  errors_only.level = 2;
  SessionOptions keyword_two;
  keyword_two.match_any = 0x2;
  o.sessions = {errors_only, keyword_two};
  CaptureResult result = capture(o, [&] {
    provider.write("Error", 2, 0x1, 1, "a");
    provider.write("Info", 4, 0x2, 2, "b");
  });
  ASSERT_THAT(result, CaptureOk());
  EXPECT_THAT(result.events_of(0), ElementsAre(EventNamed("Error")));
  EXPECT_THAT(result.events_of(1), ElementsAre(EventNamed("Info")));
}

TEST(TestingCapture, EventIdFilterKeepsOnlyTheListedIds) {
  CaptureOptions o;
  o.provider = provider_id_from_name("Etwh.Testing.Ids");
  o.sessions[0].event_ids = {2};
  REGHANDLE h = 0;
  ASSERT_EQ(EventRegister(&o.provider, nullptr, nullptr, &h), ERROR_SUCCESS);
  CaptureResult result = capture(o, [&] {
    for (USHORT id : {1, 2, 3}) {
      const EVENT_DESCRIPTOR d = {id, 0, 0, 4, 0, 0, 0};
      EventWrite(h, &d, 0, nullptr);
    }
  });
  EventUnregister(h);
  ASSERT_THAT(result, CaptureOk());
  ASSERT_EQ(result.events.size(), 1u);
  EXPECT_EQ(result.events[0].id, 2);
  // No metadata, no manifest: TDH cannot decode it, and says so.
  EXPECT_NE(result.events[0].decode_status, 0u);
}

TEST(TestingCapture, ProcessIdFilterKeepsOnlyTheListedProcesses) {
  TlProvider provider(provider_id_from_name(kName), kName);
  CaptureOptions o = options_for_sample();
  o.sessions.resize(2);
  o.sessions[0].process_ids = {static_cast<ULONG>(::getpid())};
  o.sessions[1].process_ids = {static_cast<ULONG>(::getpid()) + 1};  // another process
  CaptureResult result = capture(o, [&] { provider.write("Mine", 4, 0x1, 1, "a"); });
  ASSERT_THAT(result, CaptureOk());
  EXPECT_THAT(result.events_of(0), ElementsAre(EventNamed("Mine")));
  EXPECT_THAT(result.events_of(1), ::testing::IsEmpty());
}

TEST(TestingCapture, APrivateHomeOwnedByTheTestProcessFromBeforeMain) {
  const std::string home = private_home();
  ASSERT_FALSE(home.empty());
  EXPECT_EQ(std::getenv("ETWRT_HOME"), home);
  EXPECT_EQ(std::string(std::getenv("ETWRT_BROKER_OWNER_PID")), std::to_string(::getpid()));
}

// Run again as a child (the variable set), this test captures (so a broker starts) and prints its
// home; the parent then finds the home's folder gone once the child exited.
TEST(TestingCapture, TheHomeFolderGoesAtExit) {
  if (std::getenv("ETWH_TESTING_PRINT_HOME") != nullptr) {
    (void)capture(options_for_sample(), [] {});
    std::printf("HOME=%s\n", private_home().c_str());
    return;
  }
  const std::string home =
      child_says("ETWH_TESTING_PRINT_HOME=1", "TestingCapture.TheHomeFolderGoesAtExit", "HOME");
  ASSERT_FALSE(home.empty());
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(home).parent_path())) << home;
}

// Run again as a child with ETWRT_DENY_CONTROL=1 (etwrt's caller without the right to control
// sessions, as a process that is not elevated on Windows), this test prints cannot_capture()'s
// reason; the parent checks it is the one to skip with.
TEST(TestingCapture, ACallerWithoutTheRightGetsTheReasonToSkip) {
  if (std::getenv("ETWH_TESTING_PRINT_REFUSAL") != nullptr) {
    const std::optional<std::string> why = cannot_capture();
    std::printf("WHY=%s\n", why ? why->c_str() : "none");
    return;
  }
  const std::string why =
      child_says("ETWRT_DENY_CONTROL=1 ETWH_TESTING_PRINT_REFUSAL=1",
                 "TestingCapture.ACallerWithoutTheRightGetsTheReasonToSkip", "WHY");
  EXPECT_THAT(why, ::testing::HasSubstr("this process may not control ETW sessions: run it "
                                        "elevated, or as a member of Performance Log Users"));
  EXPECT_EQ(cannot_capture(), std::nullopt);  // this process has the right
}

TEST(TestingCapture, AnUnstartableSessionIsAnErrorNotACrash) {
  CaptureOptions o = options_for_sample();
  o.manifest = "/nonexistent/provider.man";
  CaptureResult result = capture(o, [] {});
  EXPECT_FALSE(result.ok());
  EXPECT_THAT(result.problems(),
              ::testing::HasSubstr("TdhLoadManifest(/nonexistent/provider.man)"));
}

}  // namespace
}  // namespace etwh::testing
