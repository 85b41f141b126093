#include "harness/report/stress_formats.h"

#include <gtest/gtest.h>

namespace etwh::stress {
namespace {

using nlohmann::ordered_json;
using P = ordered_json::json_pointer;

StressRunInfo info() {
  StressRunInfo i;
  i.platform = "etwrt";
  i.repetitions = 2;
  i.duration_s = 1.5;
  i.reader_nap_asked_us = 100;
  i.stale_sessions = {{"etwh-1-x", 1, 0}};
  return i;
}

// A realtime run of one session: every figure the document carries comes from these fields.
Outcome passed_run() {
  Outcome o;
  o.profile.name = "fast_steady";
  o.repetition = 2;
  o.repetitions = 2;
  o.floor_other_cpu.unavailable = "one CPU";
  RunResult r;
  SessionResult s;
  s.name = "s0";
  s.written = 1000;
  s.delivered = 990;
  s.events_lost = 4;
  s.lost_buffer_events_announced = 6;
  s.reported_lost = 10;
  s.latency.record(100);
  s.latency.record(120);
  s.loss_steps = {{50.0, 10, 2.5}};
  r.sessions.push_back(s);
  o.run = r;
  return o;
}

TEST(StressJson, RunInfoAndOneRunsFigures) {
  Outcome failed;
  failed.profile.name = "slow";
  failed.harness_error = "no broker";
  const ordered_json doc = results_document(info(), {passed_run(), failed});
  EXPECT_EQ(doc["schema_version"], 1);
  EXPECT_EQ(doc[P("/run_info/platform")], "etwrt");
  EXPECT_EQ(doc[P("/run_info/duration")], 1.5);
  EXPECT_EQ(doc[P("/run_info/stale_sessions/0/name")], "etwh-1-x");
  const ordered_json& run = doc["results"][0];
  EXPECT_EQ(run["status"], "PASS");
  EXPECT_EQ(run["repetition"], 2);
  EXPECT_EQ(run[P("/reader_nap_us/asked")], 100.0);
  EXPECT_EQ(run[P("/wake_floor_us/other_cpu/unavailable")], "one CPU");
  EXPECT_TRUE(run["broker"].is_null());  // none read
  EXPECT_TRUE(run["disk"].is_null());    // realtime
  const ordered_json& s = run["sessions"][0];
  EXPECT_EQ(s["written"], 1000);
  EXPECT_EQ(s["delivered"], 990);
  EXPECT_EQ(s["reported_lost"], 10);
  EXPECT_EQ(s[P("/lost/events_lost")], 4);
  EXPECT_EQ(s[P("/lost/realtime_buffer_events_lost")], 6);
  EXPECT_DOUBLE_EQ(s[P("/latency_us/p50")].get<double>(), 0.1);  // exact below 128 ns
  EXPECT_DOUBLE_EQ(s[P("/latency_us/max")].get<double>(), 0.12);
  EXPECT_EQ(s[P("/latency_histogram/count")], 2);
  EXPECT_EQ(s[P("/latency_histogram/buckets/0")], ordered_json({100, 100, 100, 1}));
  EXPECT_TRUE(s[P("/latency_vs_floor/other_cpu")].is_null());  // no floor on another CPU
  EXPECT_EQ(s[P("/loss_steps/0/behind_ms")], 2.5);
  EXPECT_TRUE(s["file"].is_null());
  // A run that could not be carried out has its error and no figures.
  const ordered_json& error = doc["results"][1];
  EXPECT_EQ(error["status"], "HARNESS_ERROR");
  EXPECT_EQ(error["message"], "no broker");
  EXPECT_FALSE(error.contains("sessions"));
}

TEST(StressJson, TheJsonFormatWritesTheDocument) {
  const ordered_json doc = results_document(info(), {passed_run()});
  const std::string text = stress_json_text({doc, nullptr});
  EXPECT_EQ(ordered_json::parse(text), doc);
  EXPECT_EQ(text.back(), '\n');
}

}  // namespace
}  // namespace etwh::stress
