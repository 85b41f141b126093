// What `etwh run` adds to a case's outcome after the driver: lint findings (of the case's steps
// and of the events a provider under test wrote) and the platform's expectation, as findings.
#pragma once

#include "harness/model/catalog.h"
#include "harness/conformance/driver.h"
#include "harness/model/expectations.h"
#include "harness/conformance/scenario.h"

#include <filesystem>
#include <string>

namespace etwh::cli {

// A case with expect_lint passes only if the linter reports exactly the rules it lists; the
// events of a provider under test are linted as the rules' severity says.
void apply_lint(const Case& c, const Catalog& catalog, CaseOutcome& outcome);

// The platform's expectation for the case, when it has one, recorded as a note.
void note_expectation(const Expectations& expectations, const std::string& case_id,
                      CaseOutcome& outcome);

// Each finding's step position (line and column in its scenario file, from its JSON pointer),
// for messages that name FILE:LINE:COL. A file that cannot be read leaves them unknown.
// Thread-safe: the files' text is read once and shared.
void locate_findings(std::vector<Finding>& findings);

// The harness blames findings on the rules of harness/model/rules.h: a catalog without one of them
// cannot judge a run. Throws InputError.
void require_harness_rules(const Catalog& catalog, const std::filesystem::path& catalog_file);

}  // namespace etwh::cli
