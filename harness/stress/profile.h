// Stress profiles (scenarios/stress/*.json, format in harness/stress/README.md) and their loader.
// Loading checks every field before anything runs and reports bad input as
// "<file>:<line>:<col>: <JSON pointer>: reason" (InputError); a sweep value is applied
// to the JSON before the checks, so a bad one is reported the same way.
#pragma once

#include "harness/model/input_error.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace etwh::stress {

enum class LossExpectation { kUnspecified, kNone, kSome };

struct BufferSettings {
  std::uint32_t buffer_size_kb = 64;
  std::uint32_t minimum_buffers = 4;
  std::uint32_t maximum_buffers = 32;
  std::uint32_t flush_timer_s = 1;
};

// A profile whose sessions log to a file (in the run's temporary folder) instead of to a
// realtime consumer: the file is read back once the session stopped.
enum class FileMode { kSequential, kCircular };
struct FileSettings {
  FileMode mode = FileMode::kSequential;
  std::uint32_t max_mb = 0;  // MaximumFileSize; 0: no limit (sequential only)
};

struct Profile {
  std::string name;  // file stem, plus "[dim=value]" in a sweep
  std::string file;
  std::string description;
  std::uint32_t processes = 1;
  std::uint32_t threads = 1;
  std::uint32_t sessions = 1;
  std::uint64_t rate = 0;  // events/s per thread; 0 = as fast as possible ("max")
  std::uint32_t payload_bytes = 32;
  std::uint64_t burst_events = 0;  // 0 = steady
  std::uint64_t burst_period_ms = 0;
  std::uint64_t duration_ms = 1000;
  std::uint64_t consumer_delay_us = 0;  // busy time per event in the consumer callback
  // The consumer times the records whose sequence number is a multiple of this (1: every one):
  // at a writer's maximum rate, a clock read and the latency bookkeeping per record make the
  // measuring consumer as slow as the writer.
  std::uint64_t latency_every = 1;
  BufferSettings buffers;
  std::optional<FileSettings> log_file;  // "file": none for realtime sessions
  LossExpectation expect_loss = LossExpectation::kUnspecified;
  nlohmann::json source;  // the profile as loaded (after any sweep value), for reports
};

// A sweep over one dimension: "--sweep threads=1,2,4". `path` is the field's JSON pointer.
struct Sweep {
  std::string dimension;  // as written on the command line ("buffers.maximum")
  std::string pointer;    // "/buffers/maximum"
  std::vector<nlohmann::json> values;
};

// Parses "dim=v1,v2,...": dimensions are the profile's fields, nested ones dotted; values are
// JSON (numbers) or bare words ("max"). Throws InputError("--sweep: ...").
Sweep parse_sweep(const std::string& text);

// Loads one profile from text; `file` names it in messages. With a sweep, returns one profile
// per value (in order), else one.
std::vector<Profile> load_profile_text(const std::string& text, const std::string& file,
                                       const std::optional<Sweep>& sweep = std::nullopt);

std::vector<Profile> load_profile_file(const std::filesystem::path& file,
                                       const std::optional<Sweep>& sweep = std::nullopt);

// The profile files the command line names, in order: a file as it is; a folder, every *.json
// in it (sorted), as `etwh run` takes folders; a bare name ("fast_steady"), the shipped
// `<shipped_dir>/<name>.json`. Throws InputError naming the argument for anything else.
// Example: resolve_profiles({"fast_steady", "my/profiles"}, data / "scenarios" / "stress").
std::vector<std::filesystem::path> resolve_profiles(const std::vector<std::string>& arguments,
                                                    const std::filesystem::path& shipped_dir);

}  // namespace etwh::stress
