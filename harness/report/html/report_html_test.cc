#include "harness/model/input_error.h"
#include "tests/lib/thrown.h"
#include "harness/report/html/inputs.h"
#include "harness/report/html/page.h"
#include "harness/report/html/view.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace etwh::report_html {
namespace {

using nlohmann::json;

json run_report(const std::string& platform, const std::string& status_of_b) {
  return {{"schema_version", 2},
          {"run_info", {{"platform", platform}, {"start_time", "t"}}},
          {"results",
           {{{"id", "case-a"},
             {"rules", {"R1"}},
             {"status", "PASS"},
             {"message", ""},
             {"duration", 0.5},
             {"findings", json::array()}},
            {{"id", "case-b"},
             {"rules", {"R1", "R2"}},
             {"status", status_of_b},
             {"message", "m"},
             {"duration", 1.0},
             {"findings", {{{"rule", "R2"}, {"expected", "1"}, {"observed", "2"}}}}}}},
          {"rules",
           {{{"id", "R1"}, {"status", status_of_b}, {"cases", 2}},
            {{"id", "R2"}, {"status", status_of_b}, {"cases", 1}}}}};
}

json stress_result(int duration_ms, int repetition, double rate) {
  json session = {{"name", "s"},
                  {"written", 10},
                  {"delivered", 10},
                  {"reported_lost", 0},
                  {"throughput", {{"events_per_s", rate}, {"mb_per_s", 1.0}}},
                  {"latency_us", {{"p50", 5}, {"p99", 9}, {"p999", 9}, {"max", 9}}},
                  {"consumer_lag_ms", 0.1},
                  {"latency_histogram", {{"buckets", {{1, 1000, 1999, 3}, {2, 2000, 2999, 1}}}}},
                  {"series",
                   {{{"t_ms", 100},
                     {"written", 10},
                     {"delivered", 10},
                     {"lost", 0},
                     {"lag_events", 0},
                     {"buffers_in_use", 1}}}}};
  return {{"id", "p"},
          {"repetition", repetition},
          {"profile", "p.json"},
          {"status", "PASS"},
          {"message", ""},
          {"duration", 0.3},
          {"parameters", {{"duration_ms", duration_ms}, {"buffers", {{"maximum", 8}}}}},
          {"writers", {{"events_per_s", rate}, {"cpu", {{"ns_per_event", 100}}}}},
          {"sessions", {session}}};
}

json stress_file(std::vector<json> results) {
  return {{"schema_version", 1}, {"run_info", {{"platform", "etwrt"}}}, {"results", results}};
}

Input input_of(const json& doc, const std::string& file) { return parse_input(doc.dump(1), file); }

TEST(ReportInputs, KindComesFromTheContent) {
  EXPECT_EQ(input_of(run_report("etwrt", "FAIL"), "x.json").kind, InputKind::kRun);
  EXPECT_EQ(input_of(stress_file({stress_result(100, 1, 5)}), "y.json").kind, InputKind::kStress);
  json compare = {{"kind", "stress"}, {"figures", json::array()}};
  EXPECT_EQ(input_of(compare, "z.json").kind, InputKind::kCompare);
  EXPECT_EQ(input_of({{"traceEvents", json::array()}}, "t.json").kind, InputKind::kTrace);
}

// A --trace file: a lane per process and thread, named by the metadata events; every other event
// a mark on its lane (slices with their duration).
TEST(ReportTimeline, LanesNamedByTheMetadataAndAMarkPerEvent) {
  const json trace = {
      {"traceEvents",
       {{{"ph", "M"},
         {"name", "process_name"},
         {"pid", 1},
         {"tid", 0},
         {"args", {{"name", "etwh run"}}}},
        {{"ph", "M"},
         {"name", "thread_name"},
         {"pid", 1},
         {"tid", 1},
         {"args", {{"name", "driver"}}}},
        {{"ph", "X"}, {"name", "case a"}, {"pid", 1}, {"tid", 1}, {"ts", 10.0}, {"dur", 5.0}},
        {{"ph", "C"}, {"name", "written"}, {"pid", 2}, {"ts", 12.0}, {"args", {{"n", 3}}}},
        {{"ph", "i"}, {"name", "lost"}, {"pid", 1}, {"tid", 1}, {"ts", 14.0}}}}};
  const Input in = input_of(trace, "t.json");
  const json v = timeline_view({&in});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0]["lanes"], json({"etwh run / driver", "process 2"}));
  ASSERT_EQ(v[0]["marks"].size(), 3u);
  EXPECT_EQ(v[0]["marks"][0]["dur"], 5.0);
  EXPECT_EQ(v[0]["marks"][1]["lane"], 1);
  EXPECT_EQ(v[0]["marks"][2]["ph"], "i");
  json bad = trace;
  bad["traceEvents"][2].erase("ts");
  const Input b = input_of(bad, "b.json");
  try {
    timeline_view({&b});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/traceEvents/2");
    EXPECT_NE(e.reason().find("\"ts\""), std::string::npos) << e.what();
  }
}

