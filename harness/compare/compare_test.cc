#include "harness/compare/compare.h"
#include "tests/lib/scratch_file.h"
#include "tests/lib/thrown.h"
#include "harness/report/compare_report.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace etwh::compare {
namespace {

using nlohmann::json;

// A stress result as `etwh stress --json` writes it (the fields compare reads).
json stress_result(const std::string& id, double write_rate, double writer_cpu_ns, double p99_us) {
  return {{"id", id},
          {"status", "PASS"},
          {"writers", {{"events_per_s", write_rate}, {"cpu", {{"ns_per_event", writer_cpu_ns}}}}},
          {"consumer", {{"cpu", {{"ns_per_event", 100.0}}}}},
          {"sessions", json::array({{{"throughput", {{"events_per_s", 1000.0}}},
                                     {"latency_us", {{"p50", 10.0}, {"p99", p99_us}}}}})}};
}

// Repetitions of one profile: the writer's CPU per event times `scale`.
json stress_doc(const std::vector<double>& writer_cpu_ns, double scale = 1.0) {
  json results = json::array();
  for (double v : writer_cpu_ns) results.push_back(stress_result("p", 1e6, v * scale, 50.0));
  return {{"schema_version", 1}, {"run_info", json::object()}, {"results", results}};
}

json run_doc(int version, const std::map<std::string, std::string>& cases,
             const std::map<std::string, std::string>& rules) {
  json results = json::array(), rule_list = json::array();
  for (const auto& [id, status] : cases) {
    json r = {{"id", id}, {"rules", {"R"}}, {"status", status}, {"message", ""}, {"duration", 0.1}};
    if (version >= 2) r["findings"] = json::array();
    results.push_back(r);
  }
  for (const auto& [id, status] : rules)
    rule_list.push_back({{"id", id}, {"status", status}, {"cases", 1}});
  return {{"schema_version", version}, {"results", results}, {"rules", rule_list}};
}

const FigureComparison& figure(const Comparison& c, const std::string& name) {
  for (const auto& f : c.figures) {
    if (f.name == name) return f;
  }
  throw std::runtime_error("no figure " + name);
}

const std::vector<double> kCpu = {50, 51, 49, 52, 50.5, 48.5, 51.5, 50.2, 49.7, 50.9};

TEST(CompareVerdict, SignificanceAndEffectBothCount) {
  const Thresholds t{0.05, 0.05, ""};
  EXPECT_EQ(judge_figure(0.10, 0.001, Better::kLower, t), Verdict::kSlower);
  EXPECT_EQ(judge_figure(0.10, 0.001, Better::kHigher, t), Verdict::kFaster);
  EXPECT_EQ(judge_figure(-0.10, 0.001, Better::kHigher, t), Verdict::kSlower);
  EXPECT_EQ(judge_figure(0.02, 0.001, Better::kLower, t), Verdict::kSame);  // real but small
  EXPECT_EQ(judge_figure(0.30, 0.20, Better::kLower, t), Verdict::kNoisy);  // large, not shown
  EXPECT_EQ(judge_figure(0.01, 0.90, Better::kLower, t), Verdict::kSame);
}

TEST(CompareStress, TenPercentSlowerWriterIsARegression) {
  const Document old_doc = read_document(stress_doc(kCpu), "old.json");
  const Document new_doc = read_document(stress_doc(kCpu, 1.10), "new.json");
  ASSERT_EQ(old_doc.kind, Kind::kStress);
  const Comparison c = compare_documents(old_doc, new_doc, Thresholds{});
  const FigureComparison& f = figure(c, "p writer CPU/event");
  EXPECT_EQ(f.old_sample.n, 10u);
  EXPECT_NEAR(f.change, 0.10, 1e-9);
  EXPECT_TRUE(f.exact);
  EXPECT_LT(f.p_value, 0.001);
  EXPECT_EQ(f.verdict, Verdict::kSlower);
  EXPECT_EQ(figure(c, "p s0 latency p99").verdict, Verdict::kSame);
  EXPECT_EQ(c.regressions, 1u);
  // The same file against itself: nothing moves.
  EXPECT_EQ(compare_documents(old_doc, old_doc, Thresholds{}).regressions, 0u);
  // A faster new build is no regression.
  const Comparison faster =
      compare_documents(old_doc, read_document(stress_doc(kCpu, 0.8), "new.json"), Thresholds{});
  EXPECT_EQ(figure(faster, "p writer CPU/event").verdict, Verdict::kFaster);
  EXPECT_EQ(faster.regressions, 0u);
}

TEST(CompareStress, OnlySelectsFiguresAndUnmatchedAreListed) {
  json other = stress_doc(kCpu);
  other["results"].push_back(stress_result("q", 1e6, 50, 50));
  Thresholds t;
  t.only = "CPU";
  const Comparison c =
      compare_documents(read_document(stress_doc(kCpu), "a"), read_document(other, "b"), t);
  EXPECT_EQ(c.figures.size(), 2u);  // writer and consumer CPU of p
  ASSERT_EQ(c.unmatched.size(), 2u);
  EXPECT_EQ(c.unmatched[0], "q writer CPU/event (only in NEW)");
  t.only = "(";
  EXPECT_THROW(compare_documents(read_document(other, "a"), read_document(other, "b"), t),
               CompareInputError);
}

TEST(CompareBenchmark, IterationsInNanosecondsAggregatesSkipped) {
  json benchmarks = json::array();
  for (double v : {1.0, 1.1, 0.9}) {
    benchmarks.push_back({{"name", "BM_Write/repeats:3"},
                          {"run_name", "BM_Write"},
                          {"run_type", "iteration"},
                          {"real_time", v},
                          {"cpu_time", v},
                          {"time_unit", "us"}});
  }
  benchmarks.push_back({{"name", "BM_Write_mean"},
                        {"run_name", "BM_Write"},
                        {"run_type", "aggregate"},
                        {"real_time", 1.0},
                        {"cpu_time", 1.0},
                        {"time_unit", "us"}});
  const Document d = read_document({{"context", json::object()}, {"benchmarks", benchmarks}}, "b");
  ASSERT_EQ(d.kind, Kind::kBenchmark);
  ASSERT_EQ(d.figures.size(), 2u);
  EXPECT_EQ(d.figures[0].name, "BM_Write real_time");
  EXPECT_EQ(d.figures[0].values, (std::vector<double>{1000, 1100, 900}));
  // Aggregates alone cannot be tested: bad input, saying why.
  benchmarks.erase(benchmarks.begin(), benchmarks.begin() + 3);
  EXPECT_THROW(read_document({{"benchmarks", benchmarks}}, "b"), CompareInputError);
}

TEST(CompareRun, ChangedVerdictsPerCaseAndRule) {
  const Document old_doc = read_document(
      run_doc(1, {{"a", "PASS"}, {"b", "FAIL"}, {"c", "XFAIL"}, {"d", "PASS"}, {"gone", "PASS"}},
              {{"R1", "PASS"}, {"R2", "FAIL"}}),
      "old.json");
  const Document new_doc = read_document(
      run_doc(2, {{"a", "CRASH"}, {"b", "PASS"}, {"c", "XPASS"}, {"d", "PASS"}, {"new", "PASS"}},
              {{"R1", "FAIL"}, {"R2", "PASS"}}),
      "new.json");
  const Comparison c = compare_documents(old_doc, new_doc, Thresholds{});
  ASSERT_EQ(c.cases.size(), 5u);  // d did not change
  std::map<std::string, std::string> change;
  for (const auto& k : c.cases) change[k.id] = k.change;
  EXPECT_EQ(change["a"], "new failure");
  EXPECT_EQ(change["b"], "fixed");
  EXPECT_EQ(change["c"], "new XPASS");
  EXPECT_EQ(change["gone"], "removed");
  EXPECT_EQ(change["new"], "added");
  EXPECT_EQ(c.regressions, 2u);
  ASSERT_EQ(c.rules.size(), 2u);
  EXPECT_EQ(c.rules[0].id, "R1");
  EXPECT_EQ(*c.rules[0].new_status, "FAIL");
  EXPECT_EQ(to_json(c)["cases"][0]["old"], "PASS");
}

std::string load_error(const std::filesystem::path& file) {
  return test_support::thrown<CompareInputError>([&] { load_document(file); });
}

TEST(CompareInput, BadInputNamesFileAndPlace) {
  auto message = [](const json& doc) {
    return test_support::thrown<CompareInputError>([&] { read_document(doc, "x.json"); },
                                                   "no error");
  };
  json doc = stress_doc(kCpu);
  doc["results"][3]["writers"]["events_per_s"] = "fast";
  EXPECT_EQ(message(doc),
            "x.json: /results/3/writers/events_per_s: expected a number, got a string");
  EXPECT_EQ(message(run_doc(4, {}, {})), "x.json: /schema_version: unsupported schema_version 4");
  // Version 3 (a verdict per rule from its own checks) reads as the others: rules[].status.
  EXPECT_EQ(read_document(run_doc(3, {{"a", "FAIL"}}, {{"R", "PASS"}}), "v3").rules.at("R"),
            "PASS");
  EXPECT_EQ(message(json::array()), "x.json: /: expected an object, got an array");
  // Two kinds cannot be compared.
  EXPECT_THROW(compare_documents(read_document(stress_doc(kCpu), "a"),
                                 read_document(run_doc(1, {}, {}), "b"), Thresholds{}),
               CompareInputError);
  // A syntax error in a file: line:col.
  const test_support::ScratchFile file("etwh_compare_test_bad.json", "{\n  \"results\": [,]\n}\n");
  const std::string error = load_error(file.path());
  EXPECT_EQ(error.rfind(file.path().string() + ":2:15: JSON syntax error: ", 0), 0u) << error;
}

// Compare and stress --baseline inputs are read as every input is (json_text.h): a FIFO never
// blocks, /dev/zero is never read, a key given twice and an unknown status are refused, and an
// error at a value has the one position format <file>:<line>:<col>: <pointer>: <reason>.
TEST(CompareInput, FilesAreReadAsEveryInputIs) {
  const auto dir = std::filesystem::temp_directory_path() / "etwh_compare_test_inputs";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directory(dir);
  EXPECT_EQ(load_error("/dev/zero"), "/dev/zero: is a device, not a regular file");
  EXPECT_EQ(load_error(dir), dir.string() + ": is a directory, not a regular file");
  const auto fifo = dir / "fifo.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(load_error(fifo), fifo.string() + ": is a FIFO, not a regular file");
  const auto twice = dir / "twice.json";
  std::ofstream(twice) << "{\"schema_version\": 1,\n \"schema_version\": 2}";
  EXPECT_EQ(load_error(twice), twice.string() +
                                   ":2:2: /schema_version: duplicate key \"schema_version\" (each "
                                   "key once per object)");
  json weird = run_doc(2, {{"a", "PASS"}}, {});
  weird["results"][0]["status"] = "WEIRD";
  const auto odd = dir / "weird.json";
  std::ofstream(odd) << weird.dump(1);
  EXPECT_EQ(load_error(odd).rfind(odd.string() + ":", 0), 0u);
  EXPECT_NE(load_error(odd).find(": /results/0/status: unknown status \"WEIRD\""),
            std::string::npos)
      << load_error(odd);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace etwh::compare
