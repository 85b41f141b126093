#include "harness/selftest/selftest.h"

#include "harness/model/catalog.h"
#include "etwh/child_process.h"
#include "etwh/output_file.h"
#include "etwh/platform.h"
#include "harness/model/json_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>

#ifndef _WIN32
#include <stdlib.h>
#endif

namespace etwh::selftest {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<std::string> expand_args(const std::vector<std::string>& args, const std::string& bin,
                                     const std::string& data, const std::string& mutants) {
  std::vector<std::string> out;
  for (std::string a : args) {
    for (const auto& [var, value] : {std::pair<std::string, std::string>{"${bin}", bin},
                                     std::pair<std::string, std::string>{"${data}", data},
                                     std::pair<std::string, std::string>{"${mutants}", mutants}}) {
      for (std::size_t at = a.find(var); at != std::string::npos;
           at = a.find(var, at + value.size())) {
        a.replace(at, var.size(), value);
      }
    }
    out.push_back(std::move(a));
  }
  return out;
}

RunSummary summarize_report(const json& report) {
  RunSummary s;
  if (!report.is_object() || !report.contains("results") || !report["results"].is_array()) {
    s.error = "the report has no results array";
    return s;
  }
  for (const json& r : report["results"]) {
    if (!r.is_object() || !r.contains("id") || !r.contains("status") ||
        !r.contains("as_expected")) {
      s.error = "a result lacks id, status or as_expected";
      return s;
    }
    ++s.cases;
    if (r["as_expected"].get<bool>()) continue;
    Failure f;
    f.case_id = r["id"].get<std::string>();
    f.status = r["status"].get<std::string>();
    f.message = r.value("message", "");
    if (r.contains("rules") && r["rules"].is_array()) {
      for (const json& rule : r["rules"]) f.rules.push_back(rule.get<std::string>());
    }
    for (const json& finding : r.value("findings", json::array())) {
      if (finding.is_object() && finding.value("severity", "") == "failure" &&
          !finding.value("rule", "").empty()) {
        f.finding_rules.push_back(finding["rule"].get<std::string>());
        f.failed_findings.push_back(finding);
      }
    }
    (f.status == "HARNESS_ERROR" ? s.harness_errors : s.failures).push_back(std::move(f));
  }
  s.report_read = true;
  return s;
}

Verdict judge(const Mutant& mutant, const RunSummary& run) {
  Verdict v;
  // A rule catches the mutant when a failed check is blamed on it, in whichever case.
  for (const Failure& f : run.failures) {
    for (const std::string& rule : f.finding_rules) v.caught.emplace(rule, f);
    for (const json& finding : f.failed_findings) {
      const std::string rule = finding.value("rule", "");
      if (std::find(mutant.expect_rules.begin(), mutant.expect_rules.end(), rule) ==
          mutant.expect_rules.end())
        continue;
      json evidence = finding;
      evidence["case"] = f.case_id;
      v.killed_by.push_back(std::move(evidence));
    }
  }
  v.killed = !v.killed_by.empty();
  return v;
}

namespace {

std::string excerpt(std::string text, std::size_t limit) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  if (text.size() > limit) text = text.substr(0, limit - 3) + "...";
  return text;
}

const char* kind_name(MutantKind k) {
  return k == MutantKind::kRuntime    ? "runtime"
         : k == MutantKind::kProvider ? "provider"
                                      : "observe";
}

}  // namespace

