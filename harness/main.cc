// etwh: the conformance harness's command line. `etwh list` prints the rule catalog, `etwh run`
// runs conformance scenarios and reports a verdict per rule.
#include "catalog.h"
#include "compare_command.h"
#include "driver.h"
#include "etwh/stop_signals.h"
#include "expectations.h"
#include "lint.h"
#include "report.h"
#include "scenario.h"
#ifdef ETWH_HAVE_STRESS
#include "stress_command.h"
#endif
#ifdef ETWH_HAVE_SELFTEST
#include "selftest.h"
#endif

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#ifdef _WIN32
#include <windows.h>
#else
#include <unistd.h>
#endif

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <tuple>

#ifndef ETWH_DATA_DIR
#error "ETWH_DATA_DIR must name the folder holding catalog/, scenarios/ and expectations/"
#endif
#ifndef ETWH_VERSION
#define ETWH_VERSION "unknown"
#endif
#ifndef ETWH_DATA_FROM_BINDIR
#define ETWH_DATA_FROM_BINDIR "../share/etwh"
#endif
#ifndef ETWH_MUTANTS_FROM_BINDIR
#define ETWH_MUTANTS_FROM_BINDIR "../lib/etwh/mutants"
#endif

namespace {

namespace fs = std::filesystem;

constexpr int kExitOk = 0;
constexpr int kExitUnexpected = 1;
constexpr int kExitBadInput = 2;

// The catalog, scenarios, expectations and mutant registry: installed relative to the program
// (../share/etwh), or in the source tree it was built from.
fs::path data_dir(const fs::path& exe_dir) {
  const fs::path installed = (exe_dir / ETWH_DATA_FROM_BINDIR).lexically_normal();
  std::error_code ec;
  if (fs::exists(installed / "catalog" / "rules.json", ec)) return installed;
  return ETWH_DATA_DIR;
}

#ifdef ETWH_HAVE_SELFTEST
// The mutant build of etwrt and the provider mutants (mutants/README.md): installed relative to
// the program (../lib/etwh/mutants), or <build>/mutants.
fs::path mutant_dir(const fs::path& exe_dir) {
  const fs::path installed = (exe_dir / ETWH_MUTANTS_FROM_BINDIR).lexically_normal();
  std::error_code ec;
  if (fs::is_directory(installed, ec)) return installed;
  return exe_dir.parent_path() / "mutants";
}
#endif

#ifdef _WIN32
constexpr const char* kDefaultPlatform = "windows";
constexpr const char* kAgentName = "etwh-agent.exe";
constexpr const char* kDefaultSubjectName = "etwh-example-manifest.exe";
#else
constexpr const char* kDefaultPlatform = "etwrt";
constexpr const char* kAgentName = "etwh-agent";
constexpr const char* kDefaultSubjectName = "etwh-example-manifest";
#endif

fs::path self_dir(const char* argv0) {
  fs::path self;
#ifdef _WIN32
  char buf[MAX_PATH] = {};
  if (GetModuleFileNameA(nullptr, buf, MAX_PATH) > 0) self = buf;
#else
  std::error_code ec;
  self = fs::read_symlink("/proc/self/exe", ec);
#endif
  if (self.empty()) self = fs::absolute(argv0);
  return self.parent_path();
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
#ifdef _WIN32
  gmtime_s(&tm, &t);
#else
  gmtime_r(&t, &tm);
#endif
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string hostname() {
  char buf[256] = {};
#ifdef _WIN32
  DWORD size = sizeof buf;
  if (!GetComputerNameA(buf, &size)) return "";
#else
  gethostname(buf, sizeof buf - 1);
#endif
  return buf;
}

unsigned long process_id() {
#ifdef _WIN32
  return GetCurrentProcessId();
#else
  return static_cast<unsigned long>(getpid());
#endif
}

// Gives the run a private etwrt broker unless the caller chose one, and removes it afterwards.
class PrivateEtwrtHome {
 public:
  PrivateEtwrtHome() {
#ifndef _WIN32
    if (std::getenv("ETWRT_HOME") != nullptr) return;
    std::string templ = (fs::temp_directory_path() / "etwh-home-XXXXXX").string();
    if (mkdtemp(templ.data()) == nullptr) throw std::runtime_error("cannot create ETWRT_HOME");
    dir_ = templ;
    setenv("ETWRT_HOME", dir_.c_str(), 1);
#endif
  }
  ~PrivateEtwrtHome() {
    if (dir_.empty()) return;
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

 private:
  fs::path dir_;
};

int list_rules(const fs::path& catalog_file, const fs::path& scenarios_dir, bool as_json) {
  const etwh::Catalog catalog = etwh::load_catalog(catalog_file);
  const auto cases = etwh::load_scenarios({scenarios_dir}, catalog.ids());
  std::map<std::string, int> count;
  std::map<std::string, std::vector<std::string>> case_ids;
  for (const auto& c : cases) {
    for (const auto& r : c.rules) {
      ++count[r];
      case_ids[r].push_back(c.id);
    }
  }
  if (as_json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : catalog.rules) {
      out.push_back({{"id", r.id},
                     {"kind", r.kinds},
                     {"observed", r.observed},
                     {"cases", count[r.id]},
                     {"case_ids", case_ids[r.id]},
                     {"unsupported", r.unsupported},
                     {"citation", r.citation},
                     {"text", r.text}});
    }
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << fmt::format("{:<28} {:<16} {:>5}  {}\n", "ID", "KIND", "CASES", "TEXT");
  for (const auto& r : catalog.rules) {
    std::string kind;
    for (const auto& k : r.kinds) kind += (kind.empty() ? "" : "+") + k;
    if (r.observed) kind += "(obs)";
    std::cout << fmt::format("{:<28} {:<16} {:>5}  {}\n", r.id, kind, count[r.id], r.text);
    // What judges the rule: its cases, else why nothing can (per platform).
    if (!case_ids[r.id].empty()) {
      std::cout << fmt::format("{:<28} cases: {}\n", "", fmt::join(case_ids[r.id], ", "));
    }
    for (const auto& [platform, reason] : r.unsupported) {
      std::cout << fmt::format("{:<28} UNSUPPORTED on {}: {}\n", "", platform, reason);
    }
  }
  return kExitOk;
}

// A case with expect_lint passes only if the linter reports exactly the rules it lists.
// The events a provider under test wrote, linted as the rules' severity says: a failure fails
// the case, warnings are reported with it. Each distinct descriptor is named once.
void lint_subject_events(const etwh::Case& c, const etwh::Catalog& catalog,
                         etwh::CaseOutcome& outcome) {
  std::map<std::string, std::vector<etwh::lint::Descriptor>> by_provider;
  for (const etwh::SubjectEvent& e : outcome.subject_events) {
    by_provider[e.provider].push_back(e.descriptor);
  }
  std::vector<etwh::lint::Finding> findings;
  for (const auto& [provider, events] : by_provider) {
    std::set<std::tuple<int, int, int, int, int, std::uint64_t>> seen;
    for (const etwh::lint::Descriptor& d : events) {
      if (!seen.insert({d.id, d.version, d.channel, d.level, d.opcode, d.keyword}).second) continue;
      const std::string where = fmt::format(
          "{} provider under test {}: id {} version {} channel {} level {} opcode {} keyword 0x{:x}",
          c.id, provider, d.id, d.version, d.channel, d.level, d.opcode, d.keyword);
      for (auto& f : etwh::lint::lint_descriptor(d, where, catalog)) findings.push_back(f);
    }
    for (auto& f : etwh::lint::lint_event_set(
             events, fmt::format("{} provider under test {}", c.id, provider), catalog)) {
      findings.push_back(f);
    }
  }
  bool failed = false;
  std::string text;
  for (const etwh::lint::Finding& f : findings) {
    failed = failed || f.severity == etwh::lint::Severity::kFailure;
    text += (text.empty() ? "" : "; ") + etwh::lint::describe(f);
  }
  if (text.empty()) return;
  if (failed && outcome.status == etwh::Status::kPass) {
    // The lint failure is what failed the case: it leads the message.
    outcome.status = etwh::Status::kFail;
    outcome.message = "lint: " + text + (outcome.message.empty() ? "" : " | " + outcome.message);
    return;
  }
  outcome.message += (outcome.message.empty() ? "" : " | ") + std::string("lint: ") + text;
}

void apply_lint(const etwh::Case& c, const etwh::Catalog& catalog, etwh::CaseOutcome& outcome) {
  lint_subject_events(c, catalog, outcome);
  if (!c.expect_lint) return;
  const etwh::lint::Judgement j =
      etwh::lint::judge(*c.expect_lint, etwh::lint::lint_case(c, catalog));
  if (j.message.empty()) return;
  outcome.message += (outcome.message.empty() ? "" : " | ") + j.message;
  if (!j.ok && outcome.status == etwh::Status::kPass) outcome.status = etwh::Status::kFail;
}

struct RunArgs {
  std::vector<std::string> paths;
  std::string json_file, junit_file, agent, platform, expectations_file;
  std::string subject;  // the provider under test's agent (providers/adapter/)
};

int run(const RunArgs& args, const fs::path& catalog_file, const fs::path& scenarios_dir,
        const fs::path& exe_dir, const std::string& command_line) {
  const fs::path data = data_dir(exe_dir);
  const etwh::Catalog catalog = etwh::load_catalog(catalog_file);
  std::vector<fs::path> paths(args.paths.begin(), args.paths.end());
  if (paths.empty()) paths.push_back(scenarios_dir);
  const auto cases = etwh::load_scenarios(paths, catalog.ids());
  std::set<std::string> case_ids;
  for (const auto& c : cases) case_ids.insert(c.id);

  const std::string platform = args.platform.empty() ? kDefaultPlatform : args.platform;
  etwh::Expectations expectations;
  fs::path exp_file = args.expectations_file;
  if (exp_file.empty()) {
    exp_file = data / "expectations" / (platform + ".json");
    if (!fs::exists(exp_file)) exp_file.clear();
  }
  // Entries for cases outside this run are fine when only some files were chosen.
  if (!exp_file.empty()) {
    expectations = etwh::load_expectations(exp_file, args.paths.empty() ? case_ids
                                                                        : std::set<std::string>{});
  }

  const fs::path agent = args.agent.empty() ? exe_dir / kAgentName : fs::path(args.agent);
  if (!fs::exists(agent)) {
    std::cerr << "etwh: " << agent.string() << ": agent executable not found (use --agent)\n";
    return kExitBadInput;
  }

  etwh::catch_stop_signals();  // from here on, a stop unwinds: sessions, agents, then `home`
  PrivateEtwrtHome home;
  etwh::RunInfo info;
  info.platform = platform;
  info.version = ETWH_VERSION;
  info.start_time = utc_now();
  info.host = hostname();
  info.command_line = command_line;
  for (const etwh::Rule& r : catalog.rules) {
    info.catalog_rules.push_back(r.id);
    if (auto u = r.unsupported.find(platform); u != r.unsupported.end())
      info.unsupported_reasons[r.id] = u->second;
  }
  const auto start = std::chrono::steady_clock::now();

  // Cases with a subject agent run the user's provider; by default a shipped example, so that
  // they always run.
  const fs::path subject =
      args.subject.empty() ? exe_dir / kDefaultSubjectName : fs::path(args.subject);
  if (!args.subject.empty() && !fs::exists(subject)) {
    std::cerr << "etwh: " << subject.string() << ": --subject executable not found\n";
    return kExitBadInput;
  }
  etwh::DriverOptions driver_options;
  driver_options.agent = agent;
  driver_options.session_prefix = fmt::format("etwh-{}-", process_id());
  if (fs::exists(subject)) driver_options.subject = subject;
  etwh::Driver driver(driver_options);
  std::vector<etwh::CaseResult> results;
  for (const auto& c : cases) {
    if (etwh::stop_requested()) break;
    etwh::CaseOutcome outcome = driver.run(c);
    apply_lint(c, catalog, outcome);
    auto [status, ok] = etwh::classify(outcome.status, expectations, c.id);
    std::string message = outcome.message;
    if (auto it = expectations.find(c.id); it != expectations.end()) {
      message += (message.empty() ? "" : " | ") + std::string("expected ") +
                 etwh::status_name(it->second.status) + ": " + it->second.reason;
    }
    results.push_back({c.id, c.rules, status, ok, message, outcome.duration_s, c.file});
  }
  info.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Stopped: the driver has ended every case it began; `home` goes on return. No report: the
  // run is incomplete.
  if (etwh::stop_requested()) {
    std::cerr << "etwh: stopped by signal " << etwh::stop_signal() << " after " << results.size()
              << " of " << cases.size() << " cases\n";
    return etwh::stop_exit_code();
  }

  etwh::ConsoleReport().write(info, results, std::cout);
  auto write_file = [&](const std::string& file, const etwh::ReportWriter& writer) {
    if (file.empty()) return;
    std::ofstream out(file);
    writer.write(info, results, out);
    if (!out) throw std::runtime_error(file + ": cannot write the report");
  };
  write_file(args.json_file, etwh::JsonReport());
  write_file(args.junit_file, etwh::JunitReport());

  bool harness_fault = false, unexpected = false;
  for (const auto& r : results) {
    if (r.as_expected) continue;
    unexpected = true;
    if (r.status == etwh::Status::kHarnessError) harness_fault = true;
  }
  return harness_fault ? kExitBadInput : unexpected ? kExitUnexpected : kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"etwh: conformance harness for ETW (Event Tracing for Windows)", "etwh"};
  app.require_subcommand(1);
  // Global options work before or after the subcommand: what a subcommand does not know falls
  // through to here (inherited by the subcommands added below).
  app.fallthrough();
  app.set_version_flag("--version", "etwh " ETWH_VERSION);
  app.footer("Global options (--catalog, --scenarios, --version) go before or after the command.");
  const fs::path exe_dir = self_dir(argv[0]);
  const fs::path data = data_dir(exe_dir);
  std::string catalog_file = (data / "catalog" / "rules.json").string();
  std::string scenarios_dir = (data / "scenarios" / "conformance").string();
  app.add_option("--catalog", catalog_file, "Rule catalog (JSON)");
  app.add_option("--scenarios", scenarios_dir, "Folder of the shipped conformance scenarios");

  bool list_json = false;
  auto* list = app.add_subcommand("list", "Print the rule catalog");
  list->add_flag("--json", list_json, "Print JSON instead of a table");

  RunArgs run_args;
  auto* run_cmd = app.add_subcommand("run", "Run conformance scenarios");
  run_cmd->add_option("paths", run_args.paths, "Scenario files or folders (default: all shipped)");
  run_cmd->add_option("--json", run_args.json_file, "Write the JSON report to FILE");
  run_cmd->add_option("--junit", run_args.junit_file, "Write JUnit XML to FILE");
  run_cmd->add_option("--agent", run_args.agent, "The provider agent executable");
  run_cmd->add_option("--subject", run_args.subject,
                      "Provider under test: an agent built with etwh_provider_under_test (default: "
                      "the shipped manifest-style example)");
  run_cmd->add_option("--platform", run_args.platform,
                      "Platform name (selects expectations/<NAME>.json)");
  run_cmd->add_option("--expectations", run_args.expectations_file, "Expectations file");

#ifdef ETWH_HAVE_STRESS
  etwh::stress::StressArgs stress_args;
  std::string stress_writer;
  auto* stress_cmd = app.add_subcommand("stress", "Run stress profiles (scenarios/stress/)");
  stress_cmd->add_option("profiles", stress_args.profiles, "Stress profile files")->required();
  stress_cmd->add_option("--json", stress_args.json_file, "Write the JSON results to FILE");
  stress_cmd->add_option("--sweep", stress_args.sweep,
                         "Run each profile once per value: DIMENSION=V1,V2,...");
  stress_cmd->add_option("--writer", stress_writer, "The etwh-stress-writer executable");
  stress_cmd->add_option("--repetitions", stress_args.repetitions,
                         "Run each profile N times and keep every run (default 1)")
      ->check(CLI::Range(1u, 1000u));
  stress_cmd->add_option("--series-ms", stress_args.series_ms,
                         "Time series step in ms (default 100)")
      ->check(CLI::Range(std::uint64_t{10}, std::uint64_t{60000}));
  double stress_min_effect_pct = 5;
  stress_cmd->add_option("--baseline", stress_args.baseline,
                         "Compare with this results file (etwh compare BASELINE <this run>)");
  stress_cmd->add_option("--alpha", stress_args.thresholds.alpha,
                         "With --baseline: significance level of the U test (default 0.05)")
      ->check(CLI::Range(0.0, 1.0));
  stress_cmd->add_option("--min-effect", stress_min_effect_pct,
                         "With --baseline: smallest change of a median that counts, in % (default 5)")
      ->check(CLI::Range(0.0, 1000.0));
  stress_cmd->add_option("--only", stress_args.thresholds.only,
                         "With --baseline: compare only the figures this regular expression finds");
#endif

  etwh::compare::CompareArgs compare_args;
  double compare_min_effect_pct = 5;
  auto* compare_cmd = app.add_subcommand(
      "compare", "Compare two result files (stress, run or Google Benchmark JSON): exit 1 on a regression");
  compare_cmd->add_option("old", compare_args.old_file, "The baseline")->required();
  compare_cmd->add_option("new", compare_args.new_file, "The results to judge")->required();
  compare_cmd->add_option("--alpha", compare_args.thresholds.alpha,
                          "Significance level of the Mann-Whitney U test (default 0.05)")
      ->check(CLI::Range(0.0, 1.0));
  compare_cmd->add_option("--min-effect", compare_min_effect_pct,
                          "Smallest change of a median that counts, in % (default 5)")
      ->check(CLI::Range(0.0, 1000.0));
  compare_cmd->add_option("--only", compare_args.thresholds.only,
                          "Compare only the figures this regular expression finds");
  compare_cmd->add_option("--markdown", compare_args.markdown_file, "Write markdown to FILE");
  compare_cmd->add_option("--json", compare_args.json_file, "Write JSON to FILE");

#ifdef ETWH_HAVE_SELFTEST
  etwh::selftest::Options selftest_opts;
  std::string selftest_mutants = (data / "mutants" / "mutants.json").string();
  std::string selftest_mutant_dir = mutant_dir(exe_dir).string();
  std::string selftest_keep, selftest_json;
  auto* selftest_cmd = app.add_subcommand(
      "selftest", "Mutation self-test: the suite must pass on the clean build and kill every mutant");
  selftest_cmd->add_option("--mutants", selftest_mutants, "Mutant registry (mutants/mutants.json)");
  selftest_cmd->add_option("--mutant-dir", selftest_mutant_dir,
                           "The mutant build (holds bin/, lib/ and libexec/)");
  selftest_cmd->add_option("--only", selftest_opts.only, "Run only this mutant (repeatable)");
  selftest_cmd->add_option("--keep", selftest_keep, "Keep each run's report and log in DIR");
  selftest_cmd->add_option("--json", selftest_json, "Write the kill matrix as JSON to FILE");
  selftest_cmd->add_option("--jobs", selftest_opts.jobs, "Mutant runs at once (default 2)")
      ->check(CLI::Range(1, 16));
  selftest_cmd->add_option("--run-timeout", selftest_opts.run_timeout_s,
                           "Seconds one `etwh run` may take");
#endif

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitBadInput;
  }

  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);

