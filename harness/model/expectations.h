// Per-platform expectations (expectations/<platform>.json), as wpt's metadata: what a case is
// expected to give on a platform when not PASS, and why. No entry means PASS is expected. An
// actual result is then classified: an expected FAIL that fails is XFAIL (fine), one that
// passes is XPASS (not fine: stale expectation).
//
// The file (format in expectations/README.md; schema schemas/expectations.schema.json):
//   {"schema_version": 2,
//    "reasons": {"wine-stub": "Wine 8.0 stubs ..."},              a reason written once
//    "files": {"classic.json": {"status": "FAIL", "reason_ref": "wine-stub"}},  per scenario file
//    "cases": {"case-id": {"status": "FAIL", "reason": "why"}}}   a case's own entry wins
// Each entry has a `reason` (text) or a `reason_ref` (a name in `reasons`). A file without
// `schema_version` is the first format: {"case-id": {"status", "reason"}}, still read.
#pragma once

#include "harness/model/input_error.h"
#include "harness/model/result.h"

#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace etwh {

// The expectation that applies to one case, its reason resolved to text.
struct Expectation {
  Status status = Status::kPass;
  std::string reason;
};

// A case of a run as its expectations see it: its ID and the scenario file it is in.
struct CaseFile {
  std::string id;
  std::string file;
};

// Case id -> expectation, for the cases of a run.
using Expectations = std::map<std::string, Expectation>;

// An entry as written: exactly one of `reason` and `reason_ref` is set.
struct ExpectationEntry {
  Status status = Status::kPass;
  std::string reason;
  std::string reason_ref;
};

// An expectations file as written, so that `etwh expectations update` can rewrite it.
struct ExpectationsFile {
  int format = 2;  // 1: the first format (case ids at the top level), as read; written as 2
  std::map<std::string, std::string> reasons;     // name -> text
  std::map<std::string, ExpectationEntry> files;  // scenario file name -> default
  std::map<std::string, ExpectationEntry> cases;  // case id -> entry
};

// The reason `etwh expectations update` gives an entry it adds: a person must replace it
// (reason_is_placeholder() finds it; a CTest fails on a shipped file that still has one).
inline constexpr char kPlaceholderReason[] = "TODO: say why (added by etwh expectations update)";
bool reason_is_placeholder(const std::string& reason);

// Reads a file (either format). Throws InputError "<file>:<line>:<col>: <pointer>: reason".
ExpectationsFile load_expectations_file(const std::filesystem::path& file);

// The file's text in the current format: sorted, two-space indented, so that a rewrite of an
// unchanged file gives the same bytes. Reasons no entry names are left out.
std::string expectations_text(const ExpectationsFile& file);

// The expectations for a run's cases: a case's own entry, else its scenario file's default (by
// the file's name, "classic.json"). `known_cases` (when non-empty) rejects entries naming no
// known case; `cases` (when given) are the run's cases, whose files the defaults apply to.
// Throws InputError.
Expectations load_expectations(const std::filesystem::path& file,
                               const std::set<std::string>& known_cases,
                               const std::vector<CaseFile>& cases = {});

// Final status and whether it is as expected, given the raw outcome of a case.
std::pair<Status, bool> classify(Status actual, const Expectations& expectations,
                                 const std::string& case_id);

}  // namespace etwh
