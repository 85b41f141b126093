// The stress console from fixed results: the table's rows, units and alignment, its width; the
// progress line's time left, drawn on a terminal only and erased when a run ends.
#include "harness/stress/stress_console.h"

#include "harness/report/console_lines.h"

#include <gtest/gtest.h>

#include <sstream>

namespace etwh::stress {
namespace {

RunResult fixed_run() {
  RunResult r;
  r.profile.name = "fast_steady";
  SessionResult s;
  s.name = "etwh-1-stress-0-0";
  s.written = 1234567;
  s.delivered = 1234000;
  s.reported_lost = 567;
  s.balanced = true;
  s.events_per_s = 812345;
  s.lag_ms = 0.42;
  for (int i = 0; i < 1000; ++i) s.latency.record(12000);  // 12 us
  s.latency.record(450000);                                // one at 450 us
  s.consumer_cpu_share = 0.5;
  s.consumer_preemptions = 3;
  s.loss_steps = {{100, 567, 40}};
  r.sessions = {s};
  r.attempts = 1234567;
  r.write_events_per_s = 812345;
  r.writer_cpu_ns_per_event = 120.5;
  r.consumer_cpu_ns_per_event = 80;
  r.writer_peak_rss_kb = 3400;
  r.consumer_peak_rss_kb = 9000;
  r.failures = {"session etwh-1-stress-0-0: something did not hold"};
  return r;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(StressTable, ARowPerSessionWithUnitsAndTheFloorsUnderTheLatencyColumns) {
  LatencyHistogram same;
  for (int i = 0; i < 100; ++i) same.record(3100);
  const std::string text =
      run_table({"FAIL", "fast_steady (repetition 2/3)", 2.31}, fixed_run(),
                {{"wake-up, same CPU", &same, ""}, {"wake-up, other CPU", nullptr, "one CPU"}}, 0);
  const std::vector<std::string> lines = lines_of(text);
  ASSERT_GE(lines.size(), 6u) << text;
  EXPECT_EQ(lines[0], "FAIL  fast_steady (repetition 2/3)  (2.31 s)");
  const std::string& head = lines[1];
  const std::string& session = lines[2];
  const std::string& floor = lines[3];
  EXPECT_NE(session.find("1,234,567"), std::string::npos) << session;
  EXPECT_NE(session.find("1,234,000"), std::string::npos) << session;
  EXPECT_NE(session.find("812 k/s"), std::string::npos) << session;
  EXPECT_NE(session.find("12.0 us"), std::string::npos) << session;  // p50
  EXPECT_NE(session.find("420 us"), std::string::npos) << session;   // lag, 0.42 ms
  EXPECT_NE(floor.find("floor: wake-up, same CPU"), std::string::npos) << floor;
  EXPECT_NE(floor.find("3.10 us"), std::string::npos) << floor;
  // Right-aligned columns: p50 ends where its heading ends, in the session's row and the floor's.
  const std::size_t p50_end = head.find("p50") + 3;
  EXPECT_EQ(session.substr(p50_end - 7, 7), "12.0 us") << head << "\n" << session;
  EXPECT_EQ(floor.substr(p50_end - 7, 7), "3.10 us") << head << "\n" << floor;
  EXPECT_NE(text.find("floor: wake-up, other CPU: not measured, one CPU"), std::string::npos);
  EXPECT_NE(text.find("\n  s0: consumer thread 50% CPU, preempted 3 times\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("\n  s0: lost 567: EventsLost 0, RealTimeBuffersLost 0; in 1 steps, "
                      "40.0 ms to 40.0 ms behind\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  CPU/event  writer 120 ns, consumer 80 ns"), std::string::npos) << text;
  EXPECT_NE(text.find("  writes     1,234,567 (812 k/s), refused 0"), std::string::npos) << text;
  EXPECT_NE(text.find("  FAIL session s0: something did not hold"), std::string::npos) << text;
  for (const std::string& line : lines) EXPECT_LE(line.size(), 100u) << line;
}

TEST(StressTable, CountsWiderThanTheirColumnStaySeparated) {
  RunResult r = fixed_run();
  r.sessions[0].written = 18225911;
  r.sessions[0].delivered = 6333795;
  r.sessions[0].reported_lost = 11892116;
  const std::string text = run_table({"PASS", "file_max_rate", 1.0}, r, {}, 0);
  EXPECT_NE(text.find("6,333,795 11,892,116"), std::string::npos) << text;
}

TEST(StressTable, LinesAreCutToTheWidth) {
  const std::string text = run_table({"PASS", "p", 1}, fixed_run(), {}, 60);
  for (const std::string& line : lines_of(text)) EXPECT_LE(visible_width(line), 60u) << line;
}

TEST(StressProgress, TimeLeftCountsTheRunsToComeAndTheirOverhead) {
  std::ostringstream out;
  StressProgress p(out, true, {3, 3, 3}, 0);
  p.start(0, "fast_steady");
  EXPECT_EQ(p.text(1.0), "[1/3] fast_steady: 1.0 of 3.0 s, about 8 s left");
  p.finish(5.0);  // 2 s beyond its duration: each run to come is expected to take as much
  p.start(1, "fast_steady (repetition 2/3)");
  EXPECT_EQ(p.text(0.5, "delivered s0 10"),
            "[2/3] fast_steady (repetition 2/3): 0.5 of 3.0 s, delivered s0 10, about 10 s left");
}

TEST(StressProgress, DrawnOnATerminalOnlyAndErasedWhenTheRunEnds) {
  std::ostringstream piped;
  {
    StressProgress p(piped, false, {1}, 0);
    p.start(0, "x");
    p.update(0.5);
    p.finish(1);
  }
  EXPECT_EQ(piped.str(), "");
  std::ostringstream terminal;
  StressProgress p(terminal, true, {1}, 0);
  p.start(0, "x");
  p.update(0.5);
  p.finish(1);
  const std::string text = terminal.str();
  EXPECT_NE(text.find("\r\x1b[K[1/1] x: 0.5 of 1.0 s, about 1 s left"), std::string::npos) << text;
  EXPECT_TRUE(text.ends_with("\r\x1b[K")) << text;  // erased
}

}  // namespace
}  // namespace etwh::stress
