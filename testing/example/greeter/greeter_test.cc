// Example.Greeter's own unit tests with etwh::testing: what it writes, decoded by name, and
// whether it follows the documented provider rules.
#include "greeter.h"

#include <etwh/testing/capture.h>
#include <etwh/testing/matchers.h>
#include <etwh/testing/provider_check.h>

#include <evntrace.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace {

using etwh::testing::CaptureOk;
using etwh::testing::CaptureOptions;
using etwh::testing::CaptureResult;
using etwh::testing::EventCount;
using etwh::testing::EventsInOrder;
using etwh::testing::EventSpec;

CaptureOptions greeter_at(UCHAR level) {
  CaptureOptions options;
  options.provider = etwh::testing::provider_id_from_name("Example.Greeter");
  options.sessions[0].level = level;
  return options;
}

TEST(Greeter, GreetsWithNameAndCount) {
  if (auto why = etwh::testing::cannot_capture()) GTEST_SKIP() << *why;
  greeter_register();
  const CaptureResult result =
      etwh::testing::capture(greeter_at(TRACE_LEVEL_INFORMATION), [] { greet("Ada", 3); });
  greeter_unregister();
  ASSERT_THAT(result, CaptureOk());
  EXPECT_THAT(result.events,
              EventsInOrder(
                  {EventSpec().named("Greeting").field_eq("Name", "Ada").field_eq("Count", "3")}));
  // An informational session gets no verbose detail.
  EXPECT_THAT(result.events, EventCount(EventSpec().named("GreetingDetail"), 0));
}

TEST(Greeter, AVerboseSessionGetsTheDetailAfterTheGreeting) {
  if (auto why = etwh::testing::cannot_capture()) GTEST_SKIP() << *why;
  greeter_register();
  const CaptureResult result =
      etwh::testing::capture(greeter_at(TRACE_LEVEL_VERBOSE), [] { greet("Grace", 1); });
  greeter_unregister();
  ASSERT_THAT(result, CaptureOk());
  EXPECT_THAT(result.events,
              EventsInOrder({EventSpec().named("Greeting").keywords(0x1),
                             EventSpec().named("GreetingDetail").field_matches("Name", "^Gr")}));
}

TEST(Greeter, FollowsTheProviderRules) {
#ifdef _WIN32
  GTEST_SKIP() << "the provider check needs etwrt's observation of the process (Linux)";
#endif
  const etwh::testing::ProviderReport report = etwh::testing::check_provider(
      greeter_register, [] { greet("Ada", 1); }, greeter_unregister);
  EXPECT_TRUE(report.passed()) << report.text();
}

}  // namespace
