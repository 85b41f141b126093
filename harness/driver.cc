#include "driver.h"
#include "consumer_judge.h"
#include "ordered_match.h"
#include "group_steps.h"
#include "lint.h"

#include "agent_client.h"
#include "classic_steps.h"
#include "oracle.h"
#include "rules.h"
#include "subject_oracle.h"
#include "win32_ops.h"
#include "win32_text.h"

#include <evntrace.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

namespace etwh {

namespace {

using nlohmann::json;
using std::chrono::milliseconds;

// Generous upper bounds, never verdicts: they only keep a broken platform from hanging us.
constexpr milliseconds kReplySlack{10000};
constexpr milliseconds kCallbackWait{3000};
// Once a case has missed an expected callback it has failed; later waits only collect what is
// in flight, so a platform without callbacks (Wine) or a mutant pays one full wait per case.
constexpr milliseconds kCallbackWaitAfterMiss{200};
constexpr milliseconds kCollectWait{15000};

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A fault of the harness or the scenario (never a platform verdict).
struct HarnessFault : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct SessionState {
  std::string name;    // the real session name
  std::string handle;  // hex, as replied
  std::string owner;   // "" = the driver, else the agent that started it
  bool running = false;
};

class CaseRun {
 public:
  CaseRun(const Case& c, const DriverOptions& options, unsigned index)
      : case_(c), options_(options), index_(index) {}

  ~CaseRun() { cleanup(); }

