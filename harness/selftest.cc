#include "selftest.h"

#include "catalog.h"
#include "etwh/child_process.h"
#include "etwh/platform.h"
#include "json_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <iostream>
#include <mutex>
#include <regex>
#include <sstream>
#include <thread>

#ifndef _WIN32
#include <stdlib.h>
#endif

namespace etwh::selftest {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {
std::vector<Mutant> parse_mutants(const json& doc, const std::string& file,
                                  const std::set<std::string>& known_rules);
}  // namespace

std::vector<Mutant> load_mutants_text(const std::string& text, const std::string& file,
                                      const std::set<std::string>& known_rules) {
  const json doc = parse_input_json(text, file);
  try {
    return parse_mutants(doc, file, known_rules);
  } catch (const InputError& e) {
    throw e.located_in(text);
  }
}

namespace {

std::vector<Mutant> parse_mutants(const json& doc, const std::string& file,
                                  const std::set<std::string>& known_rules) {
  auto fail = [&](const std::string& pointer, const std::string& reason) {
    throw InputError(file, pointer, reason);
  };
  if (!doc.is_object()) fail("", "expected an object");
  if (doc.value("schema_version", 0) != 1) fail("/schema_version", "expected 1");
  if (!doc.contains("mutants") || !doc["mutants"].is_array()) {
    fail("/mutants", "expected an array of mutants");
  }
  static const std::set<std::string> fields = {"name",         "kind",      "description",
                                               "expect_rules", "etwh_args", "scenarios"};
  static const std::regex name_pattern("[a-z0-9]+(-[a-z0-9]+)*");
  std::vector<Mutant> out;
  std::set<std::string> names;
  for (std::size_t i = 0; i < doc["mutants"].size(); ++i) {
    const json& m = doc["mutants"][i];
    const std::string p = "/mutants/" + std::to_string(i);
    if (!m.is_object()) fail(p, "expected an object");
    for (const auto& [key, value] : m.items()) {
      if (!fields.count(key)) fail(p + "/" + key, "unknown field");
    }
    auto string_field = [&](const char* f) {
      if (!m.contains(f) || !m[f].is_string() || m[f].get<std::string>().empty()) {
        fail(p + "/" + f, "missing or not a non-empty string");
      }
      return m[f].get<std::string>();
    };
    auto string_list = [&](const char* f, bool required) {
      std::vector<std::string> list;
      if (!m.contains(f)) {
        if (required) fail(p + "/" + f, "missing");
        return list;
      }
      if (!m[f].is_array()) fail(p + "/" + f, "expected an array of strings");
      for (std::size_t j = 0; j < m[f].size(); ++j) {
        if (!m[f][j].is_string() || m[f][j].get<std::string>().empty()) {
          fail(p + "/" + f + "/" + std::to_string(j), "expected a non-empty string");
        }
        list.push_back(m[f][j]);
      }
      if (required && list.empty()) fail(p + "/" + f, "must not be empty");
      return list;
    };
    Mutant mutant;
    mutant.name = string_field("name");
    if (!std::regex_match(mutant.name, name_pattern)) {
      fail(p + "/name", "\"" + mutant.name + "\" is not of the form [a-z0-9]+(-[a-z0-9]+)*");
    }
    if (!names.insert(mutant.name).second)
      fail(p + "/name", "duplicate mutant \"" + mutant.name + "\"");
    const std::string kind = string_field("kind");
    if (kind == "runtime") {
      mutant.kind = MutantKind::kRuntime;
    } else if (kind == "provider") {
      mutant.kind = MutantKind::kProvider;
    } else {
      fail(p + "/kind", "unknown kind \"" + kind + "\" (runtime or provider)");
    }
    mutant.description = string_field("description");
    mutant.expect_rules = string_list("expect_rules", true);
    for (std::size_t j = 0; j < mutant.expect_rules.size(); ++j) {
      if (!known_rules.count(mutant.expect_rules[j])) {
        fail(p + "/expect_rules/" + std::to_string(j),
             "unknown rule \"" + mutant.expect_rules[j] + "\"");
      }
    }
    mutant.etwh_args = string_list("etwh_args", mutant.kind == MutantKind::kProvider);
    mutant.scenarios = string_list("scenarios", false);
    for (std::size_t j = 0; j < mutant.scenarios.size(); ++j) {
      if (fs::path(mutant.scenarios[j]).is_absolute()) {
        fail(p + "/scenarios/" + std::to_string(j), "must be relative to scenarios/conformance/");
      }
    }
    out.push_back(std::move(mutant));
  }
  return out;
}

}  // namespace

std::vector<Mutant> load_mutants(const fs::path& file, const std::set<std::string>& known_rules) {
  return load_mutants_text(read_input_file(file), file.string(), known_rules);
}

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
      if (finding.value("severity", "") == "failure" && !finding.value("rule", "").empty()) {
        f.finding_rules.push_back(finding["rule"].get<std::string>());
      }
    }
    (f.status == "HARNESS_ERROR" ? s.harness_errors : s.failures).push_back(std::move(f));
  }
  s.report_read = true;
  return s;
}

Verdict judge(const Mutant& mutant, const RunSummary& run) {
  Verdict v;
  // A rule catches the mutant when a failing case checks it, or when a failed check of the
  // case is blamed on it (a check in another rule's case may be the one that sees the defect).
  for (const Failure& f : run.failures) {
    for (const std::string& rule : f.rules) v.caught.emplace(rule, f);
    for (const std::string& rule : f.finding_rules) v.caught.emplace(rule, f);
  }
  for (const std::string& rule : mutant.expect_rules) {
    if (v.caught.count(rule)) v.killed = true;
  }
  return v;
}

