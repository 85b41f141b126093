#include "harness/stress/profile.h"
#include "tests/lib/thrown.h"
#include "tests/lib/unplaced.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

namespace etwh::stress {
namespace {

// Without line:col (the loaders' shared locator is tested with the scenarios).
std::string error_of(const std::string& text, const std::optional<Sweep>& sweep = std::nullopt) {
  return test_support::thrown_as<InputError>([&] { load_profile_text(text, "p.json", sweep); },
                                             test_support::unplaced);
}

TEST(StressProfile, ShippedProfilesLoad) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(ETWH_STRESS_PROFILES_DIR)) {
    if (entry.path().extension() != ".json") continue;
    const auto profiles = load_profile_file(entry.path());
    ASSERT_EQ(profiles.size(), 1u) << entry.path();
    EXPECT_FALSE(profiles[0].description.empty()) << entry.path();
    ++count;
  }
  EXPECT_GE(count, 4);
}

TEST(StressProfile, FieldsAndDefaults) {
  const auto p = load_profile_text(
      R"({"rate": "max", "duration_ms": 500, "threads": 3, "burst": {"events": 10, "period_ms": 5},
          "consumer": {"delay_us": 7, "latency_every": 16},
          "buffers": {"buffer_size_kb": 8, "maximum": 40},
          "expect_loss": "some"})",
      "dir/x.json")[0];
  EXPECT_EQ(p.name, "x");
  EXPECT_EQ(p.rate, 0u);
  EXPECT_EQ(p.threads, 3u);
  EXPECT_EQ(p.processes, 1u);
  EXPECT_EQ(p.burst_events, 10u);
  EXPECT_EQ(p.burst_period_ms, 5u);
  EXPECT_EQ(p.consumer_delay_us, 7u);
  EXPECT_EQ(p.latency_every, 16u);
  EXPECT_EQ(load_profile_text(R"({"rate": 5, "duration_ms": 1})", "y.json")[0].latency_every, 1u)
      << "every record timed by default";
  EXPECT_EQ(p.buffers.buffer_size_kb, 8u);
  EXPECT_EQ(p.buffers.minimum_buffers, 4u);
  EXPECT_EQ(p.buffers.maximum_buffers, 40u);
  EXPECT_EQ(p.expect_loss, LossExpectation::kSome);
}

TEST(StressProfile, FileSessions) {
  EXPECT_FALSE(load_profile_text(R"({"rate": 5, "duration_ms": 1})", "r.json")[0].log_file)
      << "realtime by default";
  const auto seq = load_profile_text(
      R"({"rate": 5, "duration_ms": 1, "file": {"mode": "sequential"}})", "s.json")[0];
  ASSERT_TRUE(seq.log_file);
  EXPECT_EQ(seq.log_file->mode, FileMode::kSequential);
  EXPECT_EQ(seq.log_file->max_mb, 0u) << "no limit by default";
  const auto circ = load_profile_text(
      R"({"rate": 5, "duration_ms": 1, "file": {"mode": "circular", "max_mb": 3}})", "c.json")[0];
  ASSERT_TRUE(circ.log_file);
  EXPECT_EQ(circ.log_file->mode, FileMode::kCircular);
  EXPECT_EQ(circ.log_file->max_mb, 3u);
  EXPECT_EQ(error_of(R"({"rate": 5, "duration_ms": 1, "file": {"mode": "circular"}})"),
            "p.json: /file: missing field \"max_mb\"");
  EXPECT_EQ(error_of(R"({"rate": 5, "duration_ms": 1, "file": {"mode": "newfile"}})"),
            "p.json: /file/mode: expected \"sequential\" or \"circular\", got \"newfile\"");
  EXPECT_EQ(error_of(R"({"rate": 5, "duration_ms": 1, "file": {"mode": "circular", "max_mb": 0}})"),
            "p.json: /file/max_mb: 0 < 1");
  EXPECT_EQ(error_of(R"({"rate": 5, "duration_ms": 1, "file": {}})"),
            "p.json: /file: missing field \"mode\" (\"sequential\" or \"circular\")");
  EXPECT_EQ(error_of(R"({"rate": 5, "duration_ms": 1, "file": {"mode": "sequential", "x": 1}})"),
            "p.json: /file/x: unknown field \"x\"");
}