  CaseOutcome run() {
    CaseOutcome out;
    try {
      const std::vector<oracle::StepExpectation> expected = oracle::expect_case(case_);
      spawn_agents();
      for (std::size_t i = 0; i < case_.steps.size(); ++i) {
        current_index_ = i;
        run_step(case_.steps[i], expected[i]);
        check_agents_alive(case_.steps[i]);
        if (!failures_.empty()) {
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
      out.fault = where() + e.what();
    } catch (const BadRequest& e) {
      out.status = Status::kHarnessError;
      out.fault = where() + "bad request: " + e.what();
    } catch (const std::exception& e) {
      out.status = Status::kHarnessError;
      out.fault = where() + e.what();
    }
    out.findings = failures_;
    out.findings.insert(out.findings.end(), notes_.begin(), notes_.end());
    out.subject_events = subject_events();
    return out;
  }

 private:
  std::string where() const {
    return current_ ? fmt::format("step {} ({}): ", current_->pointer, step_op_name(current_->op))
                    : std::string("setup: ");
  }

  StepLocation location() const {
    StepLocation at;
    at.case_id = case_.id;
    at.file = case_.file;
    if (current_ != nullptr) {
      at.index = current_index_;
      at.op = step_op_name(current_->op);
      at.pointer = current_->pointer;
    }
    return at;
  }

  // A failed check of the current step (its rule empty: a step that only prepares the case).
  void fail(Finding f) {
    f.step = location();
    failures_.push_back(std::move(f));
  }

  // A value observed and recorded, judging nothing.
  void note(std::string text) {
    Finding f;
    f.check = kCheckObserved;
    f.text = std::move(text);
    f.severity = Severity::kNote;
    f.step = location();
    notes_.push_back(std::move(f));
  }

  void spawn_agents() {
    for (const std::string& label : case_.agents) {
      const bool subject = case_.subject_agents.count(label) > 0;
      if (subject && options_.subject.empty()) {
        throw HarnessFault("agent \"" + label + "\" is a subject, and no --subject was given");
      }
      agents_[label] = AgentProcess::spawn(subject ? options_.subject : options_.agent, label, {}, {});
    }
  }

  AgentProcess& agent(const std::string& label) {
    auto it = agents_.find(label);
    if (it == agents_.end() || gone_.count(label)) {
      throw HarnessFault("agent \"" + label + "\" is not running (exited earlier in the case)");
    }
    return *it->second;
  }

  // An agent that died without being told to is a crash, whatever the step was.
  void check_agents_alive(const Step& step) {
    for (auto& [label, a] : agents_) {
      if (gone_.count(label)) continue;
      if (auto ex = a->wait_exit(milliseconds(0))) {
        throw AgentError(AgentError::Kind::kCrashed,
                         fmt::format("agent \"{}\" died after step {} ({}): {} {}; stderr: {}",
                                     label, step.pointer, step_op_name(step.op),
                                     ex->signaled ? "signal" : "exit code",
                                     ex->signaled ? ex->signal : ex->exit_code,
                                     a->stderr_text()));
      }
    }
  }

  json session_request(const std::string& op, const std::string& label, const std::string& via) {
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

  json controller_call(const std::string& via, json req, milliseconds timeout) {
    if (!via.empty()) return agent(via).call(std::move(req), timeout);
    const std::string op = req["op"];
    req.erase("op");
    if (op == "start_session") return controller_.start_session(req);
    if (op == "enable") return controller_.enable(req);
    return controller_.control(req);
  }

  void run_step(const Step& step, const oracle::StepExpectation& e) {
    current_ = &step;
    const milliseconds reply_timeout = milliseconds(step.timeout_ms) + kReplySlack;
    json reply;
    std::int64_t returned_ns = 0;
    switch (step.op) {
      case StepOp::kStart: {
        SessionState& s = sessions_[step.session];
        s.name = fmt::format("{}{}-{}", options_.session_prefix, index_, step.session);
        s.owner = step.via;
        json req = {{"op", "start_session"}, {"session", step.session}, {"name", s.name}};
        for (const auto& [k, v] : case_.sessions.at(step.session).settings.items()) req[k] = v;
        started_names_.insert(s.name);
        reply = controller_call(step.via, req, reply_timeout);
        if (reply.value("status", 1) == 0) {
          s.running = true;
          s.handle = reply.value("handle", "0x0");
        }
        break;
      }
      case StepOp::kStop: {
        require_session(step.session);
        json req = session_request("control", step.session, step.via);
        req.erase("handle");  // by name when not the owner: ControlTrace accepts either
        req["code"] = EVENT_TRACE_CONTROL_STOP;
        reply = controller_call(step.via, req, reply_timeout);
        if (reply.value("status", 1) == 0) sessions_[step.session].running = false;
        break;
      }
      case StepOp::kEnable:
      case StepOp::kDisable:
      case StepOp::kCaptureState: {
        require_session(step.session);
        json req = session_request("enable", step.session, step.via);
        // A provider group: its GUID with EVENT_ENABLE_PROPERTY_PROVIDER_GROUP (group_steps.h).
        req["guid"] = step.group ? format_guid(*step.group)
                                 : wire_guid(step.provider);
        req["control_code"] = step.op == StepOp::kEnable    ? EVENT_CONTROL_CODE_ENABLE_PROVIDER
                              : step.op == StepOp::kDisable ? EVENT_CONTROL_CODE_DISABLE_PROVIDER
                                                            : EVENT_CONTROL_CODE_CAPTURE_STATE;
        req["level"] = step.level;
        req["match_any"] = format_hex(step.match_any);
        req["match_all"] = format_hex(step.match_all);
        req["timeout_ms"] = step.timeout_ms;
        req["api"] = step.api;
        if (step.has_parameters) {
          json params = json::object();
          if (step.source_id) params["source_id"] = format_guid(*step.source_id);
          if (step.enable_property || step.group) {
            params["enable_property"] =
                step.enable_property | (step.group ? EVENT_ENABLE_PROPERTY_PROVIDER_GROUP : 0u);
          }
          if (!step.filters.empty()) {
            params["filters"] = json::array();
            for (const FilterDef& f : step.filters) {
              params["filters"].push_back(
                  {{"type", f.type}, {"data", bytes_to_hex(f.data.data(), f.data.size())}});
            }
          }
          req["parameters"] = params;
        }
        reply = controller_call(step.via, req, reply_timeout);
        returned_ns = now_ns();
        break;
      }
      case StepOp::kRegister: {
        const ProviderDef& p = case_.providers.at(step.provider);
        if (p.subject) {
          reply = register_subject(p);
          break;
        }
        json req = {{"op", "register"},
                    {"provider", p.label},
                    {"guid", format_guid(p.guid)},
                    {"context", format_hex(p.context)},
                    {"callback", p.has_callback ? "record" : "none"}};
        if (p.delay_ms) req["behavior"] = {{"delay_ms", p.delay_ms}};
        reply = agent(p.agent).call(req, kReplySlack);
        break;
      }
      case StepOp::kUnregister:
        reply = agent(case_.providers.at(step.provider).agent)
                    .call(case_.providers.at(step.provider).subject
                              ? json{{"op", "subject_unregister"}}
                              : json{{"op", "unregister"}, {"provider", step.provider}},
                          kReplySlack);
        break;
      case StepOp::kSubjectWrite:
      case StepOp::kInjectCallback:
        subject_step(step);
        check_callbacks(e);
        check_callback_budgets();
        return;
      case StepOp::kSetTraits: {
        const std::vector<std::uint8_t> blob = lint::traits_blob_of(step);
        traits_[step.provider] = bytes_to_hex(blob.data(), blob.size());
        reply = agent(case_.providers.at(step.provider).agent)
                    .call({{"op", "set_information"},
                           {"provider", step.provider},
                           {"class", 2},  // EventProviderSetTraits
                           {"data", bytes_to_hex(blob.data(), blob.size())}},
                          kReplySlack);
        break;
      }
      case StepOp::kQueryEnabled:
        reply = agent(case_.providers.at(step.provider).agent)
                    .call({{"op", "query_enabled"},
                           {"provider", step.provider},
                           {"level", step.level},
                           {"keyword", format_hex(step.keyword)}},
                          kReplySlack);
        break;
      case StepOp::kExitAgent: {
        AgentProcess& a = agent(step.agent);
        gone_.insert(step.agent);
        a.call({{"op", "exit"}, {"code", 0}}, kReplySlack);
        if (!a.wait_exit(kReplySlack)) throw HarnessFault("agent \"" + step.agent + "\" did not exit");
        return;
      }
      case StepOp::kKillAgent: {
        AgentProcess& a = agent(step.agent);
        gone_.insert(step.agent);
        a.kill();
        a.wait_exit(kReplySlack);
        return;
      }
      case StepOp::kConsume: {
        require_session(step.session);
        reply = agent(step.agent).call({{"op", "consume_start"},
                                        {"consumer", step.consumer},
                                        {"name", sessions_.at(step.session).name},
                                        {"mode", step.event_record_mode ? "event_record" : "event_trace"},
                                        {"context", format_hex(step.context)},
                                        {"delay_us", step.delay_us},
                                        {"wait_ms", kCallbackWait.count()}},
                                       kReplySlack + kCallbackWait);
        if (reply.value("status", 1) == 0 && !reply.value("attached", false)) {
          note(fmt::format("consumer {}: no header event before ProcessTrace {}",
                                       step.consumer,
                                       reply.contains("process_status")
                                           ? "returned " + reply["process_status"].dump()
                                           : std::string("went on")));
        }
        break;
      }
      case StepOp::kWrite:
        reply = write_events(step, e);
        break;
      case StepOp::kFlush: {
        require_session(step.session);
        json req = session_request("control", step.session, "");
        req.erase("handle");
        req["code"] = EVENT_TRACE_CONTROL_FLUSH;
        reply = controller_call("", req, reply_timeout);
        break;
      }
      case StepOp::kRegisterClassic:
      case StepOp::kUnregisterClassic:
      case StepOp::kTraceEvent:
      case StepOp::kTraceMessage:
        reply = classic_.run_step(case_, step, e, classic_hooks());
        break;
      case StepOp::kCollect:
        collect(e);
        check_callbacks(e);
        return;
      case StepOp::kDisallow: {
        require_session(step.session);
        std::vector<GUID> guids;
        for (const std::string& label : step.disallow) guids.push_back(case_.providers.at(label).guid);
        reply = set_disallow_list(parse_hex(sessions_.at(step.session).handle).value_or(0), guids);
        break;
      }
    }
    if (step.op != StepOp::kQueryEnabled) check_status(e, reply);
    if (e.provider_enabled) {
      if (!reply.contains("provider_enabled") || !reply["provider_enabled"].is_boolean()) {
        throw HarnessFault("query_enabled reply without a boolean provider_enabled");
      }
      if (reply["provider_enabled"].get<bool>() != *e.provider_enabled) {
        const bool observed = reply["provider_enabled"].get<bool>();
        fail(failed_check(
            e.provider_enabled_rule, "EventProviderEnabled",
            fmt::format("EventProviderEnabled(level {}, keyword {}) expected {}, observed {}",
                        step.level, format_hex(step.keyword), *e.provider_enabled, observed),
            fmt::format("{}", *e.provider_enabled), fmt::format("{}", observed)));
      }
    }
    check_callbacks(e);
    classic_.check_callbacks(case_, e, classic_hooks());
    check_timing(e, returned_ns);
    check_callback_budgets();
  }

  // What classic_steps.cc needs of this run.
  classic::DriverHooks classic_hooks() {
    return {[this](const std::string& label) -> AgentProcess& { return agent(label); },
            [this](Finding f) { fail(std::move(f)); },
            [this](const std::string& what) { note(what); },
            [this] { return callback_wait_; },
            [this] { callback_wait_ = kCallbackWaitAfterMiss; }};
  }

  // --- Providers under test (subject agents, harness/subject_oracle.h) ---------------------

  // The GUID a controller call names: a subject's own, else the case's.
  std::string wire_guid(const std::string& provider) const {
    auto it = subject_guids_.find(provider);
    return it != subject_guids_.end() ? it->second
                                      : format_guid(case_.providers.at(provider).guid);
  }

  json register_subject(const ProviderDef& p) {
    json reply = agent(p.agent).call({{"op", "subject_register"}, {"provider", p.label}}, kReplySlack);
    if (reply.value("status", 1) == 0) {
      if (!reply.contains("guid") || !reply["guid"].is_string() ||
          !parse_guid(reply["guid"].get<std::string>())) {
        throw HarnessFault("subject " + p.agent + " registered no provider with a callback: " +
                           reply.dump());
      }
      try {
        subject_descriptions_[p.label] = subject::parse_description(reply);
      } catch (const std::exception& e) {
        throw HarnessFault("subject " + p.agent + ": subject_register reply: " + e.what());
      }
      subject_guids_[p.label] = format_guid(*parse_guid(reply["guid"].get<std::string>()));
    }
    return reply;
  }

  void subject_step(const Step& step) {
    const ProviderDef& p = case_.providers.at(step.provider);
    if (!subject_descriptions_.count(p.label)) {
      throw HarnessFault("provider \"" + p.label + "\" is used before its register step");
    }
    if (step.op == StepOp::kSubjectWrite) {
      agent(p.agent).call({{"op", "subject_write"}, {"which", step.state_events ? "state" : "test"}},
                          kReplySlack);
      return;
    }
    const json req = {{"op", "subject_inject"}, {"is_enabled", step.is_enabled},
                      {"level", step.level},     {"match_any", format_hex(step.match_any)},
                      {"match_all", format_hex(step.match_all)}};
    const bool unknown = step.is_enabled > EVENT_CONTROL_CODE_CAPTURE_STATE;
    try {
      const json r = agent(p.agent).call(req, kReplySlack);
      check_budget(p, fmt::format("injected callback (IsEnabled {})", step.is_enabled),
                   r.value("duration_ns", std::int64_t{0}));
    } catch (const AgentError& e) {
      if (e.kind() != AgentError::Kind::kCrashed || !unknown) throw;
      // The provider died of a control code it should have ignored: the rule's verdict.
      gone_.insert(p.agent);
      fail(failed_check(rules::kCbUnknownCode, "survives",
                        fmt::format("{}: the provider crashed when its callback got IsEnabled "
                                    "{}: {}",
                                    p.label, step.is_enabled, e.what()),
                        "ignored", "crashed"));
    }
  }

  // CB-FAST: a callback slower than the scenario's budget for that provider.
  void check_budget(const ProviderDef& p, const std::string& which, std::int64_t duration_ns) {
    if (p.callback_budget_ms == 0) return;
    if (duration_ns > std::int64_t{p.callback_budget_ms} * 1'000'000) {
      const double ms = static_cast<double>(duration_ns) / 1e6;
      fail(failed_check(rules::kCbFast, "duration",
                        fmt::format("{}: {} took {:.1f} ms, over the scenario's budget of {} ms",
                                    p.label, which, ms, p.callback_budget_ms),
                        fmt::format("<= {} ms", p.callback_budget_ms),
                        fmt::format("{:.1f} ms", ms)));
    }
  }

  void check_callback_budgets() {
    for (const auto& [label, p] : case_.providers) {
      if (!p.subject || p.callback_budget_ms == 0 || !agents_.count(p.agent)) continue;
      std::size_t& checked = budget_checked_[label];
      std::size_t seen = 0;
      for (const json& ev : agents_.at(p.agent)->events()) {
        if (ev.value("event", "") != "callback" || ev.value("provider", "") != label) continue;
        if (++seen <= checked) continue;
        check_budget(p, fmt::format("callback #{} (IsEnabled {})", ev.value("n", 0),
                                    ev.value("is_enabled", 0u)),
                     ev.value("duration_ns", std::int64_t{0}));
      }
      checked = seen;
    }
  }

  // Sets aside a record of a provider under test (judged by judge_subjects); true if it was one.
  bool subject_record(const std::string& consumer, const json& r) {
    for (const auto& [label, guid] : subject_guids_) {
      if (r.value("provider", "") == guid) {
        subject_records_[consumer][label].push_back(r);
        return true;
      }
    }
    return false;
  }

  // What the providers under test wrote, from one consumer each (several consumers of one
  // provider received copies of the same events).
  std::vector<SubjectEvent> subject_events() const {
    std::vector<SubjectEvent> out;
    std::set<std::string> done;
    for (const auto& [consumer, by_provider] : subject_records_) {
      for (const auto& [label, records] : by_provider) {
        if (records.empty() || !done.insert(label).second) continue;
        for (const json& r : records) {
          if (r.value("kind", "") != "event") continue;
          lint::Descriptor d;
          d.id = r.value("id", 0u);
          d.version = r.value("version", 0u);
          d.channel = r.value("channel", 0u);
          d.level = r.value("level", 0u);
          d.opcode = r.value("opcode", 0u);
          d.keyword = std::stoull(r.value("keyword", std::string("0x0")), nullptr, 16);
          d.payload_size = r.value("payload", std::string()).size() / 2;
          out.push_back({label, d});
        }
      }
    }
    return out;
  }

  // What each consumer received from each provider under test, against subject_oracle.
  void judge_subjects(const oracle::StepExpectation& e) {
    const std::vector<oracle::StepExpectation> base = oracle::expect_case(case_);
    for (const auto& [label, description] : subject_descriptions_) {
      const auto expected = subject::expect_subject_events(case_, base, label, description);
      for (const oracle::ConsumerExpectation& c : e.consumers) {
        auto segments = expected.find(c.consumer);
        const std::vector<json>& records = subject_records_[c.consumer][label];
        const auto findings = subject::judge_records(
            segments != expected.end() ? segments->second : std::vector<subject::Segment>{},
            records, case_.rules);
        for (Finding f : findings) {
          f.text = fmt::format("consumer {} of session {}, provider {}: {}", c.consumer,
                               c.session, label, f.text);
          fail(std::move(f));
        }
        if (findings.empty()) {
          note(fmt::format("consumer {}: {} events of provider under test {} as "
                                       "expected", c.consumer, records.size(), label));
        }
      }
    }
  }

  // One agent call per entry of the event set; EventEnabled and EventProviderEnabled are asked
  // first, for that entry's descriptor, where the oracle can tell what they must say.
  json write_events(const Step& step, const oracle::StepExpectation& e) {
    AgentProcess& a = agent(case_.providers.at(step.provider).agent);
    std::uint32_t first_status = 0;
    std::uint64_t failed = 0;
    for (std::size_t i = 0; i < step.events.size(); ++i) {
      const EventDef& d = step.events[i];
      const json descriptor = {{"id", d.id},         {"version", d.version}, {"channel", d.channel},
                               {"level", d.level},   {"opcode", d.opcode},   {"task", d.task},
                               {"keyword", format_hex(d.keyword)}};
      if (i < e.event_enabled.size() && e.event_enabled[i]) {
        const json q = a.call({{"op", "query_enabled"},
                               {"provider", step.provider},
                               {"level", d.level},
                               {"keyword", format_hex(d.keyword)},
                               {"descriptor", descriptor}},
                              kReplySlack);
        const bool want = *e.event_enabled[i];
        for (const char* field : {"event_enabled", "provider_enabled"}) {
          if (!q.contains(field) || !q[field].is_boolean()) {
            throw HarnessFault(std::string("query_enabled reply without a boolean ") + field);
          }
          if (q[field].get<bool>() != want) {
            const char* api = field == std::string("event_enabled") ? "EventEnabled"
                                                                    : "EventProviderEnabled";
            fail(failed_check(
                e.event_enabled_rule, api,
                fmt::format("{} for events[{}] (level {}, keyword {}) expected {}, observed {}",
                            api, i, d.level, format_hex(d.keyword), want, !want),
                fmt::format("{}", want), fmt::format("{}", !want)));
          }
        }
      }
      json req = {{"op", "write"},       {"provider", step.provider}, {"descriptor", descriptor},
                  {"count", d.count},    {"sequence", e.first_seq.at(i)},
                  {"payload", bytes_to_hex(d.payload.data(), d.payload.size())}};
      const json r = a.call(req, kReplySlack + milliseconds(d.count / 1000));
      const auto status = r.value("status", 0u);
      if (first_status == 0) first_status = status;
      failed += r.value("failed", std::uint64_t{0});
    }
    written_failed_[step.provider] += failed;
    return {{"status", first_status}, {"failed", failed}};
  }

  // Ends every consumer: stops their sessions (ProcessTrace then returns with all that was
  // committed), takes each consumer's records and judges them against the oracle's.
  void collect(const oracle::StepExpectation& e) {
    std::map<std::string, json> properties;
    for (const std::string& session : e.collect_sessions) {
      require_session(session);
      json req = session_request("control", session, "");
      req.erase("handle");
      req["code"] = EVENT_TRACE_CONTROL_STOP;
      const json r = controller_call("", req, kReplySlack);
      if (r.value("status", 1) != 0) {
        throw HarnessFault(fmt::format("collect: stopping session {} returned {}", session,
                                       r.value("status", 1)));
      }
      sessions_[session].running = false;
      properties[session] = r.value("properties", json::object());
    }
    for (const oracle::ConsumerExpectation& c : e.consumers) {
      const json r = agent(c.agent).call(
          {{"op", "consume_stop"}, {"consumer", c.consumer}, {"wait_ms", kCollectWait.count()}},
          kReplySlack + kCollectWait);
      ConsumerFacts facts;
      facts.c = &case_;
      facts.traits = &traits_;
      facts.pid_of = [this](const std::string& label) -> std::optional<int> {
        if (!agents_.count(label) || gone_.count(label)) return std::nullopt;
        return agents_.at(label)->pid();
      };
      facts.set_aside = [&](const json& record) { return subject_record(c.consumer, record); };
      ConsumerVerdict verdict = judge_consumer(c, r, properties[c.session], facts);
      for (Finding& f : verdict.failures) fail(std::move(f));
      for (std::string& n : verdict.notes) note(std::move(n));
    }
    judge_subjects(e);
  }

  void require_session(const std::string& label) {
    if (!sessions_.count(label)) {
      throw HarnessFault("session \"" + label + "\" is used before a start step");
    }
  }

  void check_status(const oracle::StepExpectation& e, const json& reply) {
    if (!reply.contains("status") || !reply["status"].is_number_unsigned()) {
      throw HarnessFault("reply without a status: " + reply.dump());
    }
    const auto status = reply["status"].get<std::uint32_t>();
    if (e.status && status != *e.status) {
      fail(failed_check(e.status_rule, "status",
                        fmt::format("status expected {}, observed {}", *e.status, status),
                        std::to_string(*e.status), std::to_string(status)));
    } else if (e.status_nonzero && status == 0) {
      fail(failed_check(e.status_rule, "status",
                        "status expected a failure (non-zero), observed 0", "non-zero", "0"));
    } else if (!e.status && !e.status_nonzero) {
      note(fmt::format("{} status {}", current_->pointer, status));
    }
  }

  // Waits for the callbacks the oracle expects, then compares them in order per registration.
  // Anything beyond them that has arrived by then is reported as unexpected.
  void check_callbacks(const oracle::StepExpectation& e) {
    std::map<std::string, std::vector<const oracle::ExpectedCallback*>> by_provider;
    std::map<std::string, std::size_t> wanted_by_agent;
    std::uint64_t delays = 0;
    for (const auto& cb : e.callbacks) {
      by_provider[cb.provider].push_back(&cb);
      const ProviderDef& p = case_.providers.at(cb.provider);
      ++wanted_by_agent[p.agent];
      delays += p.delay_ms;
    }
    for (auto& [label, a] : agents_) {
      if (gone_.count(label)) continue;
      const std::size_t target = seen_by_agent_[label] + wanted_by_agent[label];
      if (wanted_by_agent[label] > 0) {
        if (!a->wait_for_events("callback", target, callback_wait_ + milliseconds(delays)))
          callback_wait_ = kCallbackWaitAfterMiss;
      }
      std::map<std::string, std::vector<json>> got;
      std::size_t total = 0;
      for (const json& ev : a->events()) {
        if (ev.value("event", "") != "callback") continue;
        ++total;
        got[ev.value("provider", "")].push_back(ev);
      }
      seen_by_agent_[label] = total;
      for (auto& [provider, events] : got) {
        std::size_t& consumed = consumed_[provider];
        const auto& want = by_provider[provider];
        const OrderedMatch m = match_in_order(want.size(), events.size(), consumed);
        for (const auto& [w, g] : m.pairs) compare(*want[w], events[g]);
        for (std::size_t w : m.missing) missing_callback(provider, *want[w]);
        for (std::size_t g : m.extra) {
          fail(failed_check(rules::kCbRecompute, "unexpected callback",
                            fmt::format("{}: unexpected callback {}", provider, events[g].dump()),
                            "none", events[g].dump()));
        }
        consumed = events.size();
      }
      for (const auto& [provider, want] : by_provider) {
        if (case_.providers.at(provider).agent == label && !got.count(provider)) {
          for (const auto* w : want) missing_callback(provider, *w);
        }
      }
    }
  }

  void missing_callback(const std::string& provider, const oracle::ExpectedCallback& want) {
    fail(failed_check(want.is_enabled_rule, "callback",
                      fmt::format("{}: expected callback (IsEnabled {}) for {} never came",
                                  provider, want.is_enabled, want.cause),
                      fmt::format("IsEnabled {}", want.is_enabled), "none"));
  }

  void compare(const oracle::ExpectedCallback& want, const json& ev) {
    const std::string who = fmt::format("{} callback #{} ({})", want.provider,
                                        ev.value("n", 0), want.cause);
    // "<who>: <field> expected <e>, observed <o>", the callback as the agent saw it beside.
    auto mismatch = [&](const std::string& rule, const char* field, const std::string& expected,
                        const std::string& observed) {
      Finding f = failed_check(
          rule, field, fmt::format("{}: {} expected {}, observed {}", who, field, expected, observed),
          expected, observed);
      f.evidence = ev.dump();
      fail(std::move(f));
    };
    const auto is_enabled = ev.value("is_enabled", 0xFFFFFFFFu);
    const auto level = ev.value("level", 0u);
    const auto any = parse_hex(ev.value("match_any", "")).value_or(~0ull);
    const auto all = parse_hex(ev.value("match_all", "")).value_or(~0ull);
    const std::string source = ev.value("source_id", "");
    const bool has_filter = ev.contains("filter") && !ev["filter"].is_null();
    if (is_enabled != want.is_enabled) {
      mismatch(want.is_enabled_rule, "IsEnabled", std::to_string(want.is_enabled),
               std::to_string(is_enabled));
    }
    if (want.judge_values) {
      if (level != want.values.level) {
        mismatch(rules::kCbLevelMax, "Level", std::to_string(want.values.level),
                 std::to_string(level));
      }
      if (any != want.values.match_any) {
        mismatch(rules::kCbAnyOr, "MatchAnyKeyword", format_hex(want.values.match_any),
                 format_hex(any));
      }
      if (all != want.values.match_all) {
        mismatch(rules::kCbAllAnd, "MatchAllKeyword", format_hex(want.values.match_all),
                 format_hex(all));
      }
    } else {
      note(fmt::format("{}: Level {} MatchAny {} MatchAll {}", who, level, format_hex(any),
                       format_hex(all)));
    }
    if (!want.source_rule.empty()) {
      if (source != format_guid(want.source_id)) {
        mismatch(want.source_rule, "SourceId", format_guid(want.source_id), source);
      }
    } else {
      note(fmt::format("{}: SourceId {}", who, source));
    }
    if (want.filter == oracle::FilterExpect::kAbsent && has_filter) {
      mismatch(want.filter_rule, "FilterData", "NULL", ev["filter"].dump());
    } else if (want.filter == oracle::FilterExpect::kPresent && !has_filter) {
      Finding f = failed_check(want.filter_rule, "FilterData",
                               fmt::format("{}: FilterData expected, observed NULL", who),
                               "a filter", "NULL");
      f.evidence = ev.dump();
      fail(std::move(f));
    }
    const auto context = parse_hex(ev.value("context", ""));
    // A provider under test registers with its own CallbackContext, unknown to the case.
    if (context != want.context && !case_.providers.at(want.provider).subject) {
      mismatch(rules::kCbContext, "CallbackContext", format_hex(want.context),
               ev.value("context", "?"));
    }
  }

  // CB-TIMEOUT compares orderings on the system-wide steady clock, never durations.
  void check_timing(const oracle::StepExpectation& e, std::int64_t returned_ns) {
    if (e.timing == oracle::TimingExpect::kNone || e.callbacks.empty()) return;
    const std::string& provider = e.callbacks.front().provider;
    AgentProcess& a = agent(case_.providers.at(provider).agent);
    std::optional<json> cb;
    std::size_t seen = 0;
    const std::size_t wanted = consumed_[provider];
    for (const json& ev : a.events()) {
      if (ev.value("event", "") == "callback" && ev.value("provider", "") == provider) {
        if (++seen == wanted) cb = ev;
      }
    }
    if (!cb) return;  // already reported as missing
    const std::int64_t ended = cb->value("t_ns", std::int64_t{0}) +
                               cb->value("duration_ns", std::int64_t{0});
    if (e.timing == oracle::TimingExpect::kReturnsBeforeCallbackEnds && returned_ns >= ended) {
      fail(failed_check(rules::kCbTimeout, "return",
                        fmt::format("Timeout 0: the call returned {} ns after the callback "
                                    "ended; expected it to return without waiting",
                                    returned_ns - ended),
                        "before the callback ends", "after it"));
    }
    if (e.timing == oracle::TimingExpect::kReturnsAfterCallbackEnds && returned_ns < ended) {
      fail(failed_check(rules::kCbTimeout, "return",
                        fmt::format("Timeout > 0: the call returned {} ns before the callback "
                                    "ended; expected it to wait for it",
                                    ended - returned_ns),
                        "after the callback ends", "before it"));
    }
  }

  // Stops every session the case started, by name, even those of exited agents.
  void cleanup() noexcept {
    for (const std::string& name : started_names_) {
      try {
        controller_.control({{"name", name}, {"code", EVENT_TRACE_CONTROL_STOP}});
      } catch (...) {
        // Best effort: a session that never started or is already gone is fine.
      }
    }
    agents_.clear();
  }

  const Case& case_;
  const DriverOptions& options_;
  unsigned index_;
  Controller controller_;
  std::map<std::string, std::unique_ptr<AgentProcess>> agents_;
  std::set<std::string> gone_;
  std::map<std::string, SessionState> sessions_;
  std::set<std::string> started_names_;
  std::map<std::string, std::size_t> consumed_;      // provider label -> callbacks matched
  std::map<std::string, std::size_t> seen_by_agent_;  // agent -> callbacks seen
  std::map<std::string, std::string> traits_;         // provider -> the blob it set (hex)
  std::map<std::string, std::uint64_t> written_failed_;  // provider -> EventWrite failures
  std::map<std::string, std::string> subject_guids_;  // subject provider -> its real GUID
  std::map<std::string, subject::Description> subject_descriptions_;
  // consumer -> subject provider -> its records, in arrival order
  std::map<std::string, std::map<std::string, std::vector<json>>> subject_records_;
  std::map<std::string, std::size_t> budget_checked_;  // subject provider -> callbacks judged
  std::vector<Finding> failures_;
  milliseconds callback_wait_ = kCallbackWait;  // see kCallbackWaitAfterMiss
  std::vector<Finding> notes_;
  const Step* current_ = nullptr;
  std::size_t current_index_ = 0;
  classic::Run classic_;
};

}  // namespace

CaseOutcome Driver::run(const Case& c) {
  const auto start = std::chrono::steady_clock::now();
  CaseOutcome out;
  {
    CaseRun run(c, options_, ++case_counter_);
    out = run.run();
  }
  out.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace etwh