void print_matrix(const std::vector<Mutant>& mutants, const std::vector<RunSummary>& runs,
                  const std::vector<Verdict>& verdicts, std::ostream& out) {
  std::vector<std::string> columns;
  auto add_column = [&](const std::string& rule) {
    if (std::find(columns.begin(), columns.end(), rule) == columns.end()) columns.push_back(rule);
  };
  for (std::size_t i = 0; i < mutants.size(); ++i) {
    for (const auto& r : mutants[i].expect_rules) add_column(r);
    for (const auto& [r, f] : verdicts[i].caught) add_column(r);
  }
  out << "Kill matrix (columns are rules; X = a check of an expected rule failed, o = none did,\n"
         "+ = a check of another rule failed too, . = nothing)\n";
  for (std::size_t c = 0; c < columns.size(); ++c) {
    out << fmt::format("  [{:>2}] {}\n", c + 1, columns[c]);
  }
  std::size_t width = 6;
  for (const auto& m : mutants) width = std::max(width, m.name.size());
  out << fmt::format("{:<{}} {:<8} {:<8} ", "MUTANT", width, "KIND", "VERDICT");
  for (std::size_t c = 0; c < columns.size(); ++c) out << fmt::format("{:>3}", c + 1);
  out << "\n";
  for (std::size_t i = 0; i < mutants.size(); ++i) {
    const Mutant& m = mutants[i];
    const Verdict& v = verdicts[i];
    const char* verdict = !runs[i].report_read ? "NO-RUN" : v.killed ? "KILLED" : "SURVIVED";
    out << fmt::format("{:<{}} {:<8} {:<8} ", m.name, width, kind_name(m.kind), verdict);
    for (const std::string& rule : columns) {
      const bool expected =
          std::find(m.expect_rules.begin(), m.expect_rules.end(), rule) != m.expect_rules.end();
      const bool caught = v.caught.count(rule) > 0;
      out << fmt::format("{:>3}", expected ? (caught ? "X" : "o") : (caught ? "+" : "."));
    }
    out << "\n";
  }
  out << "\n";
  for (std::size_t i = 0; i < mutants.size(); ++i) {
    const Mutant& m = mutants[i];
    const Verdict& v = verdicts[i];
    out << fmt::format("{}: {}\n", m.name, m.description);
    if (!runs[i].report_read) {
      out << fmt::format("    no report: {}\n", runs[i].error);
      continue;
    }
    bool any = false;
    for (const std::string& rule : m.expect_rules) {
      auto it = v.caught.find(rule);
      if (it == v.caught.end()) continue;
      any = true;
      out << fmt::format("    caught by {} in {} ({}): {}\n", rule, it->second.case_id,
                         it->second.status, excerpt(it->second.message, 160));
    }
    if (!any) {
      out << fmt::format("    SURVIVED: no check of {} failed ({} cases ran, {} failed)\n",
                         fmt::join(m.expect_rules, ", "), runs[i].cases, runs[i].failures.size());
    }
    for (const Failure& h : runs[i].harness_errors) {
      out << fmt::format("    harness error in {}: {}\n", h.case_id, excerpt(h.message, 160));
    }
  }
}

#ifndef _WIN32

namespace {

struct ChildResult {
  bool started = false;
  bool timed_out = false;
  int exit_code = -1;
};

// Runs argv with `env` added to (and overriding) our environment, output to `log`. In its own
// process group, so that a timeout ends the agents it spawned too.
ChildResult run_child(const std::vector<std::string>& argv,
                      const std::map<std::string, std::string>& env, const fs::path& log,
                      int timeout_s) {
  ChildOptions options;
  options.executable = argv.at(0);
  options.args.assign(argv.begin() + 1, argv.end());
  options.env = env;
  options.stdin_mode = Stdio::kNull;
  options.log_file = log;
  options.own_process_group = true;
  boost::asio::io_context io;
  std::optional<ChildProcess> child;
  ChildResult result;
  try {
    child.emplace(io, options);
  } catch (const ChildProcessError&) {
    return result;
  }
  result.started = true;
  std::optional<ExitStatus> status = child->wait_for(std::chrono::seconds(timeout_s));
  if (!status) {
    result.timed_out = true;
    child->kill();
    status = child->wait();
  }
  result.exit_code = status->signaled ? 128 + status->signal : status->code;
  return result;
}

std::string log_tail(const fs::path& log, std::size_t lines) {
  std::ifstream in(log);
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) all.push_back(line);
  std::string out;
  for (std::size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) {
    out += "      " + all[i] + "\n";
  }
  return out;
}

fs::path fresh_dir(const fs::path& parent, const std::string& prefix) {
  std::string templ = (parent / (prefix + "-XXXXXX")).string();
  if (::mkdtemp(templ.data()) == nullptr) {
    throw std::runtime_error(parent.string() + ": cannot create a temporary folder");
  }
  return templ;
}

// One `etwh run` (`etwh observe` for an observe mutant): its own ETWRT_HOME, its JSON report
// read back.
RunSummary run_suite(const Options& o, const std::string& label, MutantKind kind,
                     const std::vector<std::string>& extra_args,
                     const std::vector<std::string>& scenarios,
                     std::map<std::string, std::string> env, const fs::path& work) {
  const fs::path report = work / (label + ".json");
  const fs::path log = work / (label + ".log");
  const fs::path home = fresh_dir(work, label + "-home");
  env["ETWRT_HOME"] = home.string();
  // The run's broker ends with this selftest, however it ends (etwh run makes no private home,
  // and so owns no broker, when ETWRT_HOME is set).
  env["ETWRT_BROKER_OWNER_PID"] = std::to_string(process_id());
  const char* command = kind == MutantKind::kObserve ? "observe" : "run";
  std::vector<std::string> argv = {o.etwh.string(),
                                   "--catalog",
                                   o.catalog_file.string(),
                                   "--scenarios",
                                   o.scenarios_dir.string(),
                                   command,
                                   "--json",
                                   report.string()};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  for (const std::string& s : scenarios) argv.push_back((o.scenarios_dir / s).string());
  std::error_code ec;
  fs::remove(report, ec);
  const ChildResult child = run_child(argv, env, log, o.run_timeout_s);
  RunSummary summary;
  if (!child.started) {
    summary.error = "cannot start " + o.etwh.string();
  } else if (child.timed_out) {
    summary.error = fmt::format("etwh {} did not finish within {} s (log: {})", command,
                                o.run_timeout_s, log.string());
  } else {
    std::ifstream in(report);
    json doc;
    if (in) {
      try {
        doc = json::parse(in);
      } catch (const json::parse_error&) {
      }
    }
    summary = summarize_report(doc);
    if (!summary.report_read) {
      summary.error = fmt::format(
          "etwh {} exited with {} and left no usable report ({}); "
          "log {}:\n{}",
          command, child.exit_code, summary.error, log.string(), log_tail(log, 8));
    }
  }
  fs::remove_all(home, ec);
  return summary;
}

