#include "harness/conformance/oracle.h"

#include "harness/conformance/families/core_families.h"
#include "harness/conformance/oracle_model.h"
#include "harness/model/rules.h"
#include "harness/conformance/families/sessions/filter_def.h"
#include "win32_text.h"

#include <evntprov.h>
#include <evntrace.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

namespace etwh::oracle {

Aggregate aggregate(std::span<const SessionEnable> sessions) {
  Aggregate result;
  if (sessions.empty()) return result;
  result.enabled = true;
  result.match_all = ~std::uint64_t{0};
  for (const SessionEnable& s : sessions) {
    result.level = std::max(result.level, s.level);
    result.match_any |= s.match_any;
    result.match_all &= s.match_all;
  }
  return result;
}

bool session_accepts(const SessionEnable& session, const EventLevelKeyword& event) {
  if (event.level != 0 && event.level > session.level) return false;
  if (event.keyword == 0) {
    return (session.enable_property & kEnablePropertyIgnoreKeyword0) == 0;
  }
  // FLT-ANY-ZERO: no MatchAny means every event, and MatchAll is then not consulted.
  if (session.match_any == 0) return true;
  return (event.keyword & session.match_any) != 0 &&
         (event.keyword & session.match_all) == session.match_all;
}

bool any_session_accepts(std::span<const SessionEnable> sessions, const EventLevelKeyword& event) {
  return std::any_of(sessions.begin(), sessions.end(),
                     [&](const SessionEnable& s) { return session_accepts(s, event); });
}

bool provider_event_enabled(const Aggregate& state, const EventLevelKeyword& event) {
  return state.enabled && event.level <= state.level &&
         (event.keyword == 0 || ((event.keyword & state.match_any) != 0 &&
                                 (event.keyword & state.match_all) == state.match_all));
}

std::optional<std::string> traits_blob_error(std::span<const std::uint8_t> blob) {
  auto u16 = [&](std::size_t at) {
    return static_cast<std::size_t>(blob[at] | (blob[at + 1] << 8));
  };
  if (blob.size() < 3) return "shorter than a size and an empty name (3 bytes)";
  const std::size_t total = u16(0);
  if (total != blob.size()) {
    return "TraitsSize " + std::to_string(total) + " differs from the blob's " +
           std::to_string(blob.size()) + " bytes";
  }
  std::size_t at = 2;
  while (at < blob.size() && blob[at] != 0) ++at;
  if (at == blob.size()) return "provider name is not NUL-terminated";
  ++at;
  while (at < blob.size()) {
    if (blob.size() - at < 3) return "trait at offset " + std::to_string(at) + " is truncated";
    const std::size_t size = u16(at);
    if (size < 3) return "trait at offset " + std::to_string(at) + " has size below 3";
    if (size > blob.size() - at) {
      return "trait at offset " + std::to_string(at) + " overruns the blob";
    }
    at += size;
  }
  return std::nullopt;
}

namespace detail {

bool same_enable(const Enable& a, const Enable& b) {
  return a.settings.level == b.settings.level && a.settings.match_any == b.settings.match_any &&
         a.settings.match_all == b.settings.match_all &&
         a.settings.enable_property == b.settings.enable_property && a.has_filter == b.has_filter;
}

bool provider_bound(const FilterDef& f) {
  return (f.type & 0x80000000u) == 0 || f.type == EVENT_FILTER_TYPE_SCHEMATIZED;
}

std::optional<std::pair<bool, std::set<std::uint16_t>>> event_id_filter(
    const std::vector<FilterDef>& filters) {
  for (const FilterDef& f : filters) {
    if (f.type != EVENT_FILTER_TYPE_EVENT_ID || f.data.size() < 4) continue;
    const std::size_t count = f.data[2] | (f.data[3] << 8);
    std::set<std::uint16_t> ids;
    for (std::size_t i = 0; i < count && 4 + 2 * i + 1 < f.data.size(); ++i) {
      ids.insert(static_cast<std::uint16_t>(f.data[4 + 2 * i] | (f.data[5 + 2 * i] << 8)));
    }
    return std::make_pair(f.data[0] != 0, ids);
  }
  return std::nullopt;
}

StepExpectation Model::apply(const Step& step) {
  StepExpectation e;
  const CoreOp* op = find_core_op(step.op);
  if (op == nullptr) throw std::logic_error("no registered op \"" + std::string(step.op) + "\"");
  if (op->expect != nullptr) op->expect(*this, step, e);
  if (step.expect_status) {
    e.status_nonzero = step.expect_status->nonzero;
    e.status =
        step.expect_status->nonzero ? std::nullopt : std::optional(step.expect_status->value);
  }
  return e;
}

bool Model::case_has(const std::string& rule) const {
  return std::find(case_.rules.begin(), case_.rules.end(), rule) != case_.rules.end();
}

}  // namespace detail

std::vector<StepExpectation> expect_case(const Case& c) {
  detail::Model model(c);
  std::vector<StepExpectation> out;
  out.reserve(c.steps.size());
  for (const Step& step : c.steps) out.push_back(model.apply(step));
  classic::expect(c, out);
  return out;
}

std::set<std::string> rules_judged(const StepExpectation& e) {
  std::set<std::string> out;
  const auto add = [&](const std::string& rule) {
    if (!rule.empty()) out.insert(rule);
  };
  add(e.status_rule);
  add(e.provider_enabled_rule);
  add(e.event_enabled_rule);
  for (const std::string& rule : e.event_enabled_rules) add(rule);
  for (const ExpectedCallback& cb : e.callbacks) {
    add(cb.is_enabled_rule);
    add(cb.source_rule);
    add(cb.filter_rule);
    add(rules::kCbContext);
    if (cb.judge_values) {
      for (const char* rule : {rules::kCbLevelMax, rules::kCbAnyOr, rules::kCbAllAnd}) add(rule);
    }
  }
  if (e.timing != TimingExpect::kNone) add(rules::kCbTimeout);
  for (const classic::ExpectedControl& cb : e.classic.callbacks) {
    add(rules::kSesClassicOne);
    if (cb.code == WMI_ENABLE_EVENTS && !cb.takeover) add(rules::kHdrClassicLevel);
  }
  if (e.file) {
    for (const std::string& rule : e.file->rules) add(rule);
  }
  for (const ConsumerExpectation& c : e.consumers) {
    if (c.overwrite_logfile) add(rules::kConLogfileCopy);
    for (const ExpectedEvent& ev : c.events) {
      add(ev.rule);
      add(ev.flags_rule);
    }
    for (const auto& [seq, why] : c.excluded) add(why.rule);
  }
  return out;
}

}  // namespace etwh::oracle
