#include "harness/observe/judge.h"

#include "harness/conformance/lint.h"
#include "harness/model/rules.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <memory>
#include <set>
#include <tuple>

namespace etwh::observe {
namespace {

using nlohmann::json;

// What the provider's last completed enable callback told it.
struct Told {
  bool enabled = false;
  bool disabled_once = false;  // a DISABLE came (so a write now ignores it)
  std::uint8_t level = 0;
  std::uint64_t any = 0, all = 0;
};

// Why a write nobody wanted is the provider's fault (empty: it is not).
enum class Blame { kNone, kAfterDisable, kNeverEnabled, kAboveLevel, kKeyword };

Blame blame(const Told& t, std::uint8_t level, std::uint64_t keyword) {
  if (!t.enabled) return t.disabled_once ? Blame::kAfterDisable : Blame::kNeverEnabled;
  if (level != 0 && level > t.level) return Blame::kAboveLevel;
  if (keyword != 0 && t.any != 0 && ((keyword & t.any) == 0 || (keyword & t.all) != t.all)) {
    return Blame::kKeyword;
  }
  return Blame::kNone;
}

struct Blamed {
  std::size_t count = 0;   // writes blamed, over every callback epoch that exceeded the tolerance
  std::string first;       // the first one, described
  std::size_t record = 0;  // its record index
};

using Kind = std::tuple<unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                        std::uint64_t>;  // id, version, channel, level, opcode, task, keyword

struct KindCount {
  std::size_t writes = 0, wanted = 0;
};

class ProviderJudge {
 public:
  ProviderJudge(const JudgeInput& in, std::uint64_t handle, std::string guid)
      : in_(in), handle_(handle), guid_(std::move(guid)) {}

  void record(const json& r, std::size_t index);
  std::vector<CaseResult> result(double duration_s);

 private:
  void write(const json& r, std::size_t index);
  void callback(const json& r, std::size_t index);
  void close_epoch();
  std::set<std::string> lint_kinds();
  Finding kind_seen(const std::string& name, const KindCount& count, const Kind& kind) const;
  StepLocation where(std::size_t index) const;
  void fail(const char* rule, std::string check, std::string text, std::size_t index,
            std::string expected = {}, std::string observed = {});

  const JudgeInput& in_;
  std::uint64_t handle_;
  std::string guid_;
  Told told_;
  std::map<Blame, Blamed> epoch_, blamed_;
  std::map<Kind, KindCount> kinds_;
  std::size_t callbacks_ = 0, queries_ = 0, traits_ok_ = 0, traits_tried_ = 0, writes_ = 0;
  std::size_t enabled_writes_ = 0;  // writes made while its last callback said enabled
  std::optional<std::size_t> first_enable_, first_disable_, unregistered_;  // record indexes
  std::vector<Finding> findings_;
  std::set<std::string> failed_;  // the rules a failing finding blames