// The registry, narrowed to --only; every name in --only must exist.
Registry selected_mutants(const Options& o) {
  std::set<std::string> rules;
  for (const Rule& r : load_catalog(o.catalog_file).rules) rules.insert(r.id);
  Registry registry = load_registry(o.mutants_file, rules);
  std::vector<Mutant>& mutants = registry.mutants;
  if (o.only.empty()) return registry;
  for (const std::string& name : o.only) {
    if (std::none_of(mutants.begin(), mutants.end(),
                     [&](const Mutant& m) { return m.name == name; })) {
      throw InputError("--only", "",
                       "no mutant named \"" + name + "\" in " + o.mutants_file.string());
    }
  }
  std::erase_if(mutants, [&](const Mutant& m) {
    return std::find(o.only.begin(), o.only.end(), m.name) == o.only.end();
  });
  return registry;
}

// Where the mutant build of etwrt is (runtime mutants run against it).
struct MutantBuild {
  fs::path lib_dir, broker;
};

MutantBuild mutant_build(const Options& o, const std::vector<Mutant>& mutants) {
  MutantBuild b{o.mutant_dir / "lib", o.mutant_dir / "libexec" / "etwrt-broker"};
  const bool any_runtime = std::any_of(mutants.begin(), mutants.end(), [](const Mutant& m) {
    return m.kind == MutantKind::kRuntime;
  });
  if (any_runtime && (!fs::exists(b.lib_dir / "libetwrt.so.0") || !fs::exists(b.broker))) {
    throw std::runtime_error(o.mutant_dir.string() +
                             ": no mutant build of etwrt (lib/libetwrt.so.0, "
                             "libexec/etwrt-broker); build the targets etwrt_mutants and "
                             "etwrt-broker-mutants");
  }
  return b;
}

bool clean_as_expected(const RunSummary& clean) {
  return clean.report_read && clean.failures.empty() && clean.harness_errors.empty();
}

void print_clean(const RunSummary& clean, const char* what) {
  if (!clean.report_read) {
    std::cout << "selftest: the " << what << " failed: " << clean.error << "\n";
  } else if (!clean_as_expected(clean)) {
    std::cout << fmt::format("selftest: the {} is not as expected ({} of {} cases):\n", what,
                             clean.failures.size() + clean.harness_errors.size(), clean.cases);
    for (const auto* list : {&clean.failures, &clean.harness_errors}) {
      for (const Failure& f : *list) {
        std::cout << fmt::format("    {} {}: {}\n", f.case_id, f.status, excerpt(f.message, 200));
      }
    }
  } else {
    std::cout << fmt::format("selftest: {}: {} cases, all as expected\n", what, clean.cases);
  }
}

// Mutant runs are independent (each has its own ETWRT_HOME and broker) and spend most of their
// time waiting for callbacks a mutant never makes, so a few run at once.
void run_mutants(const Options& o, const std::vector<Mutant>& mutants,
                 const std::vector<std::vector<std::string>>& args, const MutantBuild& build,
                 const std::map<std::string, std::string>& clean_env, const fs::path& work,
                 std::vector<RunSummary>& runs, std::vector<Verdict>& verdicts) {
  runs.assign(mutants.size(), {});
  verdicts.assign(mutants.size(), {});
  std::atomic<std::size_t> next{0};
  std::mutex out_mutex;
  const auto worker = [&] {
    for (std::size_t i = next++; i < mutants.size(); i = next++) {
      const Mutant& m = mutants[i];
      std::map<std::string, std::string> env = clean_env;
      if (m.kind == MutantKind::kRuntime) {
        env["ETWRT_MUTANT"] = m.name;
        const char* old = std::getenv("LD_LIBRARY_PATH");
        env["LD_LIBRARY_PATH"] =
            build.lib_dir.string() + (old != nullptr && *old != '\0' ? ":" + std::string(old) : "");
        env["ETWRT_BROKER"] = build.broker.string();
      }
      {
        std::lock_guard lock(out_mutex);
        std::cout << fmt::format("selftest: mutant {} ({})", m.name, kind_name(m.kind))
                  << std::endl;
      }
      runs[i] = run_suite(o, m.name, m.kind, args[i], m.scenarios, env, work);
      verdicts[i] = judge(m, runs[i]);
    }
  };
  std::vector<std::jthread> workers;
  for (int j = 0; j < std::max(1, o.jobs); ++j) workers.emplace_back(worker);
}