TEST(StressProfile, ErrorsNameFilePointerAndReason) {
  EXPECT_EQ(error_of("{\n  \"rate\": 5,\n  \"duration_ms\": }"),
            "p.json:3:18: JSON syntax error: syntax error while parsing value - unexpected '}'; "
            "expected '[', '{', or a literal");
  EXPECT_EQ(error_of(R"({"rate": 5, "duration_ms": 1, "thread": 2})"),
            "p.json: /thread: unknown field \"thread\"");
  EXPECT_EQ(error_of(R"({"rate": 5})"), "p.json: /: missing field \"duration_ms\"");
  EXPECT_EQ(error_of(R"({"rate": "fast", "duration_ms": 1})"),
            "p.json: /rate: expected a number of events/s or \"max\", got \"fast\"");
  EXPECT_EQ(error_of(R"({"rate": 5, "duration_ms": 1, "sessions": 9})"),
            "p.json: /sessions: 9 > 8");
  EXPECT_EQ(error_of(R"({"rate": 5, "duration_ms": 1, "threads": -1})"),
            "p.json: /threads: -1 is negative");
  EXPECT_EQ(error_of(R"({"rate": 5, "duration_ms": 1.5})"),
            "p.json: /duration_ms: expected an integer, got a fractional number");
  EXPECT_EQ(error_of(R"({"rate": 5, "duration_ms": 1, "burst": {"events": 1, "period_ms": 1}})"),
            "p.json: /rate: a bursty profile sets its pace with \"burst\": rate must be \"max\"");
  EXPECT_EQ(error_of(R"({"rate": 5, "duration_ms": 1, "buffers": {"minimum": 9, "maximum": 8}})"),
            "p.json: /buffers/maximum: 8 < minimum 9");
  EXPECT_EQ(error_of(R"({"rate": 5, "duration_ms": 1, "payload_bytes": 4000,
                        "buffers": {"buffer_size_kb": 4}})"),
            "p.json: /payload_bytes: 4000 bytes do not fit in a 4 KB buffer");
  EXPECT_EQ(error_of(R"({"rate": 5, "duration_ms": 1, "consumer": {"latency_every": 0}})"),
            "p.json: /consumer/latency_every: 0 < 1");
  EXPECT_EQ(error_of(R"({"rate": 5, "duration_ms": 1, "expect_loss": "maybe"})"),
            "p.json: /expect_loss: expected \"none\" or \"some\", got \"maybe\"");
}

TEST(StressProfile, SweepMakesOneProfilePerValue) {
  const auto profiles = load_profile_text(R"({"rate": 5, "duration_ms": 1})", "s.json",
                                          parse_sweep("buffers.maximum=10,20"));
  ASSERT_EQ(profiles.size(), 2u);
  EXPECT_EQ(profiles[0].name, "s[buffers.maximum=10]");
  EXPECT_EQ(profiles[0].buffers.maximum_buffers, 10u);
  EXPECT_EQ(profiles[1].buffers.maximum_buffers, 20u);
  const auto rates =
      load_profile_text(R"({"rate": 5, "duration_ms": 1})", "s.json", parse_sweep("rate=max,1000"));
  EXPECT_EQ(rates[0].rate, 0u);
  EXPECT_EQ(rates[1].rate, 1000u);
}

TEST(StressProfile, BadSweepsAreRejectedPrecisely) {
  auto sweep_error = [](const std::string& text) {
    try {
      parse_sweep(text);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(sweep_error("threads"), "--sweep: expected DIMENSION=V1,V2,..., got \"threads\"");
  EXPECT_NE(sweep_error("speed=1").find("--sweep: unknown dimension \"speed\""), std::string::npos);
  EXPECT_EQ(sweep_error("threads=1,,2"), "--sweep threads=1,,2: empty value");
  EXPECT_EQ(sweep_error("threads=1,"), "--sweep threads=1,: give at least one value, none empty");
  EXPECT_EQ(error_of(R"({"rate": 5, "duration_ms": 1})", parse_sweep("threads=2,0")),
            "p.json [--sweep threads=0]: /threads: 0 < 1");
}

TEST(StressProfile, ArgumentsResolveToFiles) {
  namespace fs = std::filesystem;
  const fs::path shipped = ETWH_STRESS_PROFILES_DIR;
  // A bare name is the shipped profile; a file stays as it is.
  EXPECT_EQ(resolve_profiles({"fast_steady"}, shipped),
            std::vector<fs::path>{shipped / "fast_steady.json"});
  const fs::path file = shipped / "bursty.json";
  EXPECT_EQ(resolve_profiles({file.string()}, shipped), std::vector<fs::path>{file});
  // A folder: every profile in it, sorted.
  const auto all = resolve_profiles({shipped.string()}, shipped);
  ASSERT_GE(all.size(), 4u);
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end()));
  EXPECT_EQ(std::count(all.begin(), all.end(), shipped / "fast_steady.json"), 1);
  try {
    resolve_profiles({"no_such_profile"}, shipped);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "no_such_profile");
    EXPECT_NE(std::string(e.what()).find("no shipped stress profile of that name (shipped: "
                                         "bursty, fast_steady"),
              std::string::npos)
        << e.what();
  }
  try {
    resolve_profiles({"missing/dir/p.json"}, shipped);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "missing/dir/p.json: no such file or folder");
  }
  const fs::path empty = fs::temp_directory_path() / "etwh_profile_test_empty";
  fs::create_directories(empty);
  EXPECT_THROW(resolve_profiles({empty.string()}, shipped), InputError);
  fs::remove(empty);
}

}  // namespace
}  // namespace etwh::stress
