#include "harness/recorded/trace_judge.h"

#include "harness/conformance/lint.h"
#include "harness/model/rules.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

namespace etwh::recorded {
namespace {

// The trace's own records (the log-file header event, rundown): no provider's to judge.
constexpr char kEventTraceGuid[] = "68fdd900-4a3e-11d1-84f4-0000f80464e3";

Finding not_judged(const char* rule, const char* why, const std::string& text) {
  Finding f = observed_note("not judged: " + text, rule);
  f.check = kNotJudgedCheck;
  f.observed = why;
  return f;
}

// A record of the trace, as a finding's place: FILE:N, N its position in delivery order.
StepLocation record_at(const RecordedTrace& t, const std::string& case_id, RecordNumber n) {
  StepLocation at;
  at.case_id = case_id;
  at.file = t.file;
  at.line = static_cast<std::size_t>(n);
  return at;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string name_of(const RecordedTrace& t, const std::string& provider) {
  for (const ProviderName& n : t.names) {
    if (n.provider == provider) return n.name;
  }
  return {};
}

bool selected(const JudgeOptions& o, const std::string& guid, const std::string& name) {
  if (o.providers.empty()) return true;
  for (std::string s : o.providers) {
    s = lower(s);
    if (s.size() == 38 && s.front() == '{' && s.back() == '}') s = s.substr(1, 36);
    if (s == guid || (!name.empty() && s == lower(name))) return true;
  }
  return false;
}

void finish(CaseResult& c) {
  for (const Finding& f : c.findings) {
    if (f.severity == Severity::kFailure && c.status == Status::kPass) c.status = Status::kFail;
  }
  c.as_expected = c.status == Status::kPass || c.status == Status::kUnsupported;
  c.message = summarize(c.findings, "");
}

std::string describe_stamp(std::int64_t filetime) { return fmt::format("{}", filetime); }

// The trace itself: the header event first, delivery order, the clock, what the header says
// was lost.
CaseResult trace_case(const RecordedTrace& t, const std::string& id) {
  CaseResult c;
  c.id = id;
  c.file = t.file;
  c.duration_s = t.read_seconds;
  if (t.open_status != 0) {
    c.status = Status::kHarnessError;
    Finding f = failed_check(
        "", kCheckFault, fmt::format("OpenTrace could not open the file: error {}", t.open_status),
        "", std::to_string(t.open_status));
    f.step.file = t.file;
    c.findings.push_back(std::move(f));
    c.as_expected = false;
    c.message = summarize(c.findings, "");
    return c;
  }
  c.rules = {rules::kConHeaderEvent, rules::kConOrder, rules::kConClock};
  auto fail = [&](const char* rule, const std::string& check, std::string text, RecordNumber n,
                  std::string expected, std::string observed) {
    Finding f =
        failed_check(rule, check, std::move(text), std::move(expected), std::move(observed));
    f.step = record_at(t, id, n);
    c.findings.push_back(std::move(f));
  };
  if (t.records == 0) {
    fail(rules::kConHeaderEvent, "first_record", "ProcessTrace delivered no record", 0,
         "the log-file header event", "nothing");
  } else if (!t.first_is_header) {
    fail(rules::kConHeaderEvent, "first_record",
         "the first record is not the log-file header event (EventTraceGuid, Opcode 0)", 1,
         std::string(kEventTraceGuid) + " Opcode 0", t.first_record);
  }
  if (t.inversions > 0) {
    fail(rules::kConOrder, "timestamp_order",
         fmt::format("{} record(s) stamped before the record delivered ahead of them; the first "
                     "goes back {} x 100 ns",
                     t.inversions, t.inversion_before - t.inversion_after),
         t.first_inversion, ">= " + describe_stamp(t.inversion_before),
         describe_stamp(t.inversion_after));
  }
  if (t.before_start > 0) {
    fail(rules::kConClock, "before_start_time",
         fmt::format("{} record(s) stamped before the header's StartTime", t.before_start),
         t.first_before_start, ">= " + describe_stamp(t.start_time),
         describe_stamp(t.first_before_start_stamp));
  }
  if (t.events_lost != 0 || t.buffers_lost != 0) {
    Finding f;
    f.check = kCheckEventsLost;
    f.severity = Severity::kWarning;
    f.text = fmt::format("the trace lost events: its header says EventsLost {}, BuffersLost {}",
                         t.events_lost, t.buffers_lost);
    f.expected = "0";
    f.observed = std::to_string(t.events_lost);
    f.step = record_at(t, id, t.records > 0 ? 1 : 0);
    c.findings.push_back(std::move(f));
  }
  Finding records = observed_note(fmt::format(
      "{} records ({:.3f} s to read), {} buffers written, EventsLost {}, BuffersLost {}, "
      "pointer size {}",
      t.records, t.read_seconds, t.buffers_written, t.events_lost, t.buffers_lost, t.pointer_size));
  records.check = kCheckRecords;
  records.observed = std::to_string(t.records);
  c.findings.push_back(std::move(records));
  if (t.process_status != 0) {
    c.status = Status::kHarnessError;
    c.findings.push_back(failed_check(
        "", kCheckFault,
        fmt::format("ProcessTrace returned {} after {} records", t.process_status, t.records)));
  }
  finish(c);
  return c;
}

// One provider's case: its event kinds, linted.
class ProviderJudge {
 public:
  ProviderJudge(const RecordedTrace& t, const JudgeOptions& o, std::string id, std::string provider,
                std::string label)
      : t_(t), o_(o), provider_(std::move(provider)), label_(std::move(label)) {
    c_.id = std::move(id);
    c_.file = t.file;
  }
  void add(const EventKind& k) { kinds_.push_back(&k); }
  CaseResult result();

 private:
  void lint(std::vector<lint::Finding> found, const EventKind& k, std::uint64_t events,
            const char* only = nullptr);
  void descriptors();
  void blobs();
  void classic();
  Finding kind_seen(const EventKind& k) const;
  void judged(const char* rule) {
    if (std::find(c_.rules.begin(), c_.rules.end(), rule) == c_.rules.end())
      c_.rules.push_back(rule);
  }

  const RecordedTrace& t_;
  const JudgeOptions& o_;
  std::string provider_;
  std::string label_;  // how findings name the provider: its name, else its GUID
  std::vector<const EventKind*> kinds_;
  CaseResult c_;
};

std::string descriptor_text(const EventKind& k) {
  return fmt::format("Id {} v{} channel {} level {} opcode {} task {} keyword 0x{:x}{}", k.id,
                     k.version, k.channel, k.level, k.opcode, k.task, k.keyword,
                     k.classic ? " (classic)" : "");
}

// Lint's findings (those of rule `only`, when given) about `events` events, at the first event
// of kind `k`.
void ProviderJudge::lint(std::vector<lint::Finding> found, const EventKind& k, std::uint64_t events,
                         const char* only) {
  for (const lint::Finding& l : found) {
    if (only != nullptr && l.rule != only) continue;
    Finding f;
    f.rule = l.rule;
    f.check = kCheckLint;
    f.text = fmt::format("{}: {} ({} event(s))", l.where, l.message, events);
    f.severity = l.severity;
    f.step = record_at(t_, c_.id, k.first);
    f.event = k.decoded;
    c_.findings.push_back(std::move(f));
  }
}

// DESC-*: each kind's descriptor, then the rules over all of the provider's events.
void ProviderJudge::descriptors() {
  std::vector<lint::Descriptor> all;
  std::vector<std::pair<lint::Descriptor, std::string>> with_layout;
  const EventKind* first_layout = nullptr;
  std::uint64_t layout_events = 0;
  // Kinds that differ only where lint does not look (Task, metadata) are linted once.
  using Fields = std::tuple<std::uint16_t, std::uint8_t, std::uint8_t, std::uint8_t, std::uint8_t,
                            std::uint64_t>;
  std::vector<std::pair<const EventKind*, std::uint64_t>> linted;  // first kind, events
  std::map<Fields, std::size_t> index;
  for (const EventKind* k : kinds_) {
    if (k->classic) continue;  // a classic header has no descriptor: HDR-* judge it
    lint::Descriptor d{k->id, k->version, k->channel, k->level, k->opcode, k->keyword, 0};
    auto [it, added] = index.try_emplace(
        Fields{k->id, k->version, k->channel, k->level, k->opcode, k->keyword}, linted.size());
    if (added) linted.emplace_back(k, 0);
    linted[it->second].second += k->count;
    all.insert(all.end(), k->count, d);
    if (k->id != 0 && k->metadata != kNoBlob) {
      with_layout.emplace_back(
          d, fmt::format("TraceLogging metadata of record {}", t_.metadata[k->metadata].first));
      layout_events += k->count;
      if (first_layout == nullptr) first_layout = k;
    }
  }
  for (const auto& [k, events] : linted) {
    const lint::Descriptor d{k->id, k->version, k->channel, k->level, k->opcode, k->keyword, 0};
    lint(lint::lint_descriptor(d, label_, *o_.catalog), *k, events);
  }
  if (all.empty()) {
    c_.findings.push_back(not_judged(rules::kDescChannel, kNoDescriptor,
                                     "DESC-* judge event descriptors; this provider wrote only "
                                     "classic events"));
    return;
  }
  for (const char* rule : {rules::kDescTlId0, rules::kDescChannel, rules::kDescLevelNonzero,
                           rules::kDescKeywordNonzero, rules::kDescOpcode}) {
    judged(rule);
  }
  lint(lint::lint_event_set(all, label_, *o_.catalog), *linted.front().first, all.size(),
       rules::kDescOpcode);
  if (first_layout == nullptr) {
    c_.findings.push_back(not_judged(
        rules::kDescIdVersion, kNoLayout,
        "a trace holds each event's payload, not its layout (sizes differ with strings and "
        "arrays); no event with an Id carried its TraceLogging metadata"));
    return;
  }
  judged(rules::kDescIdVersion);
  lint(lint::lint_named_layouts(with_layout, label_, *o_.catalog), *first_layout, layout_events,
       rules::kDescIdVersion);
}

// TL-META-* on each TraceLogging metadata block, TR-* on each traits blob, once each.
void ProviderJudge::blobs() {
  std::set<std::uint32_t> metadata, traits;
  for (const EventKind* k : kinds_) {
    const std::string where = fmt::format("{} {}", label_, descriptor_text(*k));
    if (k->metadata != kNoBlob && metadata.insert(k->metadata).second) {
      lint(lint::lint_tl_metadata(t_.metadata[k->metadata].bytes, where, *o_.catalog), *k,
           k->count);
    }
    if (k->traits != kNoBlob && traits.insert(k->traits).second) {
      lint(lint::lint_traits(t_.traits[k->traits].bytes, label_, *o_.catalog), *k, k->count);
    }
  }
  if (metadata.empty()) {
    c_.findings.push_back(not_judged(rules::kTlMetaFormat, kNoMetadata,
                                     "no event carried TraceLogging metadata "
                                     "(EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL)"));
  } else {
    for (const char* rule : {rules::kTlMetaFormat, rules::kTlMetaInType, rules::kTlMetaEventName}) {
      judged(rule);
    }
  }
  if (traits.empty()) {
    c_.findings.push_back(not_judged(rules::kTrTypeReserved, kNoTraits,
                                     "no event carried provider traits "
                                     "(EVENT_HEADER_EXT_TYPE_PROV_TRAITS)"));
  } else {
    judged(rules::kTrTypeReserved);
    judged(rules::kTrSize256);
  }
}

// HDR-TYPES on classic events' Type (their Opcode). The header a consumer gets holds the
// Type, Level and Version as three values: the packing and the flags are not in it.
void ProviderJudge::classic() {
  bool any = false;
  for (const EventKind* k : kinds_) {
    if (!k->classic) continue;
    any = true;
    lint::ClassicHeader h;
    h.type = k->opcode;
    h.level = k->level;
    h.version = k->version;
    h.class_version = h.type | (static_cast<std::uint32_t>(h.level) << 8) |
                      (static_cast<std::uint32_t>(h.version) << 16);
    h.flags = 0x00020000;  // WNODE_FLAG_TRACED_GUID: not in the trace, so not judged here
    lint(lint::lint_classic_header(h, fmt::format("{} {}", label_, descriptor_text(*k)),
                                   *o_.catalog),
         *k, k->count, rules::kHdrTypes);
  }
  if (any) {
    judged(rules::kHdrTypes);
  } else {
    c_.findings.push_back(not_judged(rules::kHdrTypes, kNoClassic, "no classic event"));
  }
}

Finding ProviderJudge::kind_seen(const EventKind& k) const {
  Finding f =
      observed_note(fmt::format("event kind seen: {}: {} event(s){}", descriptor_text(k), k.count,
                                k.decoded ? ""
                                          : fmt::format(", not decoded: TdhGetEventInformation "
                                                        "returned {}",
                                                        k.decode_status)));
  f.step = record_at(t_, c_.id, k.first);
  f.event = k.decoded;
  return f;
}

CaseResult ProviderJudge::result() {
  std::uint64_t events = 0;
  for (const EventKind* k : kinds_) events += k->count;
  descriptors();
  blobs();
  classic();
  for (const EventKind* k : kinds_) c_.findings.push_back(kind_seen(*k));
  const std::string name = name_of(t_, provider_);
  c_.findings.push_back(
      observed_note(fmt::format("provider {}{}: {} event(s) of {} kind(s)", provider_,
                                name.empty() ? "" : " (" + name + ")", events, kinds_.size())));
  finish(c_);
  return std::move(c_);
}

std::string base_name(const std::string& file) {
  return std::filesystem::path(file).filename().string();
}

}  // namespace

namespace {

// Rules no recorded trace can show, and why.
const std::vector<std::pair<const char*, const char*>>& never_in_a_trace() {
  static const std::vector<std::pair<const char*, const char*>> list = {
      {rules::kHdrClassRollup,
       "a consumer gets a classic event's Type, Level and Version as three values, not "
       "Class.Version as the provider packed it"},
      {rules::kHdrFlags,
       "a trace keeps neither a classic header's WNODE flags nor whether GuidPtr or MOF_FIELDs "
       "were used"},
      {rules::kTrFormat,
       "a traits blob's format is checked when the provider sets it; a trace holds the blobs "
       "the platform took"},
  };
  return list;
}

CaseResult unsupported_case(std::string id, const char* rule, const char* why,
                            const std::string& text) {
  CaseResult c;
  c.id = std::move(id);
  if (*rule != '\0') c.rules = {rule};
  c.status = Status::kUnsupported;
  c.as_expected = true;
  c.findings.push_back(not_judged(rule, why, text));
  c.message = c.findings.back().text;
  return c;
}

// The providers of one trace, in order of their first event, each with its kinds.
std::vector<CaseResult> provider_cases(const RecordedTrace& t, const JudgeOptions& o,
                                       const std::string& file_id, std::set<std::string>& seen) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const EventKind*>> by_provider;
  for (const EventKind& k : t.kinds) {
    if (k.provider == kEventTraceGuid) continue;
    auto [it, added] = by_provider.try_emplace(k.provider);
    if (added) order.push_back(k.provider);
    it->second.push_back(&k);
  }
  std::vector<CaseResult> out;
  std::set<std::string> ids;
  for (const std::string& provider : order) {
    const std::string name = name_of(t, provider);
    if (!selected(o, provider, name)) continue;
    seen.insert(provider);
    if (!name.empty()) seen.insert(lower(name));
    std::string id = file_id + "/" + (name.empty() ? provider : name);
    if (!ids.insert(id).second) id = file_id + "/" + provider;  // two providers of one name
    ProviderJudge judge(t, o, id, provider, name.empty() ? provider : name);
    for (const EventKind* k : by_provider[provider]) judge.add(*k);
    out.push_back(judge.result());
  }
  return out;
}

}  // namespace

std::vector<CaseResult> judge_traces(const std::vector<RecordedTrace>& traces,
                                     const JudgeOptions& options) {
  std::vector<CaseResult> out;
  std::set<std::string> file_ids, seen;
  for (const RecordedTrace& t : traces) {
    std::string id = "judge/" + base_name(t.file);
    if (!file_ids.insert(id).second) id = "judge/" + t.file;  // two files of one name
    out.push_back(trace_case(t, id));
    for (CaseResult& c : provider_cases(t, options, id, seen)) out.push_back(std::move(c));
  }
  for (const std::string& p : options.providers) {
    std::string key = lower(p);
    if (key.size() == 38 && key.front() == '{' && key.back() == '}') key = key.substr(1, 36);
    if (seen.count(key)) continue;
    out.push_back(unsupported_case("judge/provider/" + p, "", kProviderAbsent,
                                   "no event of provider " + p + " in the trace(s)"));
  }
  for (const auto& [rule, why] : never_in_a_trace()) {
    out.push_back(unsupported_case(std::string("judge/") + rule, rule, kNotInTrace, why));
  }
  return out;
}

}  // namespace etwh::recorded
