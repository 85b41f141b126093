#include "harness/stress/engine.h"
#include "tests/lib/thrown.h"

#include <gtest/gtest.h>

namespace etwh::stress {
namespace {

// A single-session run where 1000 events were written and 600 delivered; 400 were lost by
// reclaim (10 buffers), announced by RTLostBuffer notices.
RunResult balanced_slow_run() {
  RunResult run;
  run.profile.name = "p";
  run.attempts = 1000;
  run.accepted = 1000;
  run.first_write_ns = 1'000'000'000;
  run.last_write_ns = 2'000'000'000;
  SessionResult s;
  s.name = "s0";
  s.delivered = 600;
  s.realtime_buffers_lost = 10;
  s.lost_buffers_announced = 10;
  s.lost_buffer_events_announced = 400;
  s.missing = 400;
  s.gaps = 3;
  s.last_delivery_ns = 2'500'000'000;
  run.sessions.push_back(s);
  return run;
}

bool mentions(const RunResult& run, const std::string& text) {
  for (const auto& f : run.failures) {
    if (f.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(StressJudge, BalancedRunPassesWithDerivedFigures) {
  RunResult run = balanced_slow_run();
  run.profile.expect_loss = LossExpectation::kSome;
  judge_run(run);
  EXPECT_TRUE(run.failures.empty()) << run.failures.front();
  const SessionResult& s = run.sessions[0];
  EXPECT_TRUE(s.balanced);
  EXPECT_EQ(s.written, 1000u);
  EXPECT_EQ(s.reported_lost, 400u);
  EXPECT_DOUBLE_EQ(s.events_per_s, 600 / 1.5);
  EXPECT_DOUBLE_EQ(s.lag_ms, 500.0);
}

// A file session: 1000 written, 700 in the file, 300 lost (200 refused at write, 100 in a
// circular file's overwritten buffer): no realtime notices, the file's header counts the loss.
RunResult file_run() {
  RunResult run;
  run.profile.name = "f";
  run.profile.log_file = FileSettings{FileMode::kCircular, 1};
  run.attempts = 1000;
  run.refused_no_buffer = 200;
  run.disk_mb_per_s = 400;
  SessionResult s;
  s.name = "s0";
  s.delivered = 700;
  s.events_lost = 300;
  s.missing = 300;
  s.gaps = 2;
  s.file = FileResult{};
  s.file->header_events_lost = 300;
  s.file->mb_per_s = 100;
  run.sessions.push_back(s);
  return run;
}

TEST(StressJudge, AFileSessionIsAccountedByItsFileAndItsHeader) {
  RunResult run = file_run();
  judge_run(run);
  EXPECT_TRUE(run.failures.empty()) << run.failures.front();
  EXPECT_TRUE(run.sessions[0].balanced);
  ASSERT_TRUE(run.sessions[0].file->of_disk_rate);
  EXPECT_DOUBLE_EQ(*run.sessions[0].file->of_disk_rate, 0.25);

  RunResult header = file_run();
  header.sessions[0].file->header_events_lost = 299;
  judge_run(header);
  EXPECT_TRUE(mentions(header,
                       "f session s0: the log file's header says EventsLost 299, "
                       "ControlTrace 300"));

  RunResult short_file = file_run();
  short_file.sessions[0].delivered = 699;
  judge_run(short_file);
  EXPECT_TRUE(mentions(short_file, "written 1000 != delivered 699 + reported lost 300"));

  // Refused calls above every session's EventsLost are still a failure.
  RunResult refused = file_run();
  refused.refused_no_buffer = 301;
  judge_run(refused);
  EXPECT_TRUE(mentions(refused, "EventWrite refused 301 calls"));

  RunResult no_disk = file_run();
  no_disk.disk_mb_per_s.reset();
  judge_run(no_disk);
  EXPECT_FALSE(no_disk.sessions[0].file->of_disk_rate) << "no ratio without the disk's rate";
}

// The buffers' span: the writers took 1 s for 50 buffers, so the session's 8 (at most) last
// 160 ms. None without a buffer written. The consumer thread's figures are its series' sums,
// its CPU shares each step's and the run's time.
TEST(StressJudge, TheBuffersSpanIsTheWriteTimeOfAsManyBuffersAsTheSessionMayHave) {
  RunResult run = balanced_slow_run();
  SessionResult& s = run.sessions[0];
  s.buffers_written = 50;
  s.number_of_buffers = 4;
  s.maximum_buffers = 8;
  SeriesPoint a, b;
  a.t_ms = 0.001;  // 1000 ns after go
  b.t_ms = 0.002;
  a.consumer_cpu_ns = 700;
  a.consumer_preemptions = 2;
  b.consumer_cpu_ns = 300;
  b.consumer_preemptions = 1;
  s.series = {a, b};
  judge_run(run);
  ASSERT_TRUE(s.buffers_span_ms.has_value());
  EXPECT_DOUBLE_EQ(*s.buffers_span_ms, 160.0);
  EXPECT_EQ(s.consumer_cpu_ns, 1000u);
  EXPECT_EQ(s.consumer_preemptions, 3u);
  EXPECT_NEAR(s.series[0].consumer_cpu_share, 0.7, 1e-9) << "700 ns of CPU in a 1000 ns step";
  EXPECT_NEAR(s.series[1].consumer_cpu_share, 0.3, 1e-9);
  EXPECT_NEAR(s.consumer_cpu_share, 0.5, 1e-9) << "1000 ns of CPU in 2000 ns from go";
  s.buffers_written = 0;
  judge_run(run);
  EXPECT_FALSE(s.buffers_span_ms.has_value());
}

// Where the loss was: a reclaim during a stall is reported at the consumer's first poll after
// it, so a step's loss is set against the stall of that step or the one before. Here the
// buffers last 160 ms: 300 events lost after a 200 ms silence (in the step before), 100 more
// with the consumer at most 50 ms behind.
TEST(StressJudge, LossStepsSayHowFarBehindTheConsumerWas) {
  RunResult run = balanced_slow_run();
  SessionResult& s = run.sessions[0];
  s.buffers_written = 50;
  s.maximum_buffers = 8;
  std::vector<SeriesPoint> series(4);
  for (std::size_t i = 0; i < series.size(); ++i) series[i].t_ms = 100.0 * double(i + 1);
  series[0].silence_max_ns = 200'000'000;  // the stall, no loss reported yet
  series[1].lost = 300;                    // reported once the consumer is back
  series[1].latency_max_ns = 10'000'000;
  series[2].lost = 300;  // nothing more
  series[3].lost = 400;
  series[3].latency_max_ns = 50'000'000;
  s.series = series;
  judge_run(run);
  ASSERT_EQ(s.loss_steps.size(), 2u);
  EXPECT_DOUBLE_EQ(s.loss_steps[0].t_ms, 200.0);
  EXPECT_EQ(s.loss_steps[0].lost, 300u);
  EXPECT_DOUBLE_EQ(s.loss_steps[0].behind_ms, 200.0) << "the silence of the step before";
  EXPECT_EQ(s.loss_steps[1].lost, 100u);
  EXPECT_DOUBLE_EQ(s.loss_steps[1].behind_ms, 50.0);
  EXPECT_EQ(s.lost_behind_longer_than_buffers, 300u);
}

TEST(StressJudge, ImbalanceNamesSessionAndNumbers) {
  RunResult run = balanced_slow_run();
  run.sessions[0].delivered = 599;
  run.sessions[0].missing = 401;
  judge_run(run);
  EXPECT_FALSE(run.sessions[0].balanced);
  EXPECT_TRUE(mentions(run,
                       "p session s0: written 1000 != delivered 599 + reported lost 400 "
                       "(EventsLost 0 + 400 events in 10 realtime buffers lost): 1 events "
                       "unaccounted for"))
      << run.failures.front();
}

TEST(StressJudge, PseudoEventsMustMatchTheCounters) {
  RunResult run = balanced_slow_run();
  run.sessions[0].lost_buffers_announced = 9;
  judge_run(run);
  EXPECT_TRUE(mentions(run,
                       "RTLostBuffer pseudo-events announced 9 buffers, ControlTrace says "
                       "RealTimeBuffersLost 10"));
  RunResult refused = balanced_slow_run();
  refused.sessions[0].events_lost = 5;  // no RTLostEvent announced them, no call was refused
  refused.sessions[0].delivered = 595;
  judge_run(refused);
  EXPECT_TRUE(refused.sessions[0].balanced);
  EXPECT_TRUE(mentions(refused,
                       "RTLostEvent pseudo-events announced 0 events refused, "
                       "ControlTrace says EventsLost 5"));
  EXPECT_TRUE(mentions(refused, "EventWrite refused 0 calls"));
}

TEST(StressJudge, RefusalsMustLieBetweenMaxAndSumOfEventsLost) {
  RunResult run = balanced_slow_run();
  for (auto& s : run.sessions) {
    s.events_lost = s.lost_events_announced = 4;
    s.delivered = 596;
    s.missing = 404;
  }
  SessionResult second = run.sessions[0];
  second.name = "s1";
  second.events_lost = second.lost_events_announced = 2;
  second.delivered = 598;
  second.missing = 402;
  run.sessions.push_back(second);
  run.refused_no_buffer = 5;  // within [4, 6]
  RunResult ok = run;
  judge_run(ok);
  EXPECT_TRUE(ok.failures.empty()) << ok.failures.front();
  run.refused_no_buffer = 3;  // below session s0's 4
  judge_run(run);
  EXPECT_TRUE(mentions(run, "expected refused within [4, 6]"));
}

TEST(StressJudge, SequenceFindingsFail) {
  RunResult dup = balanced_slow_run();
  dup.sessions[0].duplicates = 2;
  judge_run(dup);
  EXPECT_TRUE(mentions(dup, "2 duplicate events delivered"));
  RunResult gap = balanced_slow_run();
  gap.sessions[0].missing = 399;
  judge_run(gap);
  EXPECT_TRUE(
      mentions(gap, "sequence numbers show 399 events missing in 3 gaps, 400 reported lost"));
}

TEST(StressJudge, LossExpectationIsPartOfTheVerdict) {
  RunResult none = balanced_slow_run();
  none.profile.expect_loss = LossExpectation::kNone;
  judge_run(none);
  EXPECT_TRUE(mentions(none, "the profile expects no loss, 400 events were lost"));
  RunResult some;
  some.profile.name = "q";
  some.profile.expect_loss = LossExpectation::kSome;
  some.attempts = 10;
  SessionResult s;
  s.delivered = 10;
  some.sessions.push_back(s);
  judge_run(some);
  EXPECT_TRUE(mentions(some, "the profile expects loss"));
}

}  // namespace
}  // namespace etwh::stress

namespace etwh::stress {
namespace {

TEST(StressJudge, SeriesTakesWrittenFromTheWritersSamplesAndCpuPerEvent) {
  RunResult run = balanced_slow_run();
  // One writer process sampled at 100 and 200 ms after go (which was at 1 s), done at 250 ms.
  run.go_ns = 1'000'000'000;
  WriterSamples w;
  w.start_ns = run.go_ns;
  w.step_ns = 100'000'000;
  w.samples = {300, 700};
  w.end_ns = run.go_ns + 250'000'000;
  w.total = 1000;
  run.writer_samples = {w};
  SessionResult& s = run.sessions[0];
  s.series = {{100, 0, 250, 0, 0, 3},
              {200, 0, 500, 100, 0, 4},
              {300, 0, 550, 300, 0, 5},
              {350, 0, 600, 400, 0, 0}};
  run.writer_cpu = {0.001, 0.0005};
  run.consumer_cpu = {0.0003, 0.0};
  judge_run(run);
  const auto& series = run.sessions[0].series;
  EXPECT_EQ(series[0].written, 300u);
  EXPECT_EQ(series[0].lag_events, 50u);
  EXPECT_EQ(series[1].written, 700u);
  EXPECT_EQ(series[1].lag_events, 100u);
  EXPECT_EQ(series[2].written, 1000u);  // past the writers' samples: they had finished
  EXPECT_EQ(series[2].lag_events, 150u);
  EXPECT_EQ(series[3].written, 1000u);  // at stop: balanced
  EXPECT_EQ(series[3].lag_events, 0u);
  EXPECT_DOUBLE_EQ(run.writer_cpu_ns_per_event, 1500.0);   // 1.5 ms / 1000 writes
  EXPECT_DOUBLE_EQ(run.consumer_cpu_ns_per_event, 500.0);  // 0.3 ms / 600 delivered
}

// A session of three steps whose slowest deliveries were 300, 900 and 0 ns (the last step
// delivered nothing), each split into quiet and behind with the longest silence in its wait, and
// whose run maximum is 900 ns.
SessionResult session_with_series() {
  SessionResult s;
  s.name = "s0";
  for (std::uint64_t ns : {300u, 900u, 50u}) s.latency.record(ns);
  SeriesPoint a, b, c;
  a.t_ms = 100;
  a.latency_max_ns = 300;
  a.latency_max_quiet_ns = 300;
  a.latency_max_silence_ns = 300;
  b.t_ms = 200;
  b.latency_max_ns = 900;
  b.latency_max_quiet_ns = 200;
  b.latency_max_behind_ns = 700;
  b.latency_max_silence_ns = 600;
  c.t_ms = 250;
  s.series = {a, b, c};
  return s;
}

TEST(StressSeriesCheck, ConsistentSeriesPasses) {
  EXPECT_NO_THROW(check_series(session_with_series()));
}

// check_series's HARNESS_ERROR message for `s` ("" when it passes).
std::string series_error(const SessionResult& s) {
  return test_support::thrown<StressHarnessError>([&] { check_series(s); }, "");
}

TEST(StressSeriesCheck, ASplitThatDoesNotAddUpIsAHarnessError) {
  SessionResult s = session_with_series();
  s.series[1].latency_max_behind_ns = 699;  // another record's split paired with the max
  const std::string what = series_error(s);
  EXPECT_NE(what.find("step at 200.0 ms"), std::string::npos) << what;
  EXPECT_NE(what.find("quiet 200 ns + behind 699 ns"), std::string::npos) << what;
  EXPECT_NE(what.find("latency 900 ns"), std::string::npos) << what;
  s = session_with_series();
  s.series[2].latency_max_quiet_ns = 1;  // a split where no delivery was
  EXPECT_THROW(check_series(s), StressHarnessError);
}

TEST(StressSeriesCheck, ASilenceOutsideQuietAndTheLatencyIsAHarnessError) {
  SessionResult s = session_with_series();
  s.series[1].latency_max_silence_ns = 199;  // shorter than the quiet stretch it includes
  const std::string what = series_error(s);
  EXPECT_NE(what.find("step at 200.0 ms"), std::string::npos) << what;
  EXPECT_NE(what.find("silence in the slowest delivery's wait, 199 ns"), std::string::npos) << what;
  s = session_with_series();
  s.series[1].latency_max_silence_ns = 901;  // longer than the wait
  EXPECT_THROW(check_series(s), StressHarnessError);
  s = session_with_series();
  s.series[2].latency_max_silence_ns = 1;  // a silence where no delivery was
  EXPECT_THROW(check_series(s), StressHarnessError);
  // The bounds themselves hold.
  s = session_with_series();
  s.series[1].latency_max_silence_ns = 200;
  EXPECT_NO_THROW(check_series(s));
  s.series[1].latency_max_silence_ns = 900;
  EXPECT_NO_THROW(check_series(s));
}

TEST(StressSeriesCheck, StepsMissingTheRunsMaximumIsAHarnessError) {
  SessionResult s = session_with_series();
  s.latency.record(1000);
  EXPECT_THROW(check_series(s), StressHarnessError);
}

}  // namespace
}  // namespace etwh::stress