  // Not judged: the reasons as data (judge.h).
  struct Unjudged {
    const char* rule;
    const char* why;  // kStepNotReached, ...
    std::string text;
    std::optional<std::size_t> step;
  };
  std::vector<Unjudged> unjudged() const;
  std::optional<Unjudged> unjudged_after_disable() const;
  std::optional<Unjudged> unjudged_callbacks(const char* rule) const;
  bool reached(std::size_t step) const;
  bool marked_after(std::size_t record) const;
  CaseResult not_judged_case(const Unjudged& u) const;
};

StepLocation ProviderJudge::where(std::size_t index) const {
  StepLocation at;
  at.case_id = "observe/" + guid_;
  at.file = in_.schedule_file;
  for (const StepMark& m : *in_.marks) {
    // After the end mark the last step's location stays (the schedule ran out).
    if (m.handle != handle_ || m.record > index || m.step >= in_.schedule->steps.size()) continue;
    at.index = m.step;
    at.op = in_.schedule->steps[m.step].name;
    at.pointer = "/steps/" + std::to_string(m.step);
  }
  return at;
}

void ProviderJudge::fail(const char* rule, std::string check, std::string text, std::size_t index,
                         std::string expected, std::string observed) {
  Finding f = failed_check(rule, std::move(check), std::move(text), std::move(expected),
                           std::move(observed));
  f.step = where(index);
  failed_.insert(f.rule);
  findings_.push_back(std::move(f));
}

std::string describe_write(const json& r) {
  return fmt::format("{} Id {} level {} keyword 0x{:x} channel {}", r.value("api", "?"),
                     r.value("id", 0u), r.value("level", 0u), r.value("keyword", std::uint64_t{0}),
                     r.value("channel", 0u));
}

void ProviderJudge::write(const json& r, std::size_t index) {
  ++writes_;
  enabled_writes_ += told_.enabled;
  const auto level = static_cast<std::uint8_t>(r.value("level", 0u));
  const std::uint64_t keyword = r.value("keyword", std::uint64_t{0});
  const bool wanted = r.value("wanted", false);
  KindCount& k = kinds_[Kind{r.value("id", 0u), r.value("version", 0u), r.value("channel", 0u),
                             level, r.value("opcode", 0u), r.value("task", 0u), keyword}];
  ++k.writes;
  k.wanted += wanted;
  if (wanted) return;
  const Blame b = blame(told_, level, keyword);
  if (b == Blame::kNone) return;  // the sessions changed before the provider was told: no fault
  Blamed& e = epoch_[b];
  if (e.count++ == 0) {
    e.first = describe_write(r);
    e.record = index;
  }
}

// The writes of one callback epoch count when they exceed the race tolerance.
void ProviderJudge::close_epoch() {
  for (auto& [b, e] : epoch_) {
    if (e.count <= kRaceTolerance) continue;
    Blamed& total = blamed_[b];
    if (total.count == 0) {
      total.first = e.first;
      total.record = e.record;
    }
    total.count += e.count;
  }
  epoch_.clear();
}

void ProviderJudge::callback(const json& r, std::size_t index) {
  ++callbacks_;
  const auto is_enabled = r.value("is_enabled", 0u);
  const double ms = static_cast<double>(r.value("duration_ns", std::int64_t{0})) / 1e6;
  if (ms > in_.schedule->callback_limit_ms) {
    fail(rules::kCbFast, "duration_ms",
         fmt::format("the enable callback (IsEnabled {}) ran {:.1f} ms, over the {} ms limit",
                     is_enabled, ms, in_.schedule->callback_limit_ms),
         index, fmt::format("<= {}", in_.schedule->callback_limit_ms), fmt::format("{:.1f}", ms));
  }
  if (is_enabled > 1) return;  // CAPTURE_STATE and unknown codes change no state
  close_epoch();
  if (is_enabled == 1 && !first_enable_) first_enable_ = index;
  if (is_enabled == 0 && !first_disable_) first_disable_ = index;
  told_.enabled = is_enabled == 1;
  told_.disabled_once |= is_enabled == 0;
  told_.level = static_cast<std::uint8_t>(r.value("level", 0u));
  told_.any = r.value("any", std::uint64_t{0});
  told_.all = r.value("all", std::uint64_t{0});
}

void ProviderJudge::record(const json& r, std::size_t index) {
  const std::string kind = r.value("kind", "");
  if (kind == "write") {
    write(r, index);
  } else if (kind == "callback") {
    callback(r, index);
  } else if (kind == "control_in_callback") {
    const std::string api = r.value("api", "?");
    fail(rules::kCbFast, "control_in_callback",
         api +
             " was called inside the enable callback: a session-control call from a callback "
             "can deadlock (seed 000)",
         index, "no session-control call", api);
  } else if (kind == "enabled_query") {
    ++queries_;
  } else if (kind == "unregister") {
    unregistered_ = index;
  } else if (kind == "traits") {
    ++traits_tried_;
    const auto status = r.value("status", 0u);
    const auto size = r.value("size", 0u);
    if (traits_ok_ > 0) {
      fail(rules::kTrSetOnce, "traits_attempts",
           fmt::format("EventSetInformation(EventProviderSetTraits) called again after traits "
                       "were set (this attempt returned {})",
                       status),
           index, "1", std::to_string(traits_ok_ + 1));
    }
    traits_ok_ += status == 0;
    if (size >= 256) {
      Finding f = failed_check(rules::kTrSize256, "traits_size",
                               fmt::format("a traits blob of {} bytes (below 256 asked)", size),
                               "< 256", std::to_string(size));
      f.severity = lint::severity_of(*in_.catalog, rules::kTrSize256);
      f.step = where(index);
      if (f.severity == Severity::kFailure) failed_.insert(f.rule);
      findings_.push_back(std::move(f));
    }
  }
}

// Rules no observation can judge, and why.
const std::vector<std::pair<const char*, const char*>>& never_observable() {
  static const std::vector<std::pair<const char*, const char*>> list = {
      {rules::kProvCaptureState, "which events are state events is the provider's own knowledge"},
      {rules::kCbFilterCopy,
       "the schedule's only FilterData is an event ID filter, the platform's: no callback gets "
       "FilterData to keep"},
      {rules::kTrFormat, "the observation records the traits blob's size, not its bytes"},
      {rules::kDescIdVersion, "the observation records descriptors, not payload layouts"},
      {rules::kTlSchemaItem, "the observation records descriptors, not the metadata items"},
  };
  return list;
}

// Whether the schedule reached `step` while the provider was registered.
bool ProviderJudge::reached(std::size_t step) const {
  for (const StepMark& m : *in_.marks) {
    if (m.handle == handle_ && m.step == step && (!unregistered_ || m.record <= *unregistered_))
      return true;
  }
  return false;
}

// Whether a later step began (or the schedule ended) after `record` while it was registered.
bool ProviderJudge::marked_after(std::size_t record) const {
  for (const StepMark& m : *in_.marks) {
    if (m.handle == handle_ && m.record > record && (!unregistered_ || m.record <= *unregistered_))
      return true;
  }
  return false;
}

std::string step_name(const Schedule& s, std::size_t step) {
  return fmt::format("step {} \"{}\"", step, s.steps[step].name);
}

// A rule judged on what the callbacks told the provider, when none told it "enabled".
std::optional<ProviderJudge::Unjudged> ProviderJudge::unjudged_callbacks(const char* rule) const {
  if (!reached(0)) {
    return Unjudged{rule, kStepNotReached,
                    "the provider unregistered (or the program ended) before the schedule's "
                    "first step",
                    0};
  }
  return Unjudged{rule, kNoCallback, "no enable callback reached the provider", std::nullopt};
}

// PROV-RECORD's "on DISABLE it writes nothing" needs a DISABLE callback, a whole step of the
// provider still registered after it, and writes while it was enabled (else silence says nothing).
std::optional<ProviderJudge::Unjudged> ProviderJudge::unjudged_after_disable() const {
  const char* rule = rules::kProvRecord;
  if (failed_.count(rule)) return std::nullopt;
  if (!first_disable_) {
    const std::optional<std::size_t> d = first_step_disabling_all(*in_.schedule);
    if (!d) return Unjudged{rule, kNotObservable, "the schedule never disables every session", {}};
    if (!reached(*d)) {
      return Unjudged{rule, kStepNotReached,
                      fmt::format("the provider unregistered (or the program ended) before {}, "
                                  "which disables every session",
                                  step_name(*in_.schedule, *d)),
                      *d};
    }
    return Unjudged{rule, kNoCallback,
                    fmt::format("no DISABLE callback reached the provider after {}",
                                step_name(*in_.schedule, *d)),
                    *d};
  }
  if (!marked_after(*first_disable_)) {
    return Unjudged{rule,
                    kEndedTooSoon,
                    "the provider unregistered (or the program ended) within the step of its "
                    "DISABLE callback: what it wrote after DISABLE was not watched for a step",
                    {}};
  }
  if (enabled_writes_ == 0) {
    return Unjudged{rule,
                    kNoWrite,
                    "the program wrote no event while a session enabled the provider, so its "
                    "silence after DISABLE shows nothing",
                    {}};
  }
  return std::nullopt;
}

std::vector<ProviderJudge::Unjudged> ProviderJudge::unjudged() const {
  std::vector<Unjudged> out;
  if (auto u = unjudged_after_disable()) out.push_back(*u);
  if (!failed_.count(rules::kProvEventEnabled)) {
    if (!first_enable_) {
      out.push_back(*unjudged_callbacks(rules::kProvEventEnabled));
    } else if (enabled_writes_ == 0) {
      out.push_back({rules::kProvEventEnabled,
                     kNoWrite,
                     "the program wrote no event while a session enabled the provider",
                     {}});
    }
  }
  if (callbacks_ == 0 && !failed_.count(rules::kCbFast))
    out.push_back(*unjudged_callbacks(rules::kCbFast));
  if (traits_ok_ == 0 && !failed_.count(rules::kTrSetOnce))
    out.push_back({rules::kTrSetOnce, kNoTraits, "the program set no traits", {}});
  if (traits_tried_ == 0)
    out.push_back({rules::kTrSize256, kNoTraits, "the program set no traits", {}});
  if (kinds_.empty())
    out.push_back({rules::kDescChannel, kNoWrite, "the program wrote no event", {}});
  for (const auto& [rule, reason] : never_observable()) {
    out.push_back({rule, kNotObservable, reason, {}});
  }
  return out;
}

// NOT JUDGED: a case of its own, UNSUPPORTED and as expected (as `etwh run` shows a case that
// cannot run here), the reason a `not_judged` finding.
CaseResult ProviderJudge::not_judged_case(const Unjudged& u) const {
  CaseResult c;
  c.id = fmt::format("observe/{}/{}", guid_, u.rule);
  c.rules = {u.rule};
  c.status = Status::kUnsupported;
  c.as_expected = true;
  c.file = in_.schedule_file;
  Finding f = observed_note("not judged: " + u.text, u.rule);
  f.check = kNotJudgedCheck;
  f.observed = u.why;
  if (u.step) {
    f.step.case_id = "observe/" + guid_;
    f.step.file = in_.schedule_file;
    f.step.index = *u.step;
    f.step.op = in_.schedule->steps[*u.step].name;
    f.step.pointer = "/steps/" + std::to_string(*u.step);
  }
  c.message = f.text;
  c.findings.push_back(std::move(f));
  return c;
}

std::string event_kind_key_of(const std::string& guid, const Kind& k) {
  const auto& [id, version, channel, level, opcode, task, keyword] = k;
  return event_kind_key(guid, id, version, channel, level, opcode, task, keyword);
}

// "event kind seen": the descriptor, the counts and, where a consumer got one and TDH decoded
// it, the event's name and fields (Finding::event).
Finding ProviderJudge::kind_seen(const std::string& name, const KindCount& count,
                                 const Kind& kind) const {
  Finding f = observed_note(
      fmt::format("event kind seen: {} ({} writes, {} wanted)", name, count.writes, count.wanted));
  const json* d = nullptr;
  if (in_.decoded != nullptr) {
    auto it = in_.decoded->find(event_kind_key_of(guid_, kind));
    if (it != in_.decoded->end()) d = &it->second;
  }
  if (d == nullptr) {
    f.text += ", not decoded: no session received one";
  } else if (d->contains("name")) {
    DecodedEvent e;
    e.name = d->value("name", "");
    for (const json& field : d->value("fields", json::array())) {
      e.fields.push_back({field.value("name", ""), field.value("value", "")});
    }
    f.event = std::move(e);
  } else {
    f.text +=
        fmt::format(", not decoded: TdhGetEventInformation returned {}", d->value("status", 0u));
  }
  return f;
}

// Lints each event kind seen (lint.h) and lists it; returns the lint rules it judged.
std::set<std::string> ProviderJudge::lint_kinds() {
  std::set<std::string> lint_rules;
  for (const auto& [kind, count] : kinds_) {
    const auto& [id, version, channel, level, opcode, task, keyword] = kind;
    const std::string name =
        fmt::format("Id {} v{} channel {} level {} opcode {} task {} keyword 0x{:x}", id, version,
                    channel, level, opcode, task, keyword);
    findings_.push_back(kind_seen(name, count, kind));
    lint::Descriptor d;
    d.id = static_cast<std::uint16_t>(id);
    d.version = static_cast<std::uint8_t>(version);
    d.channel = static_cast<std::uint8_t>(channel);
    d.level = static_cast<std::uint8_t>(level);
    d.opcode = static_cast<std::uint8_t>(opcode);
    d.keyword = keyword;
    for (const lint::Finding& l : lint::lint_descriptor(d, "observe/" + guid_, *in_.catalog)) {
      lint_rules.insert(l.rule);
      Finding f;
      f.rule = l.rule;
      f.check = kCheckLint;
      f.text = lint::describe(l);
      f.severity = lint::severity_of(*in_.catalog, l.rule);
      if (f.severity == Severity::kFailure) failed_.insert(f.rule);
      findings_.push_back(std::move(f));
    }
  }
  return lint_rules;
}

// The provider's case (the rules it judged), then one NOT JUDGED case per rule it could not.
std::vector<CaseResult> ProviderJudge::result(double duration_s) {
  close_epoch();
  static const std::map<Blame, std::pair<const char*, const char*>> why = {
      {Blame::kAfterDisable, {rules::kProvRecord, "writes after its DISABLE callback"}},
      {Blame::kNeverEnabled, {rules::kProvEventEnabled, "writes while no session enabled it"}},
      {Blame::kAboveLevel, {rules::kProvEventEnabled, "writes events above the enabled level"}},
      {Blame::kKeyword, {rules::kProvEventEnabled, "writes events the keywords exclude"}},
  };
  for (const auto& [b, total] : blamed_) {
    const auto& [rule, what] = why.at(b);
    fail(rule, "unwanted_writes",
         fmt::format("{}: {} write(s) no session wanted, first {}", what, total.count, total.first),
         total.record, "0", std::to_string(total.count));
  }
  const std::set<std::string> lint_rules = lint_kinds();
  const std::vector<Unjudged> unjudged_rules = unjudged();
  CaseResult c;
  c.id = "observe/" + guid_;
  std::vector<std::string> judged = {rules::kProvRecord, rules::kProvEventEnabled,
                                     rules::kCbFast,     rules::kTrSetOnce,
                                     rules::kTrSize256,  rules::kDescChannel};
  judged.insert(judged.end(), lint_rules.begin(), lint_rules.end());
  for (const std::string& rule : judged) {
    const bool skipped = std::any_of(unjudged_rules.begin(), unjudged_rules.end(),
                                     [&](const Unjudged& u) { return rule == u.rule; });
    if (!skipped && std::find(c.rules.begin(), c.rules.end(), rule) == c.rules.end())
      c.rules.push_back(rule);
  }
  findings_.push_back(observed_note(
      fmt::format("{} writes ({} while enabled), {} enable callbacks, {} EventEnabled/"
                  "EventProviderEnabled calls, {} traits set",
                  writes_, enabled_writes_, callbacks_, queries_, traits_ok_)));
  c.findings = std::move(findings_);
  c.status = Status::kPass;
  for (const Finding& f : c.findings) {
    if (f.severity == Severity::kFailure) c.status = Status::kFail;
  }
  c.as_expected = c.status == Status::kPass;
  c.message = summarize(c.findings, "");
  c.duration_s = duration_s;
  c.file = in_.schedule_file;
  std::vector<CaseResult> out = {std::move(c)};
  for (const Unjudged& u : unjudged_rules) out.push_back(not_judged_case(u));
  return out;
}

}  // namespace

std::string event_kind_key(const std::string& guid, unsigned id, unsigned version, unsigned channel,
                           unsigned level, unsigned opcode, unsigned task, std::uint64_t keyword) {
  return fmt::format("{}/{}/{}/{}/{}/{}/{}/{:x}", guid, id, version, channel, level, opcode, task,
                     keyword);
}

std::vector<CaseResult> judge_providers(const JudgeInput& in) {
  std::vector<std::unique_ptr<ProviderJudge>> judges;  // in registration order
  std::map<std::uint64_t, ProviderJudge*> live;        // by handle, while registered
  const std::vector<json>& records = *in.records;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const json& r = records[i];
    const std::uint64_t handle = r.value("handle", std::uint64_t{0});
    const std::string kind = r.value("kind", "");
    if (kind == "register") {
      judges.push_back(std::make_unique<ProviderJudge>(in, handle, r.value("guid", "?")));
      live[handle] = judges.back().get();
      continue;
    }
    auto it = live.find(handle);
    if (it == live.end()) continue;
    it->second->record(r, i);
    if (kind == "unregister") live.erase(it);  // a handle reused later is a new provider
  }
  std::vector<CaseResult> results;
  for (const auto& judge : judges) {
    for (CaseResult& c : judge->result(0)) results.push_back(std::move(c));
  }
  return results;
}

}  // namespace etwh::observe
