// `etwh selftest`: the mutation self-test. Runs the conformance suite on the clean build, then
// once per registered mutant (mutants/mutants.json, format in mutants/README.md), and judges
// from each run's JSON report whether a failed check of one of the mutant's expected rules saw
// it. A mutant that survives is a hole in the suite.
#pragma once

#include "harness/model/input_error.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace etwh::selftest {

// kObserve: `etwh observe <etwh_args>` on a program built with one defect (clean etwrt).
enum class MutantKind { kRuntime, kProvider, kObserve };

struct Mutant {
  std::string name;
  MutantKind kind = MutantKind::kRuntime;
  std::string description;
  std::vector<std::string> expect_rules;
  std::vector<std::string> etwh_args;  // ${bin} and ${data} not yet expanded
  std::vector<std::string> scenarios;  // relative to the conformance folder; empty: all
};

// The registry: the mutants and, when an observe mutant is registered, the `etwh observe`
// arguments of the correct program (observe_clean), which must pass.
struct Registry {
  std::vector<Mutant> mutants;
  std::vector<std::string> observe_clean;  // ${bin}, ${data}, ${mutants} not yet expanded
};

// Loads and checks the registry: unique names of [a-z0-9-], known kinds, catalog rule IDs,
// etwh_args for provider and observe mutants, observe_clean with an observe mutant. Throws
// InputError.
Registry load_registry(const std::filesystem::path& file, const std::set<std::string>& known_rules);
Registry load_registry_text(const std::string& text, const std::string& file,
                            const std::set<std::string>& known_rules);
std::vector<Mutant> load_mutants(const std::filesystem::path& file,
                                 const std::set<std::string>& known_rules);
std::vector<Mutant> load_mutants_text(const std::string& text, const std::string& file,
                                      const std::set<std::string>& known_rules);

// Replaces ${bin}, ${data} and ${mutants} (the mutant build: Options::mutant_dir) in each
// argument.
std::vector<std::string> expand_args(const std::vector<std::string>& args, const std::string& bin,
                                     const std::string& data, const std::string& mutants);

// One case of a run that did not end as expected.
struct Failure {
  std::string case_id;
  std::vector<std::string> rules;          // the rules the case names
  std::vector<std::string> finding_rules;  // the rules its failed checks are blamed on
  std::string status;
  std::string message;
  // Its failed checks blamed on a rule, as the report has them (findings[] with severity
  // "failure"): the evidence that a rule saw the mutant.
  std::vector<nlohmann::json> failed_findings;
};

// What one run's JSON report (harness/report/report.h JsonReport) says.
struct RunSummary {
  bool report_read = false;  // false: no usable report (the run itself failed)
  std::string error;         // why, when !report_read
  int cases = 0;
  std::vector<Failure> failures;        // not as expected, harness errors excluded
  std::vector<Failure> harness_errors;  // HARNESS_ERROR: a harness fault, never a kill
};

// Reads a report; a missing or malformed one gives report_read = false with the reason.
RunSummary summarize_report(const nlohmann::json& report);

struct Verdict {
  bool killed = false;
  // Rule -> the first failing case with a failed check blamed on it.
  std::map<std::string, Failure> caught;
  // The failed findings of the mutant's expected rules, each with its "case" added: what
  // killed it (empty when it survived).
  std::vector<nlohmann::json> killed_by;
};

// Killed iff a failed check (a finding of severity "failure" in the report, what makes the
// rule's verdict FAIL: result.h rule_verdicts_of) is blamed on one of the mutant's
// expect_rules, for every kind of mutant. A failing case that merely names the rule proves
// nothing: its failure may be another rule's.
Verdict judge(const Mutant& mutant, const RunSummary& run);

// The kill matrix: one row per mutant, one column per rule that a mutant expects or that some
// mutant run failed; then one line per mutant with the catching case and a message excerpt.
void print_matrix(const std::vector<Mutant>& mutants, const std::vector<RunSummary>& runs,
                  const std::vector<Verdict>& verdicts, std::ostream& out);

// The whole command (POSIX only: it runs `etwh run` in child processes).
struct Options {
  std::filesystem::path etwh;      // this program
  std::filesystem::path data_dir;  // ${data}
  std::filesystem::path catalog_file;
  std::filesystem::path scenarios_dir;
  std::filesystem::path mutants_file;
  std::filesystem::path mutant_dir;  // <build>/mutants (bin/, lib/, libexec/)
  std::vector<std::string> only;     // mutant names; empty: all
  std::filesystem::path keep_dir;    // keep reports and logs here; empty: a temporary folder
  std::filesystem::path json_file;   // the matrix as JSON
  int run_timeout_s = 600;
  int jobs = 2;  // mutant runs at once (mostly waiting, little CPU)
};

// 0: clean run as expected and every mutant killed; 1: otherwise; 2: bad input.
int run(const Options& options);

}  // namespace etwh::selftest
