// etwh::testing's provider check: one call in a unit test asks "does my provider follow the
// documented rules?". While your code runs, the provider is walked through the catalog's
// session schedule (the one `etwh observe` uses: levels, MatchAny/MatchAll, an event ID filter,
// a second session, capture state, disable, re-enable), with etwrt's observation of this process
// on; then the catalog's provider rules are judged (PROV-RECORD: no write after DISABLE,
// PROV-EVENT-ENABLED: no write above the enabled level or outside the keywords, CB-FAST,
// TR-SET-ONCE, TR-SIZE-256, DESC-*) and every failed check is a finding naming its rule.
// Linux (etwrt) only: on Windows the report says the check is not available there.
//
//   TEST(MyProvider, FollowsTheRules) {
//     etwh::testing::ProviderReport report = etwh::testing::check_provider(
//         [] { my_provider_register(); }, [] { my_provider_do_work(); },
//         [] { my_provider_unregister(); });
//     EXPECT_TRUE(report.passed()) << report.text();
//   }
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace etwh::testing {

// A rule that failed (or could not be judged), as data.
struct ProviderFinding {
  std::string provider;  // the provider's GUID, {8-4-4-4-12}
  std::string rule;      // the catalog's rule ID, "PROV-RECORD"
  std::string check;     // what was compared; "not_judged" for a rule not judged
  std::string expected, observed;
  std::string step;  // the schedule step it happened in
  std::string text;  // the whole sentence
};

// What the check found.
//
//   ProviderReport r = check_provider(...);
//   EXPECT_THAT(r.failed_rules(), ::testing::IsEmpty()) << r.text();
struct ProviderReport {
  std::vector<std::string> providers;       // the GUIDs of the providers judged
  std::vector<ProviderFinding> failures;    // failed checks
  std::vector<ProviderFinding> not_judged;  // rules that could not be judged, and why
  std::vector<std::string> errors;          // the check itself could not run as asked

  // No failure and no error (a rule not judged is no failure: see not_judged).
  bool passed() const { return failures.empty() && errors.empty(); }
  // The rules of the failures, each once, sorted.
  std::vector<std::string> failed_rules() const;
  // Every provider, failure, rule not judged and error, one a line.
  std::string text() const;
};

struct ProviderCheckOptions {
  // How long each step of the schedule lasts; 0: the schedule's own (150 ms).
  std::chrono::milliseconds step{0};
  // The whole check's limit.
  std::chrono::milliseconds timeout{30000};
};

// Runs `register_provider` (your EventRegister / TraceLoggingRegister, and traits), then calls
// `work` again and again (on this thread, about every millisecond) while each provider it
// registered is walked through the schedule, then `unregister_provider`; judges what the
// observation saw. The providers must register inside `register_provider`: a provider
// registered before the check is not observed.
//
//   auto report = etwh::testing::check_provider(register_fn, work_fn, unregister_fn);
ProviderReport check_provider(const std::function<void()>& register_provider,
                              const std::function<void()>& work,
                              const std::function<void()>& unregister_provider,
                              const ProviderCheckOptions& options = {});

}  // namespace etwh::testing
