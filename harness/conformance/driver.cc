// The driver: one case at a time (CaseRun, case_run.h), each step through its op's runner
// (families/driver_families.h),
// then what every step may cause (status, callbacks, timing, budgets) is judged.
#include "harness/environment/broker_watch.h"
#include "harness/conformance/case_run.h"
#include "harness/conformance/families/driver_families.h"
#include "etwh/platform.h"
#include "etwh/stop_signals.h"

#include "win32_text.h"

#include <evntrace.h>
#include <fmt/format.h>

#include <atomic>
#include <cstdlib>
#include <set>

namespace etwh {

using nlohmann::json;
using std::chrono::milliseconds;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// One track per driving thread (etwh run -j N runs a driver per worker thread): slices of
// different threads must not share a track, where they would overlap without nesting.
trace::Track driver_track() {
  static std::atomic<std::int64_t> next{0};
  thread_local const std::int64_t index = next.fetch_add(1);
  const auto pid = static_cast<std::int64_t>(process_id());
  return {pid, pid + index};
}

namespace {

// The Win32 call a controller request makes, as --trace names its slice.
std::string controller_api(const std::string& op, const json& req) {
  if (op == "start_session") return "StartTrace";
  if (op == "enable") return req.value("api", std::string("EnableTraceEx2"));
  switch (req.value("code", 0u)) {
    case EVENT_TRACE_CONTROL_QUERY: return "ControlTrace(QUERY)";
    case EVENT_TRACE_CONTROL_STOP: return "ControlTrace(STOP)";
    case EVENT_TRACE_CONTROL_UPDATE: return "ControlTrace(UPDATE)";
    case EVENT_TRACE_CONTROL_FLUSH: return "ControlTrace(FLUSH)";
    default: return "ControlTrace";
  }
}

}  // namespace

namespace {

// The rules of `c` that no step of the first `ran` judges, when it stopped before its end (a
// rule the oracle places in no step is judged only by a case that runs to the end).
std::vector<std::string> unreached_rules(const Case& c,
                                         const std::vector<oracle::StepExpectation>& expected,
                                         std::size_t ran) {
  if (ran >= c.steps.size()) return {};
  std::set<std::string> judged;
  for (std::size_t i = 0; i < ran && i < expected.size(); ++i) {
    judged.merge(oracle::rules_judged(expected[i]));
  }
  std::vector<std::string> out;
  for (const std::string& rule : c.rules) {
    if (!judged.count(rule)) out.push_back(rule);
  }
  return out;
}

}  // namespace

CaseOutcome CaseRun::run() {
  CaseOutcome out;
  std::vector<oracle::StepExpectation> expected;
  std::size_t ran = 0;  // steps run to their end
  try {
    expected = oracle::expect_case(case_);
    spawn_agents();
    for (std::size_t i = 0; i < case_.steps.size(); ++i) {
      throw_if_stop_requested();  // SIGINT/SIGTERM: the destructor's cleanup ends the case
      current_index_ = i;
      run_step(case_.steps[i], expected[i]);
      check_agents_alive(case_.steps[i]);
      ran = i + 1;
      if (!failures_.empty()) {
        require_agents_answer();
        out.status = Status::kFail;
        break;
      }
    }
  } catch (const AgentError& e) {
    switch (e.kind()) {
      case AgentError::Kind::kTimeout: out.status = Status::kTimeout; break;
      case AgentError::Kind::kCrashed: out.status = Status::kCrash; break;
      default: out.status = Status::kHarnessError; break;
    }
    out.fault = e.what();
  } catch (const BadRequest& e) {
    out.status = Status::kHarnessError;
    out.fault = std::string("bad request: ") + e.what();
  } catch (const std::exception& e) {
    out.status = Status::kHarnessError;
    out.fault = e.what();
  }
  if (!out.fault.empty()) out.fault_step = location();
  if (options_.trace != nullptr) trace_agents();
  out.unreached = unreached_rules(case_, expected, ran);
  out.findings = failures_;
  out.findings.insert(out.findings.end(), notes_.begin(), notes_.end());
  out.subject_events = subject_events();
  for (const auto& [label, d] : subject_descriptions_) out.intended_lint[label] = d.intended_lint;
  return out;
}

StepLocation CaseRun::location() const {
  StepLocation at;
  at.case_id = case_.id;
  at.file = case_.file;
  if (current_ != nullptr) {
    at.index = current_index_;
    at.op = std::string(current_->op);
    at.pointer = current_->pointer;
  }
  return at;
}

// A failed check of the current step (its rule empty: a step that only prepares the case).
void CaseRun::fail(Finding f) {
  f.step = location();
  failures_.push_back(std::move(f));
}

// A value observed and recorded, judging nothing.
void CaseRun::note(std::string text) {
  Finding f;
  f.check = kCheckObserved;
  f.text = std::move(text);
  f.severity = Severity::kNote;
  f.step = location();
  notes_.push_back(std::move(f));
}

void CaseRun::spawn_agents() {
  for (const std::string& label : case_.agents) {
    const bool subject = case_.subject_agents.count(label) > 0;
    if (subject && options_.subject.empty()) {
      throw HarnessFault("agent \"" + label + "\" is a subject, and no --subject was given");
    }
    agents_[label] =
        AgentProcess::spawn(subject ? options_.subject : options_.agent, label, {}, {});
  }
}

AgentProcess& CaseRun::agent(const std::string& label) {
  auto it = agents_.find(label);
  if (it == agents_.end() || gone_.count(label)) {
    throw HarnessFault("agent \"" + label + "\" is not running (exited earlier in the case)");
  }
  return *it->second;
}

// An agent that died without being told to is a crash, whatever the step was.
void CaseRun::check_agents_alive(const Step& step) {
  for (auto& [label, a] : agents_) {
    if (gone_.count(label)) continue;
    if (auto ex = a->wait_exit(milliseconds(0))) {
      throw AgentError(AgentError::Kind::kCrashed,
                       fmt::format("agent \"{}\" died after the step ({}): {} {}; stderr: {}",
                                   label, step.op, ex->signaled ? "signal" : "exit code",
                                   ex->signaled ? ex->signal : ex->exit_code, a->stderr_text()));
    }
  }
}

// A stopped (SIGSTOP) or hung agent misses the callbacks it should have reported: what
// failed is then the agent, a TIMEOUT, not the platform.
void CaseRun::require_agents_answer() {
  for (auto& [label, a] : agents_) {
    if (gone_.count(label)) continue;
    try {
      a->call({{"op", "ping"}}, kPingWait);
    } catch (const AgentError& e) {
      if (e.kind() != AgentError::Kind::kTimeout) throw;
      throw AgentError(AgentError::Kind::kTimeout,
                       fmt::format("agent \"{}\" did not answer a ping within {} ms after the "
                                   "step's checks failed (stopped or hung): {}",
                                   label, kPingWait.count(), e.what()));
    }
  }
}

json CaseRun::session_request(const std::string& op, const std::string& label,
                              const std::string& via) {
  const SessionState& s = sessions_.at(label);
  json req = {{"op", op}};
  if (s.owner == via) {
    req["session"] = label;
  } else {
    req["name"] = s.name;
    req["handle"] = s.handle;
  }
  return req;
}

json CaseRun::controller_call(const std::string& via, json req, milliseconds timeout) {
  const std::string op = req["op"];
  trace::Slice slice(options_.trace, driver_track(), controller_api(op, req), "controller",
                     {{"via", via.empty() ? "driver" : via}});
  if (!via.empty()) return agent(via).call(std::move(req), timeout);
  req.erase("op");
  if (op == "start_session") return controller_.start_session(req);
  if (op == "enable") return controller_.enable(req);
  return controller_.control(req);
}

void CaseRun::run_step(const Step& step, const oracle::StepExpectation& e) {
  current_ = &step;
  returned_ns_ = 0;
  trace::Slice slice(options_.trace, driver_track(), std::string(step.op), "step",
                     {{"pointer", step.pointer}});
  const DriverOp* runner = find_driver_op(step.op);
  if (runner == nullptr) throw HarnessFault("no runner for op " + std::string(step.op));
  const std::optional<StepReply> r = runner->run(*this, step, e);
  if (!r) return;
  if (r->status_judged) check_status(e, r->reply);
  check_callbacks(e);
  classic_.check_callbacks(case_, e, classic_hooks());
  check_timing(e, returned_ns_);
  check_callback_budgets();
}

void CaseRun::require_session(const std::string& label) {
  if (!sessions_.count(label)) {
    throw HarnessFault("session \"" + label + "\" is used before a start step");
  }
}

void CaseRun::check_status(const oracle::StepExpectation& e, const json& reply) {
  if (!reply.contains("status") || !reply["status"].is_number_unsigned()) {
    throw HarnessFault("reply without a status: " + reply.dump());
  }
  const auto status = reply["status"].get<std::uint32_t>();
  if (e.status && status != *e.status) {
    Finding f = failed_check(e.status_rule, "status",
                             fmt::format("status expected {}, observed {}", *e.status, status),
                             std::to_string(*e.status), std::to_string(status));
    f.evidence = reply.dump();  // the whole reply: what the platform returned beside the status
    fail(std::move(f));
  } else if (e.status_nonzero && status == 0) {
    Finding f = failed_check(e.status_rule, "status",
                             "status expected a failure (non-zero), observed 0", "non-zero", "0");
    f.evidence = reply.dump();
    fail(std::move(f));
  } else if (!e.status && !e.status_nonzero) {
    note(fmt::format("{} status {}", current_->pointer, status));
  }
}

// Stops every session the case started, by name, even those of exited agents.
void CaseRun::cleanup() noexcept {
  for (const std::string& name : started_names_) {
    try {
      trace::Slice slice(options_.trace, driver_track(), "ControlTrace(STOP)", "controller",
                         {{"via", "driver"}, {"cleanup", true}});
      controller_.control({{"name", name}, {"code", EVENT_TRACE_CONTROL_STOP}});
    } catch (...) {
      // Best effort: a session that never started or is already gone is fine.
    }
  }
  agents_.clear();
  remove_log_files();
}

void CaseRun::trace_agents() const {
  for (const auto& [label, a] : agents_) {
    const std::int64_t pid = a->pid();
    options_.trace->name_process(pid, fmt::format("agent {} ({})", label, case_.id));
    std::set<std::int64_t> named;
    for (const json& ev : a->events()) {
      const std::string kind = ev.value("event", "");
      if (kind != "callback" && kind != "stray_callback" && kind != "classic_callback") continue;
      // An agent of another build may not say its thread: then its process's main track.
      const trace::Track track{pid, ev.value("tid", pid)};
      if (named.insert(track.tid).second) options_.trace->name_thread(track, "callbacks");
      const std::int64_t begin = ev.value("t_ns", std::int64_t{0});
      json args = {{"n", ev.value("n", 0)}};
      for (const char* field : {"is_enabled", "level", "match_any", "match_all", "request_code"}) {
        if (ev.contains(field)) args[field] = ev[field];
      }
      const std::string provider = ev.value("provider", std::string("(stray)"));
      options_.trace->complete(track, kind + " " + provider, "callback", begin,
                               begin + ev.value("duration_ns", std::int64_t{0}), std::move(args));
    }
  }
}

void CaseRun::trace_count(const std::string& agent_label, const std::string& counter,
                          const std::string& series, std::uint64_t value) {
  if (options_.trace == nullptr || !agents_.count(agent_label)) return;
  options_.trace->counter(agents_.at(agent_label)->pid(), counter, now_ns(), {{series, value}});
}

namespace {

// The case's checks saw a broker that went away: they judge the harness's environment, not the
// platform. Its failures stay, as notes.
void blame_broker_change(const std::string& change, CaseOutcome& out) {
  out.status = Status::kHarnessError;
  std::string fault = "environment: " + change + "; the case's checks are not the platform's";
  if (!out.fault.empty()) fault += " (the case ended with: " + out.fault + ")";
  out.fault = std::move(fault);
  for (Finding& f : out.findings) {
    if (f.severity != Severity::kFailure) continue;
    f.severity = Severity::kNote;
    f.text = "not judged (the broker went away): " + f.text;
  }
}

}  // namespace

Driver::Driver(DriverOptions options) : options_(std::move(options)) {
  if (const std::vector<std::string> problems = op_registration_mismatches(); !problems.empty()) {
    throw std::logic_error("the families' registrations disagree: " + problems.front());
  }
  if (const std::string problem = etwrt_environment_problem(); !problem.empty()) {
    throw std::runtime_error("the platform cannot be used: " + problem);
  }
  if (std::getenv("ETWRT_HOME") == nullptr) return;  // real ETW: nothing of ours to probe
  // One call that must answer "no such session": any other status is the environment's fault
  // (a home the broker refuses, a broker that cannot start), named here and not as every
  // case failing with it.
  Controller probe;
  const json reply = probe.control(
      {{"name", options_.session_prefix + "probe"}, {"code", EVENT_TRACE_CONTROL_QUERY}});
  const auto status = reply.value("status", 0u);
  if (status != ERROR_WMI_INSTANCE_NOT_FOUND) {
    throw std::runtime_error(fmt::format(
        "the platform cannot be used: ControlTraceA(QUERY) of a session that does not exist "
        "returned {}, not ERROR_WMI_INSTANCE_NOT_FOUND ({}); ETWRT_HOME is {}",
        status, ERROR_WMI_INSTANCE_NOT_FOUND, std::getenv("ETWRT_HOME")));
  }
}

CaseOutcome Driver::run(const Case& c) {
  const auto start = std::chrono::steady_clock::now();
  const std::optional<BrokerIdentity> broker_before = current_broker();
  CaseOutcome out;
  trace::Slice slice(options_.trace, driver_track(), "case " + c.id, "case", {{"file", c.file}});
  {
    CaseRun run(c, options_, ++case_counter_);
    out = run.run();
  }
  // After the case's cleanup: a broker that died while its sessions were stopped counts too.
  const std::string change = broker_change(broker_before, current_broker(), "the case");
  if (!change.empty()) blame_broker_change(change, out);
  slice.arg("status", status_name(out.status));
  slice.end();
  out.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace etwh
