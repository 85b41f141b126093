#include "harness/report/trace/trace.h"

#include <gtest/gtest.h>

#include <sstream>
#include <thread>
#include <vector>

namespace etwh::trace {
namespace {

using nlohmann::json;

const json& events(const json& doc) { return doc.at("traceEvents"); }

TEST(Trace, DocumentHasTheFormatsTopLevelFields) {
  Trace t(1'000'000);
  t.set_metadata("command", "etwh run");
  const json doc = t.document();
  EXPECT_TRUE(doc.at("traceEvents").is_array());
  EXPECT_EQ(doc.at("displayTimeUnit"), "ns");
  EXPECT_EQ(doc.at("metadata").at("command"), "etwh run");
}

TEST(Trace, CompleteSliceInMicrosecondsFromTheOrigin) {
  Trace t(1'000'000);
  t.complete({7, 8}, "StartTrace", "controller", 1'002'500, 1'004'000, {{"status", 0}});
  const json doc = t.document();
  const json& e = events(doc).at(0);
  EXPECT_EQ(e.at("ph"), "X");
  EXPECT_EQ(e.at("name"), "StartTrace");
  EXPECT_EQ(e.at("cat"), "controller");
  EXPECT_EQ(e.at("pid"), 7);
  EXPECT_EQ(e.at("tid"), 8);
  EXPECT_DOUBLE_EQ(e.at("ts").get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(e.at("dur").get<double>(), 1.5);
  EXPECT_EQ(e.at("args").at("status"), 0);
}

TEST(Trace, AnEndBeforeTheBeginIsAnEmptySlice) {
  Trace t(0);
  t.complete({1, 1}, "x", "c", 5000, 4000);
  EXPECT_DOUBLE_EQ(events(t.document()).at(0).at("dur").get<double>(), 0.0);
}

TEST(Trace, CounterInstantAndNames) {
  Trace t(0);
  t.counter(3, "lag", 2000, {{"events", 12}});
  t.instant({3, 4}, "lost buffers", "loss", 1000, {{"buffers", 2}});
  t.name_process(3, "session s1");
  t.name_thread({3, 4}, "consumer");
  const json doc = t.document();
  const json& ev = events(doc);
  ASSERT_EQ(ev.size(), 4u);
  // Names first, then by time.
  EXPECT_EQ(ev[0].at("ph"), "M");
  EXPECT_EQ(ev[0].at("name"), "process_name");
  EXPECT_EQ(ev[0].at("args").at("name"), "session s1");
  EXPECT_EQ(ev[1].at("name"), "thread_name");
  EXPECT_EQ(ev[1].at("tid"), 4);
  EXPECT_EQ(ev[2].at("ph"), "i");
  EXPECT_EQ(ev[2].at("s"), "t");
  EXPECT_DOUBLE_EQ(ev[2].at("ts").get<double>(), 1.0);
  EXPECT_EQ(ev[3].at("ph"), "C");
  EXPECT_EQ(ev[3].at("args").at("events"), 12);
}

TEST(Trace, EnclosingSliceComesBeforeTheSlicesItContains) {
  Trace t(0);
  t.complete({1, 1}, "inner", "c", 1000, 2000);
  t.complete({1, 1}, "outer", "c", 1000, 9000);
  t.complete({1, 1}, "first", "c", 0, 500);
  const json doc = t.document();
  const json& ev = events(doc);
  EXPECT_EQ(ev[0].at("name"), "first");
  EXPECT_EQ(ev[1].at("name"), "outer");
  EXPECT_EQ(ev[2].at("name"), "inner");
}

TEST(Trace, SliceRecordsItsSpanAndArguments) {
  Trace t;
  {
    Slice s(&t, {1, 2}, "EnableTraceEx2", "controller", {{"session", "s1"}});
    s.arg("status", 0);
  }
  ASSERT_EQ(t.size(), 1u);
  const json doc = t.document();
  const json& e = events(doc).at(0);
  EXPECT_EQ(e.at("name"), "EnableTraceEx2");
  EXPECT_GE(e.at("ts").get<double>(), 0.0);
  EXPECT_GE(e.at("dur").get<double>(), 0.0);
  EXPECT_EQ(e.at("args").at("session"), "s1");
  EXPECT_EQ(e.at("args").at("status"), 0);
}

TEST(Trace, SliceEndedEarlyIsRecordedOnce) {
  Trace t;
  {
    Slice s(&t, {1, 2}, "a", "c");
    s.end();
    s.end();
  }
  EXPECT_EQ(t.size(), 1u);
}

TEST(Trace, SliceWithoutATraceDoesNothing) {
  Slice s(nullptr, {1, 2}, "a", "c");
  s.arg("k", 1);
  s.end();
  SUCCEED();
}

TEST(Trace, AppendsFromManyThreads) {
  Trace t(0);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&t, i] {
      for (int k = 0; k < 1000; ++k) t.complete({1, i}, "w", "c", k * 10, k * 10 + 5);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(t.size(), 4000u);
}

TEST(Trace, WritesOneJsonDocument) {
  Trace t(0);
  t.complete({1, 1}, "a", "c", 0, 1000);
  const json back = json::parse(t.text());
  EXPECT_EQ(back.at("traceEvents").size(), 1u);
}

}  // namespace
}  // namespace etwh::trace
