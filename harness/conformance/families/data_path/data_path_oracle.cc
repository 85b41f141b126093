// The oracle's data path: which consumer gets which event, and why one must not (filters per
// session, FLT-REPLACE, groups, buffering before the first consumer, a second consumer),
// what EventEnabled must say, and what collect judges.
#include "harness/conformance/oracle_model.h"
#include "harness/model/rules.h"
#include "harness/conformance/families/data_path/data_path_ops.h"
#include "harness/conformance/families/sessions/sessions_ops.h"
#include "win32_text.h"

#include <evntprov.h>
#include <evntrace.h>

#include <algorithm>

namespace etwh::oracle::detail {

// An event a session takes has passed every filter test at once (level, keyword, keyword 0,
// MatchAny 0): its delivery checks each of those rules, and is blamed on the one the case is
// about. (A dropped event has one deciding rule: filter_rule's.)
std::string Model::delivery_rule(const std::string& deciding) const {
  static constexpr const char* kFilterRules[] = {rules::kFltLevel, rules::kFltKeyword,
                                                 rules::kFltKeyword0Bypass,
                                                 rules::kFltIgnoreKeyword0, rules::kFltAnyZero};
  const auto is_filter_rule = [](const std::string& r) {
    return std::find(std::begin(kFilterRules), std::end(kFilterRules), r) != std::end(kFilterRules);
  };
  if (!is_filter_rule(deciding) || case_has(deciding)) return deciding;
  for (const char* r : kFilterRules) {
    if (case_has(r)) return r;
  }
  return deciding;
}

// An entry some session takes is enabled by that session's deciding filter rule: a "no" for it
// is that rule's failure (an event at a session's level, a keyword-0 event). One no session
// takes but the sessions' aggregate would: a "yes" is filtering with the aggregate, not per
// session. Else a "yes" is RT-WRITE-DISABLED's.
std::string Model::enabled_rule(const std::vector<SessionEnable>& all,
                                const EventLevelKeyword& lk) const {
  for (const SessionEnable& s : all) {
    if (session_accepts(s, lk)) return delivery_rule(filter_rule(s, lk));
  }
  if (case_has(rules::kFltPerSession) && provider_event_enabled(aggregate(all), lk))
    return rules::kFltPerSession;
  return rules::kRtWriteDisabled;
}

// Which filter rule decides whether `s` takes `ev`.
std::string Model::filter_rule(const SessionEnable& s, const EventLevelKeyword& ev) {
  if (ev.level != 0 && ev.level > s.level) return rules::kFltLevel;
  if (ev.keyword == 0) {
    return (s.enable_property & kEnablePropertyIgnoreKeyword0) ? rules::kFltIgnoreKeyword0
                                                               : rules::kFltKeyword0Bypass;
  }
  if (s.match_any == 0) return rules::kFltAnyZero;
  if (!session_accepts(s, ev)) return rules::kFltKeyword;
  // Taken: level 0 passed the level test by its bypass, an event at the session's own level on
  // the test's boundary (level <= the session's): either checks FLT-LEVEL more sharply than the
  // keyword that matched.
  return ev.level == 0 || ev.level == s.level ? rules::kFltLevel : rules::kFltKeyword;
}

void Model::consume(const Step& step, StepExpectation& e) {
  const ConsumeStep& cs = step_body<ConsumeStep>(step);
  // Before the session's start: OpenTrace alone, which must succeed; the driver's start step
  // then has ProcessTrace attach, as the session's first consumer (no event came before).
  const bool early = !started_.count(cs.session) && !stopped_.count(cs.session);
  if (!started_.count(cs.session) && !early) return;
  e.status = ERROR_SUCCESS;
  e.status_rule = early ? rules::kConOpenBeforeStart : rules::kConRecordMode;
  SessionData& sd = data_[cs.session];
  ConsumerExpectation c;
  static_cast<ConsumerDef&>(c) = cs;
  if (early && case_has(rules::kConOpenBeforeStart)) c.rule = rules::kConOpenBeforeStart;
  if (cs.overwrite_logfile && case_has(rules::kConLogfileCopy)) c.rule = rules::kConLogfileCopy;
  if (!sd.consumer_attached) {
    // The first consumer gets what the session kept while nobody read it.
    c.events = sd.buffered;
    c.excluded = sd.buffered_excluded;
    for (ExpectedEvent& ev : c.events) {
      // A buffered event's delivery checks its filter rule and CON-RT-BUFFERED at once: it is
      // blamed on the one the case is about (both verdicts would be true).
      if (case_has(rules::kConRtBuffered)) ev.rule = rules::kConRtBuffered;
      c.lossy = c.lossy || ev.lossy;
    }
    sd.consumer_attached = true;
  } else {
    for (std::uint64_t seq = 1; seq < next_seq_; ++seq) {
      c.excluded[seq] = {rules::kConRtSecond,
                         "written before this consumer attached (a later consumer gets only "
                         "new events)"};
    }
  }
  sd.consumers.push_back(cs.consumer);
  consumers_[cs.consumer] = std::move(c);
}

// One written event `seq` at one started session: taken, or excluded with the rule and the
// reason, for the consumers attached (before the first one: for the first to come). True when
// the session takes it.
bool Model::deliver(const Step& step, const EventDef& def, std::uint64_t seq,
                    const std::string& session, const SessionMap& m) {
  const WriteStep& w = step_body<WriteStep>(step);
  const std::string guid_key = key(w.provider);
  const EventLevelKeyword lk{def.level, def.keyword};
  SessionData& sd = data_[session];
  ExpectedEvent ev{seq,
                   w.provider,
                   def,
                   traits_set_.count(w.provider) > 0,
                   traits_set_.count(w.provider) > 0 || use_descriptor_type_.count(w.provider) > 0,
                   w.lossy,
                   "",
                   0,
                   ""};
  Exclusion why;
  bool taken = false;
  auto it = m.find(session);
  if (it == m.end()) {
    why = {rules::kFltPerSession, "session " + session + " does not enable the provider"};
    if (disallowed_group(session, w.provider)) {
      why = {rules::kGrpDisallow,
             "session " + session + " enables the provider's group but disallows it"};
    }
  } else {
    const std::string rule = replaced_.count(session + "\n" + guid_key)
                                 ? rules::kFltReplace
                                 : filter_rule(it->second.settings, lk);
    taken = session_accepts(it->second.settings, lk);
    ev.rule = taken ? delivery_rule(rule) : rule;
    if (it->second.via_group) {
      ev.rule = it->second.ids_ignored ? rules::kGrpNoIdFilters : rules::kGrpEnable;
    }
    if (taken && it->second.event_ids &&
        it->second.event_ids->second.count(def.id) != it->second.event_ids->first) {
      taken = false;
      why = {rules::kFltPerSession, "session " + session +
                                        "'s EVENT_FILTER_TYPE_EVENT_ID filter (FilterIn " +
                                        (it->second.event_ids->first ? "TRUE" : "FALSE") +
                                        ") drops event ID " + std::to_string(def.id)};
      if (!sd.consumer_attached) {
        sd.buffered_excluded[seq] = why;
      } else {
        for (const std::string& label : sd.consumers) consumers_.at(label).excluded[seq] = why;
      }
      return false;
    }
    why = {rule, "session " + session + " filters it out (level " +
                     std::to_string(it->second.settings.level) + ", MatchAny " +
                     format_hex(it->second.settings.match_any) + ", MatchAll " +
                     format_hex(it->second.settings.match_all) + ")"};
    // Filtered out here while another session takes it: what its arrival here would break is
    // that each session filters on its own (a runtime filtering with the provider's aggregate).
    if (!taken && case_has(rules::kFltPerSession) && any_session_accepts(settings_of(m), lk)) {
      why.rule = rules::kFltPerSession;
      why.reason += ", though another session takes it";
    }
  }
  // An event carrying traits checks TR-IN-EVENTS as well as its filter rule: blamed on
  // TR-IN-EVENTS when the case is about it.
  if (ev.traits && case_has(rules::kTrInEvents)) ev.rule = rules::kTrInEvents;
  if (!sd.consumer_attached) {
    if (taken)
      sd.buffered.push_back(ev);
    else
      sd.buffered_excluded[seq] = why;
    return taken;
  }
  for (const std::string& label : sd.consumers) {
    ConsumerExpectation& c = consumers_.at(label);
    if (taken) {
      c.events.push_back(ev);
      c.lossy = c.lossy || ev.lossy;
    } else {
      c.excluded[seq] = why;
    }
  }
  return taken;
}

void Model::write(const Step& step, StepExpectation& e) {
  const WriteStep& w = step_body<WriteStep>(step);
  if (!registered_.count(w.provider)) return;
  if (w.use_descriptor_type) {
    if (*w.use_descriptor_type)
      use_descriptor_type_.insert(w.provider);
    else
      use_descriptor_type_.erase(w.provider);
  }
  const SessionMap m = effective(w.provider);
  const std::vector<SessionEnable> all = settings_of(m);
  const bool any_zero =
      std::any_of(all.begin(), all.end(), [](const SessionEnable& x) { return x.match_any == 0; });
  bool any_taken = false;
  for (const EventDef& def : w.events) {
    const EventLevelKeyword lk{def.level, def.keyword};
    e.first_seq.push_back(next_seq_);
    // MatchAny 0 on the enabling side is where runtimes differ in EventEnabled: not judged.
    if (any_zero) {
      e.event_enabled.push_back(std::nullopt);
    } else {
      e.event_enabled.push_back(any_session_accepts(all, lk));
    }
    e.event_enabled_rules.push_back(enabled_rule(all, lk));
    for (std::uint32_t k = 0; k < def.count; ++k) {
      const std::uint64_t seq = next_seq_++;
      for (const std::string& session : started_) {
        if (deliver(step, def, seq, session, m)) any_taken = true;
      }
    }
  }
  e.event_enabled_rule = rules::kRtWriteDisabled;
  if (!w.lossy) {
    e.status = ERROR_SUCCESS;
    // RT-WRITE-DISABLED: a write no session wants still returns ERROR_SUCCESS.
    if (!any_taken) e.status_rule = rules::kRtWriteDisabled;
  }
}

void Model::collect(const Step& step, StepExpectation& e) {
  for (const auto& [session, sd] : data_) {
    if (sd.consumers.empty() || !started_.count(session)) continue;
    e.collect_sessions.push_back(session);
    for (const std::string& label : sd.consumers) {
      ConsumerExpectation c = consumers_.at(label);
      for (ExpectedEvent& ev : c.events) {
        if (!c.rule.empty()) ev.rule = c.rule;
      }
      e.consumers.push_back(std::move(c));
    }
  }
  for (const std::string& session : e.collect_sessions) {
    Step stop_step = step;
    stop_step.body = SessionStep{session};
    stop(stop_step, e);
    data_.erase(session);
  }
  e.status.reset();
}

// The call fails as its page says: OpenTrace of a NULL Logfile with ERROR_INVALID_PARAMETER
// (LASTERR-OPENTRACE); the classic queries of a handle of no session with a last error other
// than ERROR_SUCCESS, the pages naming no code (LASTERR-CLASSIC).
void Model::last_error(const Step& step, StepExpectation& e) {
  const LastErrorStep& s = step_body<LastErrorStep>(step);
  if (s.api == "OpenTrace") {
    e.status = ERROR_INVALID_PARAMETER;
    e.status_rule = rules::kLasterrOpentrace;
  } else {
    e.status_nonzero = true;
    e.status_rule = rules::kLasterrClassic;
  }
}

}  // namespace etwh::oracle::detail
