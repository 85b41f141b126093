// Sessions, enables and the callbacks they cause: start, stop, enable, disable,
// capture_state, flush; the enable callbacks matched in order (ordered_match.h) and compared
// field by field, and CB-TIMEOUT's ordering.
#include "harness/conformance/families/driver_families.h"

#include "harness/conformance/ordered_match.h"
#include "harness/model/rules.h"
#include "harness/conformance/families/sessions/sessions_ops.h"
#include "win32_text.h"

#include <evntrace.h>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>

namespace etwh {

using nlohmann::json;
using std::chrono::milliseconds;

namespace {

// The machine's limits say nothing about the rules: a StartTrace or EnableTraceEx2 that fails
// for one of them, with a status the step did not expect exactly (an "any failure" expectation
// cannot tell them from the failure it wants), is a harness error naming the limit, not a FAIL.
// `exhausted` says what ERROR_NO_SYSTEM_RESOURCES means for this call.
void throw_if_machine_limit(const std::string& call, const char* exhausted, const json& reply,
                            const oracle::StepExpectation& e) {
  if (!reply.contains("status") || !reply["status"].is_number_unsigned()) return;
  const auto status = reply["status"].get<std::uint32_t>();
  if (e.status == status) return;
  if (status == ERROR_ACCESS_DENIED) {
    throw HarnessFault(fmt::format(
        "{} returned ERROR_ACCESS_DENIED ({}): no right to control event tracing sessions "
        "(administrators and Performance Log Users have it; on etwrt, ETWRT_DENY_CONTROL is "
        "set); the case cannot be judged",
        call, status));
  }
  if (status == ERROR_NO_SYSTEM_RESOURCES) {
    throw HarnessFault(
        fmt::format("{} returned ERROR_NO_SYSTEM_RESOURCES ({}), which the case "
                    "does not expect: {}; the case cannot be judged",
                    call, status, exhausted));
  }
}

}  // namespace

std::optional<StepReply> CaseRun::start_session(const Step& step,
                                                const oracle::StepExpectation& e) {
  const SessionStep& ss = step_body<SessionStep>(step);
  SessionState& s = sessions_[ss.session];
  s.name = session_name(ss.session);
  s.owner = step.via;
  json req = {{"op", "start_session"}, {"session", ss.session}, {"name", s.name}};
  for (const auto& [k, v] : case_.sessions.at(ss.session).settings.items()) req[k] = v;
  if (const std::string& file = case_.sessions.at(ss.session).log_file; !file.empty()) {
    // In the temporary folder, named after the session (unique to this run), fresh each time;
    // an APPEND session's file is named after the case, so that it appends to the file an
    // earlier session of the case wrote.
    const json& settings = case_.sessions.at(ss.session).settings;
    const bool append = settings.is_object() &&
                        (settings.value("log_file_mode", 0u) & EVENT_TRACE_FILE_MODE_APPEND) != 0;
    std::error_code ec;
    const std::filesystem::path path = std::filesystem::temp_directory_path(ec) /
                                       ((append ? session_name("") : s.name + "-") + file);
    const bool earlier = std::any_of(sessions_.begin(), sessions_.end(), [&](const auto& kv) {
      return kv.first != ss.session && kv.second.log_file == path.string();
    });
    if (!earlier) std::filesystem::remove(path, ec);
    s.log_file = path.string();
    req["log_file_name"] = s.log_file;
  }
  started_names_.insert(s.name);
  json reply = controller_call(step.via, req, kReplySlack);  // start and stop take no timeout_ms
  throw_if_machine_limit("StartTraceA",
                         "the machine's limit on running sessions is reached (sessions of other "
                         "programs count; on etwrt, ETWRT_MAX_SESSIONS)",
                         reply, e);
  if (reply.value("status", 1) == 0) {
    s.running = true;
    s.handle = reply.value("handle", "0x0");
    attach_early_consumers(ss.session);
  }
  return StepReply{std::move(reply)};
}

std::string CaseRun::session_name(const std::string& label) const {
  return fmt::format("{}{}-{}", options_.session_prefix, index_, label);
}

std::optional<StepReply> CaseRun::stop_session(const Step& step, const oracle::StepExpectation&) {
  const SessionStep& ss = step_body<SessionStep>(step);
  require_session(ss.session);
  json req = session_request("control", ss.session, step.via);
  req.erase("handle");  // by name when not the owner: ControlTrace accepts either
  req["code"] = EVENT_TRACE_CONTROL_STOP;
  json reply = controller_call(step.via, req, kReplySlack);  // start and stop take no timeout_ms
  if (reply.value("status", 1) == 0) sessions_[ss.session].running = false;
  return StepReply{std::move(reply)};
}

std::optional<StepReply> CaseRun::enable(const Step& step, const oracle::StepExpectation& e) {
  const ControlStep& call = step_body<ControlStep>(step);
  require_session(call.session);
  json req = session_request("enable", call.session, step.via);
  // A provider group: its GUID with EVENT_ENABLE_PROPERTY_PROVIDER_GROUP (group_steps.h).
  req["guid"] = call.group ? format_guid(*call.group) : wire_guid(call.provider);
  req["control_code"] = step.op == ops::kEnable    ? EVENT_CONTROL_CODE_ENABLE_PROVIDER
                        : step.op == ops::kDisable ? EVENT_CONTROL_CODE_DISABLE_PROVIDER
                                                   : EVENT_CONTROL_CODE_CAPTURE_STATE;
  req["level"] = call.level;
  req["match_any"] = format_hex(call.match_any);
  req["match_all"] = format_hex(call.match_all);
  req["timeout_ms"] = call.timeout_ms;
  req["api"] = call.api;
  if (call.has_parameters) {
    json params = json::object();
    if (call.source_id) params["source_id"] = format_guid(*call.source_id);
    if (call.enable_property || call.group) {
      params["enable_property"] =
          call.enable_property | (call.group ? EVENT_ENABLE_PROPERTY_PROVIDER_GROUP : 0u);
    }
    if (!call.filters.empty()) {
      params["filters"] = json::array();
      for (const FilterDef& f : call.filters) {
        params["filters"].push_back(
            {{"type", f.type}, {"data", bytes_to_hex(f.data.data(), f.data.size())}});
      }
    }
    req["parameters"] = params;
  }
  json reply = controller_call(step.via, req, milliseconds(call.timeout_ms) + kReplySlack);
  returned_ns_ = now_ns();
  throw_if_machine_limit(call.api,
                         "too many sessions enable the provider (sessions of other programs "
                         "count too)",
                         reply, e);
  return StepReply{std::move(reply)};
}

std::optional<StepReply> CaseRun::flush_session(const Step& step, const oracle::StepExpectation&) {
  const SessionStep& ss = step_body<SessionStep>(step);
  require_session(ss.session);
  json req = session_request("control", ss.session, "");
  req.erase("handle");
  req["code"] = EVENT_TRACE_CONTROL_FLUSH;
  return StepReply{controller_call("", req, kReplySlack)};  // flush takes no timeout_ms
}

// Waits for the callbacks the oracle expects, then compares them in order per registration.
// Anything beyond them that has arrived by then is reported as unexpected.
void CaseRun::check_callbacks(const oracle::StepExpectation& e) {
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

void CaseRun::missing_callback(const std::string& provider, const oracle::ExpectedCallback& want) {
  fail(failed_check(want.is_enabled_rule, "callback",
                    fmt::format("{}: expected callback (IsEnabled {}) for {} never came", provider,
                                want.is_enabled, want.cause),
                    fmt::format("IsEnabled {}", want.is_enabled), "none"));
}

void CaseRun::compare(const oracle::ExpectedCallback& want, const json& ev) {
  const std::string who =
      fmt::format("{} callback #{} ({})", want.provider, ev.value("n", 0), want.cause);
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
                             fmt::format("{}: FilterData expected, observed NULL", who), "a filter",
                             "NULL");
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
void CaseRun::check_timing(const oracle::StepExpectation& e, std::int64_t returned_ns) {
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
  const std::int64_t ended =
      cb->value("t_ns", std::int64_t{0}) + cb->value("duration_ns", std::int64_t{0});
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

// The family's driver registration: each op's runner (families/driver_families.h).
std::vector<DriverOp> sessions_driver_ops() {
  return {
      {ops::kStart, run_part<&CaseRun::start_session>},
      {ops::kStop, run_part<&CaseRun::stop_session>},
      {ops::kEnable, run_part<&CaseRun::enable>},
      {ops::kDisable, run_part<&CaseRun::enable>},
      {ops::kCaptureState, run_part<&CaseRun::enable>},
      {ops::kFlush, run_part<&CaseRun::flush_session>},
  };
}

}  // namespace etwh
