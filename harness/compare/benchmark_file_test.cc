// Google Benchmark files as versions 1.5 to 1.9 write them (src/json_reporter.cc): repetitions
// and aggregates, cv rows in percent, skipped and failed runs, and the bare NaN and Infinity
// that JSON does not allow.
#include "harness/compare/compare.h"
#include "tests/lib/scratch_file.h"
#include "tests/lib/thrown.h"
#include "harness/report/compare_report.h"
#include "harness/compare/nonfinite.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

namespace etwh::compare {
namespace {

std::filesystem::path fixture(const std::string& name) {
  return std::filesystem::path(ETWH_COMPARE_TESTDATA) / name;
}

const Figure& figure(const Document& d, const std::string& name) {
  for (const auto& f : d.figures) {
    if (f.name == name) return f;
  }
  throw std::runtime_error("no figure " + name);
}

TEST(NonfiniteMarkers, SameLengthOutsideStringsOnly) {
  const std::string text =
      R"({"a": NaN, "b": -Infinity, "c": [Infinity,-NaN], "s": "NaN Infinity \" NaN", )"
      R"("NaNa": 1, "x": -1.5e+00})";
  int replaced = 0;
  const std::string out = nonfinite_as_markers(text, replaced);
  EXPECT_EQ(replaced, 4);
  ASSERT_EQ(out.size(), text.size());
  // Every byte but the tokens' keeps its place: an error's line:col is the original's.
  EXPECT_EQ(out.find("\"s\""), text.find("\"s\""));
  const nlohmann::json doc = nlohmann::json::parse(out);
  EXPECT_TRUE(std::isnan(*marker_value(doc["a"])));
  EXPECT_EQ(*marker_value(doc["b"]), -INFINITY);
  EXPECT_EQ(*marker_value(doc["c"][0]), INFINITY);
  EXPECT_TRUE(std::isnan(*marker_value(doc["c"][1])));
  EXPECT_EQ(doc["s"], "NaN Infinity \" NaN");  // strings are left alone
  EXPECT_FALSE(marker_value(doc["s"]));
  EXPECT_EQ(doc["x"], -1.5);
}

TEST(BenchmarkFile, Version15RepetitionsWithNaNCounters) {
  const Document d = load_document(fixture("gbench_1.5_repetitions.json"));
  ASSERT_EQ(d.kind, Kind::kBenchmark);
  ASSERT_EQ(d.figures.size(), 2u);  // the aggregates of the same repetitions are not added
  EXPECT_EQ(figure(d, "BM_Write real_time").values, (std::vector<double>{1000, 1100, 900}));
  EXPECT_FALSE(figure(d, "BM_Write cpu_time").summary);
  EXPECT_TRUE(d.not_comparable.empty());  // NaN in a counter: not a figure compare reads
}

TEST(BenchmarkFile, AggregatesOnlyAreSummaries) {
  // 1.7's shape: aggregate_unit, cv in percent (here NaN), family_index.
  const Document d = load_document(fixture("gbench_1.7_aggregates_only.json"));
  ASSERT_EQ(d.figures.size(), 4u);
  const Figure& f = figure(d, "BM_EventWrite_OneSession_32B real_time");
  ASSERT_TRUE(f.summary);
  EXPECT_TRUE(f.values.empty());
  EXPECT_EQ(f.summary->n, 5u);
  EXPECT_DOUBLE_EQ(f.summary->mean, 10.0);
  EXPECT_DOUBLE_EQ(f.summary->median, 9.9);
  EXPECT_DOUBLE_EQ(f.summary->stddev, 0.2);
  EXPECT_TRUE(d.not_comparable.empty());  // the cv rows are not read
}

TEST(BenchmarkFile, SkippedAndFailedRunsHaveNoFigure) {
  const Document d = load_document(fixture("gbench_1.8_skipped_and_errors.json"));
  ASSERT_EQ(d.figures.size(), 2u);
  const std::vector<double> ms = {2.0, 2.1, 1.9, 2.05, 1.95};
  const std::vector<double>& ns = figure(d, "BM_Ring cpu_time").values;
  ASSERT_EQ(ns.size(), ms.size());
  for (std::size_t i = 0; i < ms.size(); ++i) EXPECT_NEAR(ns[i], ms[i] * 1e6, 1e-6);
}

TEST(BenchmarkFile, NaNFigureIsNamedNotCompared) {
  // 1.9's shape (library_version, json_schema_version): BM_Ratio's times are NaN.
  const Document d = load_document(fixture("gbench_1.9_aggregates_only.json"));
  ASSERT_EQ(d.figures.size(), 2u);
  ASSERT_EQ(d.not_comparable.size(), 2u);
  EXPECT_EQ(d.not_comparable.at("BM_Ratio real_time"),
            "NaN in " + fixture("gbench_1.9_aggregates_only.json").string());
  const Comparison c = compare_documents(d, d, Thresholds{});
  EXPECT_EQ(c.figures.size(), 2u);
  EXPECT_EQ(c.regressions, 0u);
  ASSERT_EQ(c.unmatched.size(), 4u);  // each NaN figure, from both files
  EXPECT_EQ(c.unmatched[0].rfind("BM_Ratio cpu_time (NaN in ", 0), 0u);
}

// Aggregates only on both sides: Welch's t-test from the mean, stddev and count; the change is
// that of the medians.
TEST(BenchmarkFile, AggregatesOnlyComparedByWelch) {
  const Document old_doc = load_document(fixture("gbench_1.7_aggregates_only.json"));
  Document new_doc = old_doc;
  for (Figure& f : new_doc.figures) {
    f.summary->mean *= 1.2;
    f.summary->median *= 1.2;
  }
  const Comparison c = compare_documents(old_doc, new_doc, Thresholds{});
  ASSERT_EQ(c.figures.size(), 4u);
  for (const FigureComparison& f : c.figures) {
    EXPECT_TRUE(f.welch) << f.name;
    EXPECT_NEAR(f.change, 0.2, 1e-9) << f.name;
    EXPECT_LT(f.p_value, 0.001) << f.name;
    EXPECT_EQ(f.verdict, Verdict::kSlower) << f.name;
  }
  EXPECT_EQ(c.regressions, 4u);
  const nlohmann::ordered_json j = to_json(c);
  EXPECT_EQ(j["figures"][0]["test"], "welch");
  EXPECT_TRUE(j["figures"][0]["old"]["min"].is_null());
  EXPECT_EQ(j["figures"][0]["old"]["stddev"], 0.2);
  // Against itself: same, no regression.
  EXPECT_EQ(compare_documents(old_doc, old_doc, Thresholds{}).regressions, 0u);
}

// Repetitions on one side, aggregates on the other (a baseline kept with other flags): Welch,
// with the repetitions' own mean and deviation.
TEST(BenchmarkFile, RepetitionsAgainstAggregates) {
  Document old_doc = load_document(fixture("gbench_1.5_repetitions.json"));
  Document new_doc = old_doc;
  Figure& f = new_doc.figures[0];
  f.summary = Summary{3, 1000, 1000, 100};
  f.values.clear();
  const Comparison c = compare_documents(old_doc, new_doc, Thresholds{});
  EXPECT_TRUE(c.figures[0].welch);
  EXPECT_NEAR(c.figures[0].p_value, 1.0, 1e-9);  // same mean and deviation
  EXPECT_EQ(c.figures[0].verdict, Verdict::kSame);
}

TEST(BenchmarkFile, SyntaxErrorAfterNaNKeepsItsPlace) {
  const test_support::ScratchFile file(
      "etwh_compare_nan_bad.json",
      "{\"benchmarks\": [{\"real_time\": NaN, \"cpu_time\": Infinity,,}]}\n");
  const std::string error =
      test_support::thrown<CompareInputError>([&] { load_document(file.path()); });
  EXPECT_EQ(error.rfind(file.path().string() + ":1:57: JSON syntax error: ", 0), 0u) << error;
}

}  // namespace
}  // namespace etwh::compare
