// Data path and consumers: consume (a realtime consumer in an agent), write (EventEnabled and
// EventProviderEnabled asked first where the oracle can tell), and collect (the consumers
// ended and judged by consumer_judge.h).
#include "harness/conformance/families/driver_families.h"

#include "harness/conformance/families/data_path/consumer_judge.h"
#include "harness/model/rules.h"
#include "harness/conformance/families/data_path/data_path_ops.h"
#include "event_json.h"
#include "win32_text.h"

#include <evntrace.h>
#include <fmt/format.h>

#include <algorithm>

namespace etwh {

using nlohmann::json;
using std::chrono::milliseconds;

std::optional<StepReply> CaseRun::consume(const Step& step, const oracle::StepExpectation&) {
  const ConsumeStep& cs = step_body<ConsumeStep>(step);
  // Before its session's start (never started): OpenTrace alone; the start step attaches it.
  const bool early = !sessions_.count(cs.session);
  // The driver's writes put an 8-byte sequence number before each event's data (write_events):
  // the consumer decodes what follows it.
  json request = {{"op", "consume_start"},
                  {"consumer", cs.consumer},
                  {"name", session_name(cs.session)},
                  {"mode", cs.event_record_mode ? "event_record" : "event_trace"},
                  {"context", format_hex(cs.context)},
                  {"delay_us", cs.delay_us},
                  {"wait_ms", kCallbackWait.count()},
                  {"decode_skip", 8}};
  if (!cs.manifest.empty()) request["manifest"] = cs.manifest;
  if (cs.overwrite_logfile) request["overwrite_logfile"] = true;
  if (early) request["process"] = false;
  json reply = agent(cs.agent).call(request, kReplySlack + kCallbackWait);
  if (early) {
    if (reply.value("status", 1) == 0)
      early_consumers_[cs.session].push_back({cs.agent, cs.consumer});
    return StepReply{std::move(reply)};
  }
  if (reply.value("status", 1) == 0 && !reply.value("attached", false)) {
    note(fmt::format("consumer {}: no header event before ProcessTrace {}", cs.consumer,
                     reply.contains("process_status") ? "returned " + reply["process_status"].dump()
                                                      : std::string("went on")));
  }
  return StepReply{std::move(reply)};
}

// The consumers opened before `session` started: ProcessTrace now, which must attach (the
// header event comes) rather than return.
void CaseRun::attach_early_consumers(const std::string& session) {
  auto it = early_consumers_.find(session);
  if (it == early_consumers_.end()) return;
  for (const auto& [agent_label, consumer] : it->second) {
    const json r = agent(agent_label)
                       .call({{"op", "consume_process"},
                              {"consumer", consumer},
                              {"wait_ms", kCallbackWait.count()}},
                             kReplySlack + kCallbackWait);
    if (r.value("status", 1) != 0 || !r.value("attached", false)) {
      const std::string observed =
          r.contains("process_status")
              ? "ProcessTrace returned " + r["process_status"].dump()
              : fmt::format("status {}, no header event", r.value("status", 1));
      fail(failed_check(rules::kConOpenBeforeStart, "ProcessTrace",
                        fmt::format("consumer {}, opened before session {} started: ProcessTrace "
                                    "after the start expected to attach, observed {}",
                                    consumer, session, observed),
                        "attached", observed));
    }
  }
  early_consumers_.erase(it);
}

std::optional<StepReply> CaseRun::last_error(const Step& step, const oracle::StepExpectation& e) {
  const LastErrorStep& s = step_body<LastErrorStep>(step);
  json reply = agent(s.agent).call({{"op", "last_error"}, {"api", s.api}}, kReplySlack);
  if (!reply.value("failed", false)) {
    fail(failed_check(e.status_rule, s.api,
                      fmt::format("{} of no session's handle (or a NULL Logfile) expected to fail, "
                                  "observed it return {}",
                                  s.api, reply.value("returned", std::string("?"))),
                      "its failure value", reply.value("returned", std::string("?"))));
  }
  return StepReply{std::move(reply)};
}

std::optional<StepReply> CaseRun::write(const Step& step, const oracle::StepExpectation& e) {
  return StepReply{write_events(step, e)};
}

std::optional<StepReply> CaseRun::collect_step(const Step&, const oracle::StepExpectation& e) {
  collect(e);
  check_callbacks(e);
  return std::nullopt;
}

// One agent call per entry of the event set; EventEnabled and EventProviderEnabled are asked
// first, for that entry's descriptor, where the oracle can tell what they must say.
json CaseRun::write_events(const Step& step, const oracle::StepExpectation& e) {
  const WriteStep& w = step_body<WriteStep>(step);
  AgentProcess& a = agent(case_.providers.at(w.provider).agent);
  std::uint32_t first_status = 0;
  std::uint64_t failed = 0;
  if (w.use_descriptor_type) {
    // EventProviderUseDescriptorType (3) with a BOOLEAN.
    const json r = a.call({{"op", "set_information"},
                           {"provider", w.provider},
                           {"class", 3},
                           {"data", *w.use_descriptor_type ? "01" : "00"}},
                          kReplySlack);
    first_status = r.value("status", 0u);
  }
  for (std::size_t i = 0; i < w.events.size(); ++i) {
    const EventDef& d = w.events[i];
    const json descriptor =
        descriptor_json({d.id, d.version, d.channel, d.level, d.opcode, d.task, d.keyword});
    if (i < e.event_enabled.size() && e.event_enabled[i]) {
      const json q = a.call({{"op", "query_enabled"},
                             {"provider", w.provider},
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
          const char* api =
              field == std::string("event_enabled") ? "EventEnabled" : "EventProviderEnabled";
          fail(failed_check(
              i < e.event_enabled_rules.size() ? e.event_enabled_rules[i] : e.event_enabled_rule,
              api,
              fmt::format("{} for events[{}] (level {}, keyword {}) expected {}, observed {}", api,
                          i, d.level, format_hex(d.keyword), want, !want),
              fmt::format("{}", want), fmt::format("{}", !want)));
        }
      }
    }
    json req = {{"op", "write"},
                {"provider", w.provider},
                {"descriptor", descriptor},
                {"count", d.count},
                {"sequence", e.first_seq.at(i)},
                {"payload", bytes_to_hex(d.payload.data(), d.payload.size())}};
    for (const TypedData& t : d.typed) {
      req["typed"].push_back(
          {{"type", t.type}, {"data", bytes_to_hex(t.data.data(), t.data.size())}});
    }
    const json r = a.call(req, kReplySlack + milliseconds(d.count / 1000));
    const auto status = r.value("status", 0u);
    if (first_status == 0) first_status = status;
    failed += r.value("failed", std::uint64_t{0});
    const std::uint64_t count = d.count;
    written_traced_[w.provider] += count - std::min(count, r.value("failed", std::uint64_t{0}));
    trace_count(case_.providers.at(w.provider).agent, "events written", w.provider,
                written_traced_[w.provider]);
  }
  written_failed_[w.provider] += failed;
  return {{"status", first_status}, {"failed", failed}};
}

// Ends every consumer: stops their sessions (ProcessTrace then returns with all that was
// committed), takes each consumer's records and judges them against the oracle's.
void CaseRun::collect(const oracle::StepExpectation& e) {
  std::map<std::string, json> properties;
  for (const std::string& session : e.collect_sessions) {
    require_session(session);
    json req = session_request("control", session, "");
    req.erase("handle");
    req["code"] = EVENT_TRACE_CONTROL_STOP;
    const json r = controller_call("", req, kReplySlack);
    if (r.value("status", 1) != 0) {
      throw HarnessFault(
          fmt::format("collect: stopping session {} returned {}", session, r.value("status", 1)));
    }
    sessions_[session].running = false;
    properties[session] = r.value("properties", json::object());
  }
  for (const oracle::ConsumerExpectation& c : e.consumers) {
    const json r = agent(c.agent).call(
        {{"op", "consume_stop"}, {"consumer", c.consumer}, {"wait_ms", kCollectWait.count()}},
        kReplySlack + kCollectWait);
    trace_count(c.agent, "events delivered", c.consumer, r.value("records", json::array()).size());
    ConsumerFacts facts;
    facts.c = &case_;
    facts.traits = &traits_;
    facts.pid_of = [this](const std::string& label) -> std::optional<int> {
      if (!agents_.count(label) || gone_.count(label)) return std::nullopt;
      return agents_.at(label)->pid();
    };
    facts.set_aside = [&](const json& record) { return subject_record(c.consumer, record); };
    if (c.overwrite_logfile && r.value("decoy_calls", 0) != 0) {
      const std::string calls = std::to_string(r.value("decoy_calls", 0));
      fail(failed_check(rules::kConLogfileCopy, "decoy callbacks",
                        fmt::format("consumer {}: the EVENT_TRACE_LOGFILE given to OpenTrace was "
                                    "overwritten before ProcessTrace; expected no call of what it "
                                    "held afterwards, observed {} (decoy callbacks or Context)",
                                    c.consumer, calls),
                        "0", calls));
    }
    ConsumerVerdict verdict = judge_consumer(c, r, properties[c.session], facts);
    for (Finding& f : verdict.failures) fail(std::move(f));
    for (std::string& n : verdict.notes) note(std::move(n));
  }
  judge_subjects(e);
}

// The family's driver registration: each op's runner (families/driver_families.h).
std::vector<DriverOp> data_path_driver_ops() {
  return {
      {ops::kConsume, run_part<&CaseRun::consume>},
      {ops::kWrite, run_part<&CaseRun::write>},
      {ops::kCollect, run_part<&CaseRun::collect_step>},
      {ops::kLastError, run_part<&CaseRun::last_error>},
  };
}

}  // namespace etwh
