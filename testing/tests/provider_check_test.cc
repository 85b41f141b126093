// The provider check on a provider written for the test, correct and with each planted defect
// the brief names: writing above the enabled level, ignoring DISABLE, setting traits twice. Each
// defect must fail the check with a finding naming its rule.
#include "etwh/testing/capture.h"
#include "etwh/testing/provider_check.h"
#include "tl_writer.h"

#include <evntrace.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <memory>

namespace etwh::testing {
namespace {

using ::testing::Contains;

enum class Defect { kNone, kAboveLevel, kIgnoresDisable, kTraitsTwice };

// A provider that tracks its callback (as TraceLogging does: level and keywords) and writes
// only what its sessions enabled, unless a defect says otherwise.
class Provider {
 public:
  explicit Provider(Defect defect) : defect_(defect) {}

  void register_provider() {
    const GUID id = provider_id_from_name("Etwh.Testing.Checked");
    EventRegister(&id, &Provider::callback, this, &handle_);
    const std::vector<std::uint8_t> traits = test::tl_traits("Etwh.Testing.Checked");
    EventSetInformation(handle_, EventProviderSetTraits, const_cast<std::uint8_t*>(traits.data()),
                        static_cast<ULONG>(traits.size()));
    if (defect_ == Defect::kTraitsTwice) {
      EventSetInformation(handle_, EventProviderSetTraits, const_cast<std::uint8_t*>(traits.data()),
                          static_cast<ULONG>(traits.size()));
    }
  }
  void unregister_provider() { EventUnregister(handle_); }

  void work() {
    for (UCHAR level = 1; level <= 5; ++level) {
      const EVENT_DESCRIPTOR d = {static_cast<USHORT>(level), 0, 0, level, 0, 0, 0x1};
      if (wants(level)) EventWrite(handle_, &d, 0, nullptr);
    }
  }

 private:
  bool wants(UCHAR level) const {
    if (defect_ == Defect::kIgnoresDisable) return ever_enabled_ && level <= 4;
    if (!enabled_) return false;
    if (defect_ == Defect::kAboveLevel) return true;
    return level <= level_ && (any_ == 0 || (any_ & 0x1) != 0) && (all_ & 0x1) == all_;
  }

  static void WINAPI callback(LPCGUID, ULONG code, UCHAR level, ULONGLONG any, ULONGLONG all,
                              PEVENT_FILTER_DESCRIPTOR, PVOID context) {
    auto* self = static_cast<Provider*>(context);
    if (code == EVENT_CONTROL_CODE_ENABLE_PROVIDER) {
      self->level_ = level;
      self->any_ = any;
      self->all_ = all;
      self->enabled_ = true;
      self->ever_enabled_ = true;
    } else if (code == EVENT_CONTROL_CODE_DISABLE_PROVIDER) {
      self->enabled_ = false;
    }
  }

  Defect defect_;
  REGHANDLE handle_ = 0;
  std::atomic<bool> enabled_{false}, ever_enabled_{false};
  std::atomic<UCHAR> level_{0};
  std::atomic<ULONGLONG> any_{0}, all_{0};
};

ProviderReport check(Defect defect) {
  auto provider = std::make_shared<Provider>(defect);
  ProviderCheckOptions options;
  options.step = std::chrono::milliseconds(60);
  return check_provider([provider] { provider->register_provider(); },
                        [provider] { provider->work(); },
                        [provider] { provider->unregister_provider(); }, options);
}

TEST(TestingProviderCheck, ACorrectProviderPasses) {
  const ProviderReport report = check(Defect::kNone);
  EXPECT_TRUE(report.passed()) << report.text();
  EXPECT_EQ(report.providers.size(), 1u) << report.text();
  // Every rule the observation can see was judged: those left are the ones it cannot see.
  for (const ProviderFinding& f : report.not_judged) {
    EXPECT_EQ(f.observed, "not_observable") << f.rule << ": " << f.text;
  }
}

TEST(TestingProviderCheck, WritingAboveTheLevelFailsProvEventEnabled) {
  const ProviderReport report = check(Defect::kAboveLevel);
  EXPECT_FALSE(report.passed());
  EXPECT_THAT(report.failed_rules(), Contains("PROV-EVENT-ENABLED")) << report.text();
}

TEST(TestingProviderCheck, IgnoringDisableFailsProvRecord) {
  const ProviderReport report = check(Defect::kIgnoresDisable);
  EXPECT_FALSE(report.passed());
  EXPECT_THAT(report.failed_rules(), Contains("PROV-RECORD")) << report.text();
}

TEST(TestingProviderCheck, SettingTraitsTwiceFailsTrSetOnce) {
  const ProviderReport report = check(Defect::kTraitsTwice);
  EXPECT_FALSE(report.passed());
  EXPECT_THAT(report.failed_rules(), Contains("TR-SET-ONCE")) << report.text();
}

TEST(TestingProviderCheck, NoProviderRegisteredIsAnError) {
  const ProviderReport report = check_provider([] {}, [] {}, [] {});
  EXPECT_FALSE(report.passed());
  EXPECT_THAT(report.text(), ::testing::HasSubstr("no provider registered"));
}

}  // namespace
}  // namespace etwh::testing
