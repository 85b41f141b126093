// Example-Inventory's own unit tests with etwh::testing: manifest events decoded through the
// manifest, per-session filters, and the provider rules.
#include "inventory.h"

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
using etwh::testing::ContainsEvent;
using etwh::testing::EventCount;
using etwh::testing::EventSpec;

// {7C1F4D2A-5E3B-4A69-8D0C-1B2A3C4D5E6F}, inventory.man's provider.
const GUID kInventory = {
    0x7c1f4d2a, 0x5e3b, 0x4a69, {0x8d, 0x0c, 0x1b, 0x2a, 0x3c, 0x4d, 0x5e, 0x6f}};

TEST(Inventory, AddingAnItemWritesItsSkuAndQuantity) {
  if (auto why = etwh::testing::cannot_capture()) GTEST_SKIP() << *why;
  CaptureOptions options;
  options.provider = kInventory;
  options.manifest = INVENTORY_MANIFEST;  // fields by name, through TDH
  inventory_register();
  const CaptureResult result = etwh::testing::capture(options, [] { add_item("A-100", 3); });
  inventory_unregister();
  ASSERT_THAT(result, CaptureOk());
  EXPECT_THAT(result.events,
              ContainsEvent(EventSpec().id(1).field_eq("Sku", "A-100").field_eq("Quantity", "3")));
  EXPECT_THAT(result.events, ContainsEvent(EventSpec().id(2).level(TRACE_LEVEL_WARNING)));
}

TEST(Inventory, EachSessionGetsWhatItsKeywordsSelect) {
  if (auto why = etwh::testing::cannot_capture()) GTEST_SKIP() << *why;
  CaptureOptions options;
  options.provider = kInventory;
  options.manifest = INVENTORY_MANIFEST;
  options.sessions.resize(2);
  options.sessions[0].match_any = 0x1;  // Stock
  options.sessions[1].match_any = 0x2;  // Audit
  inventory_register();
  const CaptureResult result = etwh::testing::capture(options, [] { add_item("B-7", 10); });
  inventory_unregister();
  ASSERT_THAT(result, CaptureOk());
  EXPECT_THAT(result.events_of(0), EventCount(EventSpec().keywords(0x2), 0));
  EXPECT_THAT(
      result.events_of(1),
      ::testing::ElementsAre(etwh::testing::IsEvent(EventSpec().id(3).field_eq("Sku", "B-7"))));
}

TEST(Inventory, FollowsTheProviderRules) {
#ifdef _WIN32
  GTEST_SKIP() << "the provider check needs etwrt's observation of the process (Linux)";
#endif
  const etwh::testing::ProviderReport report = etwh::testing::check_provider(
      inventory_register, [] { add_item("C-1", 2); }, inventory_unregister);
  EXPECT_TRUE(report.passed()) << report.text();
}

}  // namespace