namespace {

std::string excerpt(std::string text, std::size_t limit) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  if (text.size() > limit) text = text.substr(0, limit - 3) + "...";
  return text;
}

const char* kind_name(MutantKind k) { return k == MutantKind::kRuntime ? "runtime" : "provider"; }

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
  out << "Kill matrix (columns are rules; X = expected rule caught, o = expected rule not caught,\n"
         "+ = another rule's case failed too, . = nothing)\n";
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
      out << fmt::format("    SURVIVED: no case of {} failed ({} cases ran, {} failed)\n",
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

// One `etwh run`: its own ETWRT_HOME, its JSON report read back.
RunSummary run_suite(const Options& o, const std::string& label,
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
  std::vector<std::string> argv = {o.etwh.string(),
                                   "--catalog",
                                   o.catalog_file.string(),
                                   "--scenarios",
                                   o.scenarios_dir.string(),
                                   "run",
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
    summary.error =
        fmt::format("etwh run did not finish within {} s (log: {})", o.run_timeout_s, log.string());
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
          "etwh run exited with {} and left no usable report ({}); "
          "log {}:\n{}",
          child.exit_code, summary.error, log.string(), log_tail(log, 8));
    }
  }
  fs::remove_all(home, ec);
  return summary;
}

// The registry, narrowed to --only; every name in --only must exist.
std::vector<Mutant> selected_mutants(const Options& o) {
  std::set<std::string> rules;
  for (const Rule& r : load_catalog(o.catalog_file).rules) rules.insert(r.id);
  std::vector<Mutant> mutants = load_mutants(o.mutants_file, rules);
  if (o.only.empty()) return mutants;
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
  return mutants;
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

void print_clean(const RunSummary& clean) {
  if (!clean.report_read) {
    std::cout << "selftest: the clean run failed: " << clean.error << "\n";
  } else if (!clean_as_expected(clean)) {
    std::cout << fmt::format("selftest: the clean run is not as expected ({} of {} cases):\n",
                             clean.failures.size() + clean.harness_errors.size(), clean.cases);
    for (const auto* list : {&clean.failures, &clean.harness_errors}) {
      for (const Failure& f : *list) {
        std::cout << fmt::format("    {} {}: {}\n", f.case_id, f.status, excerpt(f.message, 200));
      }
    }
  } else {
    std::cout << fmt::format("selftest: clean run: {} cases, all as expected\n", clean.cases);
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
      runs[i] = run_suite(o, m.name, args[i], m.scenarios, env, work);
      verdicts[i] = judge(m, runs[i]);
    }
  };
  std::vector<std::jthread> workers;
  for (int j = 0; j < std::max(1, o.jobs); ++j) workers.emplace_back(worker);
}

void write_matrix_json(const fs::path& file, bool clean_ok, const std::vector<Mutant>& mutants,
                       const std::vector<RunSummary>& runs, const std::vector<Verdict>& verdicts) {
  json out = {{"schema_version", 1}, {"clean_ok", clean_ok}};
  out["mutants"] = json::array();
  for (std::size_t i = 0; i < mutants.size(); ++i) {
    json caught = json::object();
    for (const auto& [rule, f] : verdicts[i].caught) {
      caught[rule] = {{"case", f.case_id}, {"status", f.status}, {"message", f.message}};
    }
    out["mutants"].push_back({{"name", mutants[i].name},
                              {"kind", kind_name(mutants[i].kind)},
                              {"killed", verdicts[i].killed},
                              {"expect_rules", mutants[i].expect_rules},
                              {"caught", caught},
                              {"error", runs[i].error}});
  }
  std::ofstream f(file);
  f << out.dump(2) << "\n";
  if (!f) throw std::runtime_error(file.string() + ": cannot write");
}

}  // namespace

int run(const Options& o) {
  // Bad input first, before anything runs.
  const std::vector<Mutant> mutants = selected_mutants(o);
  const MutantBuild build = mutant_build(o, mutants);
  std::vector<std::vector<std::string>> args;  // each mutant's etwh arguments, expanded
  for (const Mutant& m : mutants) {
    args.push_back(expand_args(m.etwh_args, o.etwh.parent_path().string(), o.data_dir.string(),
                               o.mutant_dir.string()));
  }
  fs::path work = o.keep_dir;
  if (work.empty()) {
    work = fresh_dir(fs::temp_directory_path(), "etwh-selftest");
  } else {
    fs::create_directories(work);
  }
  // The clean run must not inherit a mutant selection from whoever started us.
  const std::map<std::string, std::string> clean_env = {{"ETWRT_MUTANT", ""}};

  std::cout << "selftest: clean run" << std::endl;
  const RunSummary clean = run_suite(o, "clean", {}, {}, clean_env, work);
  print_clean(clean);
  std::vector<RunSummary> runs;
  std::vector<Verdict> verdicts;
  run_mutants(o, mutants, args, build, clean_env, work, runs, verdicts);
  std::cout << "\n";
  print_matrix(mutants, runs, verdicts, std::cout);

  const auto killed =
      std::count_if(verdicts.begin(), verdicts.end(), [](const Verdict& v) { return v.killed; });
  const bool clean_ok = clean_as_expected(clean);
  std::cout << fmt::format("\nselftest: {} of {} mutants killed; clean run {}\n", killed,
                           mutants.size(), clean_ok ? "as expected" : "NOT as expected");
  if (!o.json_file.empty()) write_matrix_json(o.json_file, clean_ok, mutants, runs, verdicts);
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
