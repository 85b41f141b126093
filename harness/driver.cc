#include "driver.h"

#include "agent_client.h"
#include "oracle.h"
#include "win32_ops.h"
#include "win32_text.h"

#include <evntrace.h>
#include <fmt/format.h>

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
constexpr milliseconds kCallbackWait{5000};

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
        run_step(case_.steps[i], expected[i]);
        check_agents_alive(case_.steps[i]);
        if (!failures_.empty()) {
          out.status = Status::kFail;
          out.message = fmt::format("step {} ({}): ", case_.steps[i].pointer,
                                    step_op_name(case_.steps[i].op)) + join(failures_);
          break;
        }
      }
    } catch (const AgentError& e) {
      switch (e.kind()) {
        case AgentError::Kind::kTimeout: out.status = Status::kTimeout; break;
        case AgentError::Kind::kCrashed: out.status = Status::kCrash; break;
        default: out.status = Status::kHarnessError; break;
      }
      out.message = where() + e.what();
    } catch (const BadRequest& e) {
      out.status = Status::kHarnessError;
      out.message = where() + "bad request: " + e.what();
    } catch (const std::exception& e) {
      out.status = Status::kHarnessError;
      out.message = where() + e.what();
    }
    if (out.status == Status::kPass && !notes_.empty()) {
      out.message = "observed (not judged): " + join(notes_);
    }
    return out;
  }

 private:
  static std::string join(const std::vector<std::string>& parts) {
    std::string s;
    for (const std::string& p : parts) s += (s.empty() ? "" : "; ") + p;
    return s;
  }

  std::string where() const {
    return current_ ? fmt::format("step {} ({}): ", current_->pointer, step_op_name(current_->op))
                    : std::string("setup: ");
  }

  void fail(const std::string& rule, const std::string& what) {
    failures_.push_back(fmt::format("{}: {}", rule.empty() ? "setup" : rule, what));
  }

  void spawn_agents() {
    for (const std::string& label : case_.agents) {
      agents_[label] = AgentProcess::spawn(options_.agent, label, {}, {});
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
        const ProviderDef& p = case_.providers.at(step.provider);
        req["guid"] = format_guid(p.guid);
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
          if (step.enable_property) params["enable_property"] = step.enable_property;
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
                    .call({{"op", "unregister"}, {"provider", step.provider}}, kReplySlack);
        break;
      case StepOp::kSetTraits: {
        std::vector<std::uint8_t> blob = step.traits_blob;
        if (!step.traits_raw) {
          std::vector<Trait> traits;
          if (step.traits_group) traits.push_back(group_trait(*step.traits_group));
          for (const FilterDef& t : step.traits_custom) {
            traits.push_back(Trait{static_cast<std::uint8_t>(t.type), t.data});
          }
          blob = build_traits_blob(step.traits_name, traits);
        }
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
    }
    if (step.op != StepOp::kQueryEnabled) check_status(e, reply);
    if (e.provider_enabled) {
      if (!reply.contains("provider_enabled") || !reply["provider_enabled"].is_boolean()) {
        throw HarnessFault("query_enabled reply without a boolean provider_enabled");
      }
      if (reply["provider_enabled"].get<bool>() != *e.provider_enabled) {
        fail(e.provider_enabled_rule,
             fmt::format("EventProviderEnabled(level {}, keyword {}) expected {}, observed {}",
                         step.level, format_hex(step.keyword), *e.provider_enabled,
                         reply["provider_enabled"].get<bool>()));
      }
    }
    check_callbacks(e);
    check_timing(e, returned_ns);
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
      fail(e.status_rule, fmt::format("status expected {}, observed {}", *e.status, status));
    } else if (e.status_nonzero && status == 0) {
      fail(e.status_rule, "status expected a failure (non-zero), observed 0");
    } else if (!e.status && !e.status_nonzero) {
      notes_.push_back(fmt::format("{} status {}", current_->pointer, status));
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
        a->wait_for_events("callback", target, kCallbackWait + milliseconds(delays));
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
        for (std::size_t k = 0; k < want.size(); ++k) {
          if (consumed + k < events.size()) {
            compare(*want[k], events[consumed + k]);
          } else {
            fail(want[k]->is_enabled_rule,
                 fmt::format("{}: expected callback (IsEnabled {}) for {} never came",
                             provider, want[k]->is_enabled, want[k]->cause));
          }
        }
        for (std::size_t k = consumed + want.size(); k < events.size(); ++k) {
          fail("CB-RECOMPUTE", fmt::format("{}: unexpected callback {}", provider,
                                           events[k].dump()));
        }
        consumed = events.size();
      }
      for (const auto& [provider, want] : by_provider) {
        if (case_.providers.at(provider).agent == label && !got.count(provider)) {
          for (const auto* w : want) {
            fail(w->is_enabled_rule,
                 fmt::format("{}: expected callback (IsEnabled {}) for {} never came", provider,
                             w->is_enabled, w->cause));
          }
        }
      }
    }
  }

  void compare(const oracle::ExpectedCallback& want, const json& ev) {
    const std::string who = fmt::format("{} callback #{} ({})", want.provider,
                                        ev.value("n", 0), want.cause);
    const auto is_enabled = ev.value("is_enabled", 0xFFFFFFFFu);
    const auto level = ev.value("level", 0u);
    const auto any = parse_hex(ev.value("match_any", "")).value_or(~0ull);
    const auto all = parse_hex(ev.value("match_all", "")).value_or(~0ull);
    const std::string source = ev.value("source_id", "");
    const bool has_filter = ev.contains("filter") && !ev["filter"].is_null();
    if (is_enabled != want.is_enabled) {
      fail(want.is_enabled_rule,
           fmt::format("{}: IsEnabled expected {}, observed {}", who, want.is_enabled, is_enabled));
    }
    if (want.judge_values) {
      if (level != want.values.level) {
        fail("CB-LEVEL-MAX", fmt::format("{}: Level expected {}, observed {}", who,
                                         want.values.level, level));
      }
      if (any != want.values.match_any) {
        fail("CB-ANY-OR", fmt::format("{}: MatchAnyKeyword expected {}, observed {}", who,
                                      format_hex(want.values.match_any), format_hex(any)));
      }
      if (all != want.values.match_all) {
        fail("CB-ALL-AND", fmt::format("{}: MatchAllKeyword expected {}, observed {}", who,
                                       format_hex(want.values.match_all), format_hex(all)));
      }
    } else {
      notes_.push_back(fmt::format("{}: Level {} MatchAny {} MatchAll {}", who, level,
                                   format_hex(any), format_hex(all)));
    }
    if (!want.source_rule.empty()) {
      if (source != format_guid(want.source_id)) {
        fail(want.source_rule, fmt::format("{}: SourceId expected {}, observed {}", who,
                                           format_guid(want.source_id), source));
      }
    } else {
      notes_.push_back(fmt::format("{}: SourceId {}", who, source));
    }
    if (want.filter == oracle::FilterExpect::kAbsent && has_filter) {
      fail(want.filter_rule, fmt::format("{}: FilterData expected NULL, observed {}", who,
                                         ev["filter"].dump()));
    } else if (want.filter == oracle::FilterExpect::kPresent && !has_filter) {
      fail(want.filter_rule, fmt::format("{}: FilterData expected, observed NULL", who));
    }
    const auto context = parse_hex(ev.value("context", ""));
    if (context != want.context) {
      fail("CB-CONTEXT", fmt::format("{}: CallbackContext expected {}, observed {}", who,
                                     format_hex(want.context), ev.value("context", "?")));
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
      fail("CB-TIMEOUT", fmt::format("Timeout 0: the call returned {} ns after the callback "
                                     "ended; expected it to return without waiting",
                                     returned_ns - ended));
    }
    if (e.timing == oracle::TimingExpect::kReturnsAfterCallbackEnds && returned_ns < ended) {
      fail("CB-TIMEOUT", fmt::format("Timeout > 0: the call returned {} ns before the callback "
                                     "ended; expected it to wait for it",
                                     ended - returned_ns));
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
  std::vector<std::string> failures_;
  std::vector<std::string> notes_;
  const Step* current_ = nullptr;
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