void write_matrix_json(const OutputFile& file, bool clean_ok, const std::vector<Mutant>& mutants,
                       const std::vector<RunSummary>& runs, const std::vector<Verdict>& verdicts) {
  json out = {{"schema_version", 2}, {"clean_ok", clean_ok}};
  out["mutants"] = json::array();
  for (std::size_t i = 0; i < mutants.size(); ++i) {
    json caught = json::object();
    for (const auto& [rule, f] : verdicts[i].caught) {
      caught[rule] = {{"case", f.case_id}, {"status", f.status}, {"message", f.message}};
    }
    out["mutants"].push_back({{"name", mutants[i].name},
                              {"kind", kind_name(mutants[i].kind)},
                              {"killed", verdicts[i].killed},
                              {"survived", runs[i].report_read && !verdicts[i].killed},
                              {"expect_rules", mutants[i].expect_rules},
                              {"killed_by", verdicts[i].killed_by},
                              {"caught", caught},
                              {"error", runs[i].error}});
  }
  file.write(out.dump(2) + "\n");
}

}  // namespace

int run(const Options& o) {
  // Bad input first, before anything runs.
  const std::optional<OutputFile> json_out = output_file(o.json_file.string());
  const Registry registry = selected_mutants(o);
  const std::vector<Mutant>& mutants = registry.mutants;
  const MutantBuild build = mutant_build(o, mutants);
  const auto expand = [&](const std::vector<std::string>& a) {
    return expand_args(a, o.etwh.parent_path().string(), o.data_dir.string(),
                       o.mutant_dir.string());
  };
  std::vector<std::vector<std::string>> args;  // each mutant's etwh arguments, expanded
  for (const Mutant& m : mutants) args.push_back(expand(m.etwh_args));
  const bool any_observe = std::any_of(mutants.begin(), mutants.end(), [](const Mutant& m) {
    return m.kind == MutantKind::kObserve;
  });
  fs::path work = o.keep_dir;
  if (work.empty()) {
    work = fresh_dir(fs::temp_directory_path(), "etwh-selftest");
  } else {
    fs::create_directories(work);
  }
  // The clean run must not inherit a mutant selection from whoever started us.
  const std::map<std::string, std::string> clean_env = {{"ETWRT_MUTANT", ""}};

  std::cout << "selftest: clean run" << std::endl;
  const RunSummary clean = run_suite(o, "clean", MutantKind::kRuntime, {}, {}, clean_env, work);
  print_clean(clean, "clean run");
  // The correct observed program must pass as the defect ones must fail.
  RunSummary observe_clean;
  observe_clean.report_read = true;
  if (any_observe) {
    std::cout << "selftest: clean observe run" << std::endl;
    observe_clean = run_suite(o, "clean-observe", MutantKind::kObserve,
                              expand(registry.observe_clean), {}, clean_env, work);
    print_clean(observe_clean, "clean observe run");
  }
  std::vector<RunSummary> runs;
  std::vector<Verdict> verdicts;
  run_mutants(o, mutants, args, build, clean_env, work, runs, verdicts);
  std::cout << "\n";
  print_matrix(mutants, runs, verdicts, std::cout);

  const auto killed =
      std::count_if(verdicts.begin(), verdicts.end(), [](const Verdict& v) { return v.killed; });
  const bool clean_ok = clean_as_expected(clean) && clean_as_expected(observe_clean);
  std::cout << fmt::format("\nselftest: {} of {} mutants killed; clean run {}\n", killed,
                           mutants.size(), clean_ok ? "as expected" : "NOT as expected");
  if (json_out) write_matrix_json(*json_out, clean_ok, mutants, runs, verdicts);
  if (o.keep_dir.empty()) {
    std::error_code ec;
    fs::remove_all(work, ec);
  } else {
    std::cout << "selftest: reports and logs kept in " << work.string() << "\n";
  }
  return clean_ok && killed == static_cast<long>(mutants.size()) ? 0 : 1;
}

#else

int run(const Options&) {
  throw std::runtime_error(
      "etwh selftest runs on Linux only (it swaps in the mutant build of etwrt)");
}

#endif

}  // namespace etwh::selftest
