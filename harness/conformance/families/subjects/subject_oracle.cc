#include "harness/conformance/families/subjects/subject_oracle.h"
#include "harness/model/rules.h"
#include "harness/conformance/families/data_path/data_path_ops.h"
#include "harness/conformance/families/sessions/sessions_ops.h"
#include "harness/conformance/families/subjects/subjects_ops.h"

#include "win32_text.h"

#include <evntprov.h>
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace etwh::subject {
namespace {

using nlohmann::json;

std::uint64_t number(const json& o, const char* key, std::uint64_t max, const std::string& where) {
  const auto it = o.find(key);
  if (it == o.end()) return 0;
  const bool in_range = it->is_number_unsigned()
                            ? it->get<std::uint64_t>() <= max
                            : it->is_number_integer() && it->get<std::int64_t>() >= 0 &&
                                  static_cast<std::uint64_t>(it->get<std::int64_t>()) <= max;
  if (!in_range) {
    throw std::runtime_error(where + "." + key + ": expected an integer in [0, " +
                             std::to_string(max) + "], got " + it->dump());
  }
  return it->get<std::uint64_t>();
}

EventDef event_from_json(const json& o, const std::string& where) {
  if (!o.is_object()) throw std::runtime_error(where + ": expected an object, got " + o.dump());
  EventDef e;
  e.id = static_cast<std::uint16_t>(number(o, "id", 0xFFFF, where));
  e.version = static_cast<std::uint8_t>(number(o, "version", 255, where));
  e.channel = static_cast<std::uint8_t>(number(o, "channel", 255, where));
  e.level = static_cast<std::uint8_t>(number(o, "level", 255, where));
  e.opcode = static_cast<std::uint8_t>(number(o, "opcode", 255, where));
  e.task = static_cast<std::uint16_t>(number(o, "task", 0xFFFF, where));
  if (o.contains("keyword")) {
    const auto k =
        o["keyword"].is_string() ? parse_hex(o["keyword"].get<std::string>()) : std::nullopt;
    if (!k)
      throw std::runtime_error(where + ".keyword: expected \"0x...\", got " + o["keyword"].dump());
    e.keyword = *k;
  }
  return e;
}

std::vector<EventDef> events_from_json(const json& reply, const char* key) {
  std::vector<EventDef> out;
  const auto it = reply.find(key);
  if (it == reply.end() || it->is_null()) return out;
  if (!it->is_array()) throw std::runtime_error(std::string(key) + ": expected an array");
  for (std::size_t i = 0; i < it->size(); ++i) {
    out.push_back(event_from_json((*it)[i], std::string(key) + "[" + std::to_string(i) + "]"));
  }
  return out;
}

// A segment's events are checked by several rules at once (a state write after a capture
// checks PROV-CAPTURE-STATE and PROV-RECORD): a mismatch is blamed on the one the case is
// about, else the most specific.
std::string pick_rule(const std::vector<std::string>& rules,
                      const std::vector<std::string>& case_rules) {
  for (const std::string& r : rules) {
    if (std::find(case_rules.begin(), case_rules.end(), r) != case_rules.end()) return r;
  }
  return rules.empty() ? std::string(rules::kProvEventEnabled) : rules.front();
}

std::string list(const std::vector<std::string>& items) {
  std::string s = "[";
  for (std::size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i];
  return s + "]";
}

// `a` without one of each item of `b` (a multiset difference), in `a`'s order.
std::vector<std::string> without(std::vector<std::string> a, const std::vector<std::string>& b) {
  for (const std::string& x : b) {
    if (auto it = std::find(a.begin(), a.end(), x); it != a.end()) a.erase(it);
  }
  return a;
}

// What differs between the events a step should have given and those that came: the missing,
// the unexpected, or the order; not every event of both lists.
std::string difference(const std::vector<std::string>& want, const std::vector<std::string>& seen) {
  const std::vector<std::string> missing = without(want, seen), extra = without(seen, want);
  if (missing.empty() && extra.empty()) return "the same events in another order: " + list(seen);
  std::string out;
  if (!missing.empty()) out = fmt::format("{} missing: {}", missing.size(), list(missing));
  if (!extra.empty())
    out += fmt::format("{}{} unexpected: {}", out.empty() ? "" : "; ", extra.size(), list(extra));
  return out;
}

struct SessionState {
  bool running = false;
  std::optional<oracle::SessionEnable> enable;  // of the subject provider
  std::vector<FilterDef> filters;
};

// What the subject's callback has recorded, as a conforming provider would.
struct ProviderState {
  oracle::Aggregate recorded;  // enabled, level, MatchAny, MatchAll
  std::set<std::uint16_t> skipped;
  std::string unknown_code;  // set when an unknown code was injected since the last real change
};

}  // namespace

std::string describe_event(const EventDef& e) {
  std::string s = fmt::format("id {} level {} keyword {}", e.id, e.level, format_hex(e.keyword));
  if (e.channel) s += fmt::format(" channel {}", e.channel);
  if (e.opcode) s += fmt::format(" opcode {}", e.opcode);
  if (e.task) s += fmt::format(" task {}", e.task);
  if (e.version) s += fmt::format(" version {}", e.version);
  return s;
}

Description parse_description(const json& reply) {
  Description d;
  d.test_events = events_from_json(reply, "test_events");
  d.state_events = events_from_json(reply, "state_events");
  if (reply.contains("id_filter") && !reply["id_filter"].is_null()) {
    d.id_filter = static_cast<std::uint16_t>(number(reply, "id_filter", 0xFFFF, "reply"));
  }
  const auto intended = reply.find("intended_lint");
  if (intended == reply.end() || intended->is_null()) return d;
  if (!intended->is_array()) throw std::runtime_error("intended_lint: expected an array");
  for (std::size_t i = 0; i < intended->size(); ++i) {
    const json& l = (*intended)[i];
    const std::string at = "intended_lint[" + std::to_string(i) + "]";
    if (!l.is_object() || !l.contains("rule") || !l["rule"].is_string() || !l.contains("event"))
      throw std::runtime_error(at + ": expected {rule, event, reason}");
    const EventDef e = event_from_json(l["event"], at + ".event");
    lint::Intent intent;
    intent.rule = l["rule"].get<std::string>();
    intent.event = {e.id, e.version, e.channel, e.level, e.opcode, e.keyword, 0};
    if (l.contains("reason") && l["reason"].is_string()) intent.reason = l["reason"];
    d.intended_lint.push_back(std::move(intent));
  }
  return d;
}

std::set<std::uint16_t> skipped_ids(const std::vector<FilterDef>& filters,
                                    std::uint16_t id_filter) {
  std::set<std::uint16_t> out;
  for (const FilterDef& f : filters) {
    if (f.type != EVENT_FILTER_TYPE_SCHEMATIZED || f.data.size() < sizeof(EVENT_FILTER_HEADER))
      continue;
    const std::uint16_t id = static_cast<std::uint16_t>(f.data[0] | (f.data[1] << 8));
    if (id != id_filter) continue;
    for (std::size_t k = sizeof(EVENT_FILTER_HEADER); k + 1 < f.data.size(); k += 2) {
      out.insert(static_cast<std::uint16_t>(f.data[k] | (f.data[k + 1] << 8)));
    }
  }
  return out;
}

namespace {

// Replays a case's steps as the subject provider `provider` sees them, collecting per consumer
// the segments it must receive.
class Replay {
 public:
  Replay(const std::string& provider, const Description& description)
      : provider_(provider), description_(description) {}

  void step(const Step& step, const std::vector<oracle::ExpectedCallback>* callbacks) {
    track_platform(step);
    if (callbacks) told(step, *callbacks);
    if (const auto* j = step.body.get_if<InjectCallbackStep>(); j && j->provider == provider_) {
      inject(step, *j);
    } else if (const auto* w = step.body.get_if<SubjectWriteStep>();
               w && w->provider == provider_) {
      write(step, *w);
    }
  }

  std::map<std::string, std::vector<Segment>> take() { return std::move(out_); }

 private:
  // Sessions, enables of the subject provider and consumers, as the platform keeps them.
  void track_platform(const Step& step) {
    if (step.op == ops::kStart) {
      sessions_[step_session(step)].running = true;
    } else if (step.op == ops::kStop) {
      sessions_[step_session(step)] = SessionState{};
    } else if (const ConsumeStep* cs = step.body.get_if<ConsumeStep>()) {
      consumers_[cs->consumer] = cs->session;
    } else if (const ControlStep* call = step.body.get_if<ControlStep>()) {
      if (call->provider != provider_ || step.op == ops::kCaptureState) return;
      SessionState& s = sessions_[call->session];
      if (step.op == ops::kEnable && s.running) {
        s.enable = oracle::SessionEnable{call->level, call->match_any, call->match_all,
                                         call->enable_property};
        s.filters = call->filters;
      } else if (step.op == ops::kDisable) {
        s.enable.reset();
        s.filters.clear();
      }
    }
  }

  // What the platform told the subject's callback during this step.
  void told(const Step& step, const std::vector<oracle::ExpectedCallback>& callbacks) {
    for (const oracle::ExpectedCallback& cb : callbacks) {
      if (cb.provider != provider_) continue;
      called(step, cb.is_enabled, cb.values, current_skips(), "capture state (IsEnabled 2)");
    }
  }

  void inject(const Step& step, const InjectCallbackStep& j) {
    // An injected callback carries no FilterData: nothing is skipped by event id.
    if (!called(step, j.is_enabled, oracle::Aggregate{true, j.level, j.match_any, j.match_all}, {},
                "injected capture state (IsEnabled 2)")) {
      state_.unknown_code = std::to_string(j.is_enabled);
    }
  }

  // The subject's callback called with IsEnabled `code`; `values` and `skipped` are what an
  // enable leaves it with, `capture` names a capture state's cause. False for a code that ETW
  // does not define (the state stays as it was).
  bool called(const Step& step, std::uint32_t code, const oracle::Aggregate& values,
              std::set<std::uint16_t> skipped, const char* capture) {
    if (code == EVENT_CONTROL_CODE_ENABLE_PROVIDER) {
      state_.recorded = values;
      state_.recorded.enabled = true;
      state_.skipped = std::move(skipped);
      state_.unknown_code.clear();
    } else if (code == EVENT_CONTROL_CODE_DISABLE_PROVIDER) {
      state_.recorded.enabled = false;
      state_.unknown_code.clear();
    } else if (code == EVENT_CONTROL_CODE_CAPTURE_STATE) {
      deliver(step, capture, {rules::kProvCaptureState}, description_.state_events);
    } else {
      return false;
    }
    return true;
  }

  void write(const Step& step, const SubjectWriteStep& w) {
    if (w.state_events) {
      deliver(step, "write_state_events()", {rules::kProvCaptureState}, description_.state_events);
      return;
    }
    std::vector<EventDef> written;
    for (const EventDef& e : description_.test_events) {
      if (oracle::provider_event_enabled(state_.recorded, {e.level, e.keyword}) &&
          !state_.skipped.count(e.id)) {
        written.push_back(e);
      }
    }
    std::string cause;
    std::vector<std::string> rules = test_write_rules(cause);
    deliver(step, cause, rules, written);
  }

  // The cause of a write_test_events() segment and the rules it checks, most specific first.
  std::vector<std::string> test_write_rules(std::string& cause) const {
    const oracle::Aggregate& r = state_.recorded;
    cause = r.enabled ? fmt::format(
                            "write_test_events() with Level {} MatchAny {} "
                            "MatchAll {} recorded",
                            r.level, format_hex(r.match_any), format_hex(r.match_all))
                      : std::string("write_test_events() while disabled");
    if (!state_.unknown_code.empty()) {
      cause += ", after an injected IsEnabled " + state_.unknown_code;
      return {rules::kCbUnknownCode, rules::kProvRecord, rules::kProvEventEnabled};
    }
    if (!state_.skipped.empty()) {
      std::vector<std::string> ids;
      for (std::uint16_t id : state_.skipped) ids.push_back(std::to_string(id));
      cause += ", skipping IDs " + list(ids) + " given in FilterData";
      return {rules::kCbFilterCopy, rules::kProvEventEnabled};
    }
    if (!r.enabled) return {rules::kProvRecord};
    return {rules::kProvEventEnabled, rules::kProvRecord};
  }

  // Appends, for every attached consumer, the events of `written` its session takes.
  void deliver(const Step& step, const std::string& cause, std::vector<std::string> rules,
               const std::vector<EventDef>& written) {
    for (const auto& [consumer, session] : consumers_) {
      const SessionState& s = sessions_[session];
      Segment seg{step.pointer, cause, rules, {}};
      if (s.running && s.enable) {
        for (const EventDef& e : written) {
          if (oracle::session_accepts(*s.enable, {e.level, e.keyword})) seg.events.push_back(e);
        }
      }
      out_[consumer].push_back(std::move(seg));
    }
  }

  std::set<std::uint16_t> current_skips() const {
    std::set<std::uint16_t> skips;
    if (!description_.id_filter) return skips;
    for (const auto& [label, s] : sessions_) {
      if (!s.running || !s.enable) continue;
      for (std::uint16_t id : skipped_ids(s.filters, *description_.id_filter)) skips.insert(id);
    }
    return skips;
  }

  const std::string& provider_;
  const Description& description_;
  std::map<std::string, SessionState> sessions_;
  std::map<std::string, std::string> consumers_;  // consumer -> session, once attached
  std::map<std::string, std::vector<Segment>> out_;
  ProviderState state_;
};

}  // namespace

std::map<std::string, std::vector<Segment>> expect_subject_events(
    const Case& c, const std::vector<oracle::StepExpectation>& base, const std::string& provider,
    const Description& description) {
  Replay replay(provider, description);
  for (std::size_t i = 0; i < c.steps.size(); ++i) {
    replay.step(c.steps[i], i < base.size() ? &base[i].callbacks : nullptr);
  }
  return replay.take();
}

std::vector<Finding> judge_records(const std::vector<Segment>& segments,
                                   const std::vector<json>& records,
                                   const std::vector<std::string>& case_rules) {
  std::vector<std::string> got;
  for (std::size_t i = 0; i < records.size(); ++i) {
    try {
      got.push_back(describe_event(event_from_json(records[i], "record")));
    } catch (const std::exception& e) {
      got.push_back(std::string("unreadable record (") + e.what() + ")");
    }
  }
  std::size_t at = 0;
  const Segment* empty_before = nullptr;  // the last segment that expected nothing, since `at`
  for (const Segment& seg : segments) {
    std::vector<std::string> want;
    for (const EventDef& e : seg.events) want.push_back(describe_event(e));
    if (want.empty()) {
      empty_before = &seg;
      continue;
    }
    const std::size_t end = std::min(got.size(), at + want.size());
    const std::vector<std::string> seen(got.begin() + static_cast<std::ptrdiff_t>(at),
                                        got.begin() + static_cast<std::ptrdiff_t>(end));
    if (seen != want && empty_before != nullptr) {
      // A provider's events reach a consumer in the order written: events that came before
      // this step's expected ones, after a step that expected none, were written in that step.
      const auto found = std::search(got.begin() + static_cast<std::ptrdiff_t>(at), got.end(),
                                     want.begin(), want.end());
      if (found != got.end()) {
        const std::vector<std::string> extra(got.begin() + static_cast<std::ptrdiff_t>(at), found);
        return {failed_check(
            pick_rule(empty_before->rules, case_rules), "extra events",
            fmt::format("step {} ({}): {} events, none expected: {}", empty_before->step,
                        empty_before->cause, extra.size(), list(extra)),
            "none", list(extra))};
      }
    }
    if (seen != want) {
      // The difference for people; both whole lists as data.
      return {
          failed_check(pick_rule(seg.rules, case_rules), "events",
                       fmt::format("step {} ({}): {} events expected, {} received: {}", seg.step,
                                   seg.cause, want.size(), seen.size(), difference(want, seen)),
                       list(want), list(seen))};
    }
    at = end;
    empty_before = nullptr;
  }
  if (at < got.size()) {
    const std::vector<std::string> extra(got.begin() + static_cast<std::ptrdiff_t>(at), got.end());
    const Segment* last = segments.empty() ? nullptr : &segments.back();
    return {failed_check(
        last ? pick_rule(last->rules, case_rules) : pick_rule({rules::kProvRecord}, case_rules),
        "extra events",
        fmt::format("{} events more than expected{}: {}", extra.size(),
                    last ? " after step " + last->step + " (" + last->cause + ")" : "",
                    list(extra)),
        "none", list(extra))};
  }
  return {};
}

}  // namespace etwh::subject