TEST(ReportInputs, SomethingElseIsRefusedWithFileAndPointer) {
  try {
    parse_input("{\n \"hello\": 1\n}", "other.json");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "other.json");
    EXPECT_EQ(e.pointer(), "/");
    EXPECT_NE(e.reason().find("not an etwh output"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_input("[1, 2", "broken.json"), InputError);
}

TEST(ReportInputs, ABadValueIsNamedByPointerAndLine) {
  json doc = run_report("wine", "FAIL");
  doc["results"][1]["status"] = 7;
  const Input in = input_of(doc, "bad.json");
  try {
    build_view({in}, "etwh test");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/results/1/status");
    EXPECT_EQ(e.reason(), "expected a string, got a number");
    EXPECT_GT(e.line(), 1u) << e.what();
  }
}

TEST(ReportConformance, OneColumnPerReportWithTheCasesOfEachRule) {
  const Input a = input_of(run_report("etwrt", "PASS"), "a.json");
  json wine = run_report("wine", "XFAIL");
  wine["rules"].push_back(
      {{"id", "R3"}, {"status", "UNSUPPORTED"}, {"cases", 0}, {"reason", "no case"}});
  const Input b = input_of(wine, "b.json");
  const json v = conformance_view({&a, &b});
  ASSERT_EQ(v["columns"].size(), 2u);
  EXPECT_EQ(v["columns"][1]["label"], "wine");
  ASSERT_EQ(v["rules"].size(), 3u);
  EXPECT_EQ(v["rules"][0]["id"], "R1");
  EXPECT_EQ(v["rules"][0]["cells"][1]["status"], "XFAIL");
  EXPECT_EQ(v["rules"][0]["cells"][1]["cases"], json({"case-a", "case-b"}));
  EXPECT_EQ(v["rules"][1]["cells"][0]["cases"], json({"case-b"}));
  EXPECT_TRUE(v["rules"][2]["cells"][0].is_null());  // R3 only in the wine report
  EXPECT_EQ(v["rules"][2]["cells"][1]["reason"], "no case");
  EXPECT_EQ(v["columns"][0]["cases"]["case-b"]["findings"][0]["observed"], "2");
  EXPECT_EQ(v["columns"][1]["counts"]["XFAIL"], 1);
}

// Version 3: each rule's verdict in each case is the report's (rule_verdicts); a rule whose
// checks passed in a failing case is no case of its red cell, and a failed check of a rule the
// case does not name puts the case under that rule.
TEST(ReportConformance, Version3CellsFollowTheRuleVerdictsOfTheCases) {
  json doc = run_report("etwrt", "FAIL");
  doc["schema_version"] = 3;
  doc["results"][0]["rule_verdicts"] = {
      {{"rule", "R1"}, {"verdict", "PASS"}, {"reason", "its checks passed"}}};
  doc["results"][1]["rule_verdicts"] = {
      {{"rule", "R1"}, {"verdict", "PASS"}, {"reason", "its checks passed"}},
      {{"rule", "R2"}, {"verdict", "FAIL"}, {"reason", "check x failed"}},
      {{"rule", "R9"}, {"verdict", "FAIL"}, {"reason", "check y failed"}}};
  doc["rules"] = {{{"id", "R1"}, {"status", "PASS"}, {"cases", 2}, {"not_reached", 0}},
                  {{"id", "R2"}, {"status", "FAIL"}, {"cases", 1}, {"not_reached", 0}},
                  {{"id", "R9"}, {"status", "FAIL"}, {"cases", 1}, {"not_reached", 0}}};
  const Input a = input_of(doc, "a.json");
  const json v = conformance_view({&a});
  EXPECT_EQ(v["rules"][0]["cells"][0]["status"], "PASS");
  EXPECT_EQ(v["rules"][2]["cells"][0]["cases"], json({"case-b"}));
  EXPECT_EQ(v["columns"][0]["cases"]["case-b"]["verdicts"]["R2"]["verdict"], "FAIL");
  EXPECT_EQ(v["columns"][0]["cases"]["case-b"]["verdicts"]["R1"]["reason"], "its checks passed");
  // A version 3 result without rule_verdicts is malformed.
  doc["results"][0].erase("rule_verdicts");
  const Input bad = input_of(doc, "bad.json");
  EXPECT_THROW(conformance_view({&bad}), InputError);
}

TEST(ReportConformance, TwoReportsOfOnePlatformAreToldApartByFile) {
  const Input a = input_of(run_report("etwrt", "PASS"), "a.json");
  const Input b = input_of(run_report("etwrt", "FAIL"), "b.json");
  const json v = conformance_view({&a, &b});
  EXPECT_EQ(v["columns"][0]["label"], "etwrt (a.json)");
  EXPECT_EQ(v["columns"][1]["label"], "etwrt (b.json)");
}

// Where stress_view finds `in` wrong: the error's pointer, or "(no error)".
std::string stress_error_at(const Input& in) {
  return test_support::thrown_as<InputError>([&] { stress_view({&in}); },
                                             [](const InputError& e) { return e.pointer(); });
}

TEST(ReportStress, LatencyCdfRisesToOneInMicroseconds) {
  const Input in = input_of(stress_file({stress_result(100, 1, 5)}), "s.json");
  const json v = stress_view({&in});
  const json& cdf = v["runs"][0]["sessions"][0]["cdf"];
  ASSERT_EQ(cdf.size(), 2u);
  EXPECT_DOUBLE_EQ(cdf[0][0].get<double>(), 1.999);
  EXPECT_DOUBLE_EQ(cdf[0][1].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(cdf[1][1].get<double>(), 1.0);
}

TEST(ReportStress, TheSlowestDeliverysSplitAndBatchesPassWhenGivenOnly) {
  json doc = stress_file({stress_result(100, 1, 5)});
  json& point = doc["results"][0]["sessions"][0]["series"][0];
  const Input old_file = input_of(doc, "old.json");  // before latency_max_us and the split
  EXPECT_FALSE(stress_view({&old_file})["runs"][0]["sessions"][0]["series"][0].contains(
      "latency_max_quiet_us"));
  point.update({{"latency_max_us", 9.5},
                {"latency_max_quiet_us", 7.25},
                {"latency_max_behind_us", 2.25},
                {"latency_max_silence_us", 7.5},
                {"latency_max_silence_partial", true},
                {"batch_max", 40},
                {"batch_mean", 12.5},
                {"silence_max_us", 8},
                {"consumer_cpu_share", 0.75},
                {"consumer_preemptions", 3}});
  const Input in = input_of(doc, "new.json");
  const json shown = stress_view({&in})["runs"][0]["sessions"][0]["series"][0];
  for (const char* key :
       {"latency_max_us", "latency_max_quiet_us", "latency_max_behind_us", "latency_max_silence_us",
        "latency_max_silence_partial", "batch_max", "batch_mean", "silence_max_us",
        "consumer_cpu_share", "consumer_preemptions"}) {
    EXPECT_EQ(shown[key], point[key]) << key;
  }
  for (const char* key : {"batch_mean", "latency_max_silence_partial", "consumer_cpu_share"}) {
    json wrong = doc;
    wrong["results"][0]["sessions"][0]["series"][0][key] = "many";
    const Input bad = input_of(wrong, "bad.json");
    EXPECT_EQ(stress_error_at(bad), std::string("/results/0/sessions/0/series/0/") + key);
  }
}

TEST(ReportStress, AFileSessionsRateAndWhetherItsFileFilledUpAreShown) {
  json doc = stress_file({stress_result(100, 1, 5)});
  json& session = doc["results"][0]["sessions"][0];
  const Input realtime = input_of(doc, "realtime.json");
  EXPECT_FALSE(stress_view({&realtime})["runs"][0]["sessions"][0].contains("file"));
  session["file"] = {{"bytes", 1048576000},      {"header_events_lost", 9},
                     {"header_buffers_lost", 1}, {"header_buffers_written", 16000},
                     {"write_s", 0.6},           {"events_per_s", 1.5e7},
                     {"mb_per_s", 1734.1},       {"of_disk_rate", 1.02},
                     {"at_maximum_size", true}};
  const Input full = input_of(doc, "full.json");
  const json shown = stress_view({&full})["runs"][0]["sessions"][0]["file"];
  EXPECT_EQ(shown["mb_per_s"], 1734.1);
  EXPECT_EQ(shown["of_disk_rate"], 1.02);
  EXPECT_EQ(shown["at_maximum_size"], true);
  session["file"]["of_disk_rate"] = nullptr;  // no fio
  session["file"].erase("at_maximum_size");   // older JSON
  const Input older = input_of(doc, "older.json");
  const json old_shown = stress_view({&older})["runs"][0]["sessions"][0]["file"];
  EXPECT_TRUE(old_shown["of_disk_rate"].is_null());
  EXPECT_FALSE(old_shown.contains("at_maximum_size"));
  session["file"]["at_maximum_size"] = "yes";
  const Input bad = input_of(doc, "bad.json");
  EXPECT_EQ(stress_error_at(bad), std::string("/results/0/sessions/0/file/at_maximum_size"));
}

TEST(ReportStress, TheBuffersSpanAndTheConsumerThreadPassWhenGivenOnly) {
  json doc = stress_file({stress_result(100, 1, 5)});
  const Input old_file = input_of(doc, "old.json");  // before 2026-11-27
  const json old_session = stress_view({&old_file})["runs"][0]["sessions"][0];
  EXPECT_FALSE(old_session.contains("buffers_span_ms"));
  EXPECT_FALSE(old_session.contains("consumer_cpu_share"));
  json& session = doc["results"][0]["sessions"][0];
  EXPECT_FALSE(old_session.contains("lost_behind_longer_than_buffers"));
  session["buffers_span_ms"] = 0.46;
  session["consumer_thread"] = {{"cpu_s", 0.98}, {"cpu_share", 0.97}, {"preemptions", 17}};
  session["lost_behind_longer_than_buffers"] = 1170;
  const Input in = input_of(doc, "new.json");
  const json shown = stress_view({&in})["runs"][0]["sessions"][0];
  EXPECT_EQ(shown["lost_behind_longer_than_buffers"], 1170);
  EXPECT_EQ(shown["buffers_span_ms"], 0.46);
  EXPECT_EQ(shown["consumer_cpu_share"], 0.97);
  EXPECT_EQ(shown["consumer_preemptions"], 17);
  session["buffers_span_ms"] = nullptr;  // no buffer was written
  const Input none = input_of(doc, "none.json");
  EXPECT_TRUE(stress_view({&none})["runs"][0]["sessions"][0]["buffers_span_ms"].is_null());
  session["consumer_thread"]["preemptions"] = "often";
  const Input bad = input_of(doc, "bad.json");
  EXPECT_EQ(stress_error_at(bad), std::string("/results/0/sessions/0/consumer_thread/preemptions"));
}

// The view of the first run of a stress file.
json stress_run_of(const json& doc) {
  const Input in = input_of(doc, "stress.json");
  return stress_view({&in})["runs"][0];
}

// `run` shows one floor, of `placement` with its p99 and buckets, and session 0's p99 over it.
void expect_one_floor(const json& run, const std::string& placement, const json& p99,
                      const std::string& buckets, const json& p99_vs_floor) {
  ASSERT_EQ(run["floors"].size(), 1u);
  EXPECT_EQ(run["floors"][0]["placement"], placement);
  EXPECT_EQ(run["floors"][0]["p99"], p99);
  EXPECT_EQ(run["floors"][0]["buckets"], json::parse(buckets));
  EXPECT_EQ(run["sessions"][0]["p99_vs_floor"][placement], p99_vs_floor);
}

// The floors per placement (2026-11-27): the one unpinned floor of older files is no
// placement's, so it is not shown as one.
TEST(ReportStress, TheFloorsPerPlacementPassAndTheUnpinnedOneDoesNot) {
  json doc = stress_file({stress_result(100, 1, 5)});
  json& result = doc["results"][0];
  json& session = result["sessions"][0];
  result["wake_floor_us"] = {{"p50", 3}, {"p99", 20}, {"p999", 30}, {"samples", 4000}};
  session["latency_vs_floor"] = {{"p50", 2}, {"p99", 6}, {"p999", 7}};
  const json old_run = stress_run_of(doc);
  EXPECT_EQ(old_run["floors"], json::array());
  EXPECT_FALSE(old_run["sessions"][0].contains("p99_vs_floor"));

  const json same = {{"p50", 3},
                     {"p99", 4},
                     {"histogram", {{"buckets", {{1, 2000, 2999, 3}, {2, 4000, 4999, 1}}}}}};
  result["wake_floor_us"] = {{"same_cpu", same},
                             {"other_cpu", {{"unavailable", "this thread may use a single CPU"}}}};
  session["latency_vs_floor"] = {{"same_cpu", {{"p50", 2}, {"p99", 31}, {"p999", 7}}},
                                 {"other_cpu", nullptr}};
  const json run = stress_run_of(doc);
  expect_one_floor(run, "same_cpu", 4, "[[2.999, 3], [4.999, 1]]", 31);
  EXPECT_TRUE(run["sessions"][0]["p99_vs_floor"]["other_cpu"].is_null());

  result["wake_floor_us"]["other_cpu"] = same;
  result["wake_floor_us"]["other_cpu"]["histogram"]["buckets"][1] = {2, 4000};
  const Input bad = input_of(doc, "bad.json");
  EXPECT_EQ(stress_error_at(bad),
            std::string("/results/0/wake_floor_us/other_cpu/histogram/buckets/1"));
}

// etwrt's reader nap as slept (2026-11-27): a floor beside the placements, and p99 over it.
TEST(ReportStress, TheReaderNapIsAFloorBesideThePlacements) {
  json doc = stress_file({stress_result(100, 1, 5)});
  json& result = doc["results"][0];
  json& session = result["sessions"][0];
  result["wake_floor_us"] = {{"same_cpu", {{"unavailable", "refused"}}},
                             {"other_cpu", {{"unavailable", "refused"}}}};
  result["reader_nap_us"] = {
      {"asked", 25},
      {"slept",
       {{"p50", 95}, {"p99", 99}, {"histogram", {{"buckets", {{9, 90000, 99999, 500}}}}}}}};
  session["latency_vs_floor"] = {
      {"same_cpu", nullptr}, {"other_cpu", nullptr}, {"reader_nap", {{"p99", 1.3}}}};
  expect_one_floor(stress_run_of(doc), "reader_nap", 99, "[[99.999, 500]]", 1.3);

  result["reader_nap_us"].erase("slept");
  const Input bad = input_of(doc, "bad.json");
  EXPECT_EQ(stress_error_at(bad), std::string("/results/0/reader_nap_us"));  // missing "slept"
}

TEST(ReportStress, RunsOfOneProfileDifferingInOneParameterMakeASweep) {
  const Input a =
      input_of(stress_file({stress_result(100, 1, 5), stress_result(100, 2, 7)}), "a.json");
  const Input b = input_of(stress_file({stress_result(300, 1, 9)}), "b.json");
  const json v = stress_view({&a, &b});
  ASSERT_EQ(v["sweeps"].size(), 1u) << v["no_sweep"].dump();
  const json& sweep = v["sweeps"][0];
  EXPECT_EQ(sweep["dimension"], "duration_ms");
  EXPECT_EQ(sweep["series_by"], json::array());
  const json* rate = nullptr;
  for (const json& f : sweep["figures"]) {
    if (f["name"] == "delivered events/s (all sessions)") rate = &f;
  }
  ASSERT_NE(rate, nullptr);
  EXPECT_EQ((*rate)["series"][0]["line"], json({{100, 6}, {300, 9}}));  // the median per x
  EXPECT_EQ((*rate)["series"][0]["points"].size(), 3u);
}

TEST(ReportStress, RepetitionsAloneAreNoSweep) {
  const Input a =
      input_of(stress_file({stress_result(100, 1, 5), stress_result(100, 2, 7)}), "a.json");
  const json v = stress_view({&a});
  EXPECT_TRUE(v["sweeps"].empty());
  ASSERT_EQ(v["no_sweep"].size(), 1u);
  EXPECT_NE(v["no_sweep"][0].get<std::string>().find("same parameters"), std::string::npos);
}

TEST(ReportStress, ASweepArrayInTheFileIsPlottedPerOtherDimension) {
  json doc = stress_file({});
  doc["sweep"] = {{{"sessions", 1}, {"payload_bytes", 16}, {"figures", {{"ns_per_event", 100}}}},
                  {{"sessions", 2}, {"payload_bytes", 16}, {"figures", {{"ns_per_event", 150}}}},
                  {{"sessions", 4}, {"payload_bytes", 16}, {"figures", {{"ns_per_event", 260}}}},
                  {{"sessions", 1}, {"payload_bytes", 4096}, {"figures", {{"ns_per_event", 300}}}},
                  {{"sessions", 2}, {"payload_bytes", 4096}, {"figures", {{"ns_per_event", 500}}}}};
  const Input in = input_of(doc, "sweep.json");
  const json v = stress_view({&in});
  ASSERT_EQ(v["sweeps"].size(), 1u);
  EXPECT_EQ(v["sweeps"][0]["dimension"], "sessions");  // the one with the most values
  EXPECT_EQ(v["sweeps"][0]["series_by"], json({"payload_bytes"}));
  EXPECT_EQ(v["sweeps"][0]["figures"][0]["series"].size(), 2u);
}

TEST(ReportPage, InlinedDataCannotCloseItsScriptElement) {
  const std::string text = json_for_script({{"message", "</script><script>alert(1)"}});
  EXPECT_EQ(text.find('<'), std::string::npos) << text;
  EXPECT_EQ(json::parse(text)["message"], "</script><script>alert(1)");
}

TEST(ReportPage, ThePageHoldsItsScriptsAndDataAndNoMarker) {
  const Input in = input_of(run_report("etwrt", "PASS"), "a.json");
  const std::string page = render_page(build_view({in}, "etwh test"));
  EXPECT_EQ(page.find("@ETWH_"), std::string::npos);
  EXPECT_NE(page.find("function etwhStart()"), std::string::npos);
  EXPECT_NE(page.find("\"case-b\""), std::string::npos);
  EXPECT_EQ(page.find("http://"), page.find("http://www.w3.org/2000/svg"));  // nothing fetched
}

}  // namespace
}  // namespace etwh::report_html
