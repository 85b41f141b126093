// Stress profiles (scenarios/stress/*.json, format in harness/stress/README.md) and their loader.
// Loading checks every field before anything runs and reports bad input as
// "<file>:<line>:<col>: <JSON pointer>: reason" (InputError); a sweep value is applied
// to the JSON before the checks, so a bad one is reported the same way.
#pragma once

#include "harness/model/input_error.h"
#include "harness/model/stress_run.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace etwh::stress {

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
