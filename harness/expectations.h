// Per-platform expectations (expectations/<platform>.json): case id -> {status, reason}.
// No entry means PASS is expected. An actual result is then classified: an expected FAIL
// that fails is XFAIL (fine), one that passes is XPASS (not fine: stale expectation).
#pragma once

#include "input_error.h"
#include "result.h"

#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

namespace etwh {

struct Expectation {
  Status status = Status::kPass;
  std::string reason;
};

using Expectations = std::map<std::string, Expectation>;

// Loads a file; `known_cases` (when non-empty) rejects entries naming no known case. Throws
// InputError.
Expectations load_expectations(const std::filesystem::path& file,
                               const std::set<std::string>& known_cases);

// Final status and whether it is as expected, given the raw outcome of a case.
std::pair<Status, bool> classify(Status actual, const Expectations& expectations,
                                 const std::string& case_id);

}  // namespace etwh