  try {
    if (*list) return list_rules(catalog_file, scenarios_dir, list_json);
    if (*compare_cmd) {
      compare_args.thresholds.min_effect = compare_min_effect_pct / 100;
      return etwh::compare::run_compare_command(compare_args);
    }
#ifdef ETWH_HAVE_SELFTEST
    if (*selftest_cmd) {
      selftest_opts.etwh = exe_dir / "etwh";
      selftest_opts.data_dir = data;
      selftest_opts.catalog_file = fs::absolute(catalog_file);
      selftest_opts.scenarios_dir = fs::absolute(scenarios_dir);
      selftest_opts.mutants_file = fs::absolute(selftest_mutants);
      selftest_opts.mutant_dir = fs::absolute(selftest_mutant_dir);
      selftest_opts.keep_dir = selftest_keep.empty() ? fs::path() : fs::absolute(selftest_keep);
      selftest_opts.json_file = selftest_json.empty() ? fs::path() : fs::absolute(selftest_json);
      return etwh::selftest::run(selftest_opts);
    }
#endif
#ifdef ETWH_HAVE_STRESS
    if (*stress_cmd) {
      etwh::catch_stop_signals();
      PrivateEtwrtHome home;
      stress_args.writer =
          stress_writer.empty() ? exe_dir / "etwh-stress-writer" : fs::path(stress_writer);
      stress_args.platform = kDefaultPlatform;
      stress_args.version = ETWH_VERSION;
      stress_args.command_line = command_line;
      stress_args.host = hostname();
      stress_args.start_time = utc_now();
      stress_args.thresholds.min_effect = stress_min_effect_pct / 100;
      return etwh::stress::run_stress_command(stress_args);
    }
#endif
    return run(run_args, catalog_file, scenarios_dir, exe_dir, command_line);
  } catch (const etwh::ScenarioError& e) {
    std::cerr << e.what() << "\n";
  } catch (const etwh::CatalogError& e) {
    std::cerr << e.what() << "\n";
  } catch (const etwh::ExpectationsError& e) {
    std::cerr << e.what() << "\n";
#ifdef ETWH_HAVE_SELFTEST
  } catch (const etwh::selftest::SelftestError& e) {
    std::cerr << e.what() << "\n";
#endif
  } catch (const std::exception& e) {
    std::cerr << "etwh: " << e.what() << "\n";
  }
  return kExitBadInput;
}
