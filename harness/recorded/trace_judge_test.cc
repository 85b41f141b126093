// Unit tests of `etwh judge`'s verdicts on recorded traces, built by hand: a clean trace passes
// with every judged rule named; each kind of defect fails its own rule, at the record where it
// first appears, with the event as decoded; lost events are said, not failed; what a trace
// cannot show is NOT JUDGED with its reason.
#include "harness/recorded/trace_judge.h"

#include "harness/model/rules.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace etwh::recorded {
namespace {

const Catalog& catalog() {
  static const Catalog c = load_catalog(ETWH_CATALOG_FILE);
  return c;
}

constexpr char kTl[] = "11111111-2222-3333-4444-555555555555";
constexpr char kManifest[] = "aaaaaaaa-2222-3333-4444-555555555555";

// TraceLogging metadata: size, no tags, event "Ev", field "a" of InType `in_type`.
std::vector<std::uint8_t> metadata(std::uint8_t in_type) {
  std::vector<std::uint8_t> m = {0, 0, 0, 'E', 'v', 0, 'a', 0, in_type};
  m[0] = static_cast<std::uint8_t>(m.size());
  return m;
}

// A trace that is right in every way: the header first, stamps in order, one TraceLogging
// provider writing a good event, one manifest provider too.
RecordedTrace clean() {
  RecordedTrace t;
  t.file = "dir/clean.etl";
  t.records = 5;
  t.first_is_header = true;
  t.start_time = 100;
  t.metadata.push_back({metadata(7), 2});
  EventKind tl;
  tl.provider = kTl;
  tl.channel = 11;
  tl.level = 4;
  tl.keyword = 1;
  tl.metadata = 0;
  tl.count = 2;
  tl.first = 2;
  tl.decoded = DecodedEvent{"Ev", {{"a", "1"}}};
  EventKind manifest;
  manifest.provider = kManifest;
  manifest.id = 7;
  manifest.level = 4;
  manifest.keyword = 0x10;
  manifest.count = 2;
  manifest.first = 4;
  t.kinds = {tl, manifest};
  t.names = {{kTl, "My.Provider"}};
  return t;
}

std::vector<CaseResult> judge(const RecordedTrace& t, std::vector<std::string> providers = {}) {
  JudgeOptions o;
  o.catalog = &catalog();
  o.providers = std::move(providers);
  return judge_traces({t}, o);
}

const CaseResult& case_of(const std::vector<CaseResult>& cases, const std::string& id) {
  for (const CaseResult& c : cases) {
    if (c.id == id) return c;
  }
  ADD_FAILURE() << "no case " << id;
  return cases.front();
}

const Finding* finding_of(const CaseResult& c, const std::string& rule) {
  for (const Finding& f : c.findings) {
    if (f.rule == rule && f.severity != Severity::kNote) return &f;
  }
  return nullptr;
}

bool names(const CaseResult& c, const std::string& rule) {
  return std::find(c.rules.begin(), c.rules.end(), rule) != c.rules.end();
}

TEST(TraceJudge, CleanTracePassesEveryJudgedRule) {
  const auto cases = judge(clean());
  const CaseResult& file = case_of(cases, "judge/clean.etl");
  EXPECT_EQ(file.status, Status::kPass) << file.message;
  EXPECT_TRUE(names(file, rules::kConHeaderEvent));
  EXPECT_TRUE(names(file, rules::kConOrder));
  const CaseResult& tl = case_of(cases, "judge/clean.etl/My.Provider");
  EXPECT_EQ(tl.status, Status::kPass) << tl.message;
  EXPECT_TRUE(names(tl, rules::kDescChannel));
  EXPECT_TRUE(names(tl, rules::kTlMetaInType));
  EXPECT_FALSE(names(tl, rules::kTrTypeReserved));  // no traits: not judged
  const CaseResult& manifest = case_of(cases, std::string("judge/clean.etl/") + kManifest);
  EXPECT_EQ(manifest.status, Status::kPass) << manifest.message;
  EXPECT_FALSE(names(manifest, rules::kDescIdVersion));  // no layout in the trace
  for (const CaseResult& c : cases) {
    EXPECT_TRUE(c.as_expected) << c.id << ": " << c.message;
    for (const Finding& f : c.findings) EXPECT_NE(f.severity, Severity::kWarning) << f.text;
  }
}

TEST(TraceJudge, BadDescriptorFailsItsRuleAtItsFirstRecordWithTheEvent) {
  RecordedTrace t = clean();
  t.kinds[0].channel = 5;
  const auto cases = judge(t);
  const CaseResult& c = case_of(cases, "judge/clean.etl/My.Provider");
  EXPECT_EQ(c.status, Status::kFail);
  const Finding* f = finding_of(c, rules::kDescChannel);
  ASSERT_NE(f, nullptr) << c.message;
  EXPECT_EQ(f->step.file, "dir/clean.etl");
  EXPECT_EQ(f->step.line, 2u);
  ASSERT_TRUE(f->event.has_value());
  EXPECT_EQ(f->event->name, "Ev");
}

TEST(TraceJudge, BadTraceLoggingMetadataFailsTlMeta) {
  RecordedTrace t = clean();
  t.metadata[0].bytes = metadata(0);  // InType NULL
  const auto cases = judge(t);
  const CaseResult& c = case_of(cases, "judge/clean.etl/My.Provider");
  EXPECT_EQ(c.status, Status::kFail);
  EXPECT_NE(finding_of(c, rules::kTlMetaInType), nullptr) << c.message;
}

TEST(TraceJudge, TraitsAreLintedWhenEventsCarryThem) {
  RecordedTrace t = clean();
  // Size 10: name "P", then a trait of 6 bytes, type 2 (Microsoft's, not a group), 3 of data.
  t.traits.push_back({{10, 0, 'P', 0, 6, 0, 2, 1, 2, 3}, 2});
  t.kinds[0].traits = 0;
  const auto cases = judge(t);
  const CaseResult& c = case_of(cases, "judge/clean.etl/My.Provider");
  EXPECT_TRUE(names(c, rules::kTrTypeReserved));
  EXPECT_NE(finding_of(c, rules::kTrTypeReserved), nullptr) << c.message;
}

TEST(TraceJudge, SameIdWithTwoLayoutsFailsDescIdVersion) {
  RecordedTrace t = clean();
  t.metadata.push_back({metadata(8), 3});
  EventKind a = t.kinds[1], b = t.kinds[1];
  a.metadata = 0;
  b.metadata = 1;
  t.kinds.push_back(a);
  t.kinds.push_back(b);
  const auto cases = judge(t);
  const CaseResult& c = case_of(cases, std::string("judge/clean.etl/") + kManifest);
  EXPECT_TRUE(names(c, rules::kDescIdVersion));
  EXPECT_NE(finding_of(c, rules::kDescIdVersion), nullptr) << c.message;
}

TEST(TraceJudge, ClassicTypeNineFailsHdrTypes) {
  RecordedTrace t = clean();
  t.kinds[1].classic = true;
  t.kinds[1].opcode = 9;
  const auto cases = judge(t);
  const CaseResult& c = case_of(cases, std::string("judge/clean.etl/") + kManifest);
  EXPECT_TRUE(names(c, rules::kHdrTypes));
  EXPECT_FALSE(names(c, rules::kDescChannel));  // a classic event has no descriptor
  EXPECT_NE(finding_of(c, rules::kHdrTypes), nullptr) << c.message;
  EXPECT_EQ(finding_of(c, rules::kHdrFlags), nullptr);
}

TEST(TraceJudge, MissingHeaderEventFailsConHeaderEvent) {
  RecordedTrace t = clean();
  t.first_is_header = false;
  const auto cases = judge(t);
  const CaseResult& c = case_of(cases, "judge/clean.etl");
  EXPECT_EQ(c.status, Status::kFail);
  const Finding* f = finding_of(c, rules::kConHeaderEvent);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->step.line, 1u);
}

TEST(TraceJudge, StampGoingBackFailsConOrderAndBeforeStartFailsConClock) {
  RecordedTrace t = clean();
  t.inversions = 1;
  t.first_inversion = 4;
  t.inversion_before = 300;
  t.inversion_after = 200;
  const auto cases = judge(t);
  const CaseResult& c = case_of(cases, "judge/clean.etl");
  const Finding* f = finding_of(c, rules::kConOrder);
  ASSERT_NE(f, nullptr) << c.message;
  EXPECT_EQ(f->step.line, 4u);
  EXPECT_EQ(finding_of(c, rules::kConClock), nullptr);
  t.before_start = 1;
  t.first_before_start = 3;
  const auto later = judge(t);
  EXPECT_NE(finding_of(case_of(later, "judge/clean.etl"), rules::kConClock), nullptr);
}

TEST(TraceJudge, LostEventsAreSaidWithoutFailingARule) {
  RecordedTrace t = clean();
  t.events_lost = 3;
  const auto cases = judge(t);
  const CaseResult& c = case_of(cases, "judge/clean.etl");
  EXPECT_EQ(c.status, Status::kPass);
  const auto lost = std::find_if(c.findings.begin(), c.findings.end(),
                                 [](const Finding& f) { return f.check == kCheckEventsLost; });
  ASSERT_NE(lost, c.findings.end());
  EXPECT_EQ(lost->severity, Severity::kWarning);
  EXPECT_EQ(lost->observed, "3");
}

TEST(TraceJudge, UnreadableFileIsAHarnessError) {
  RecordedTrace t;
  t.file = "x.etl";
  t.open_status = 13;
  const auto cases = judge(t);
  EXPECT_EQ(case_of(cases, "judge/x.etl").status, Status::kHarnessError);
  EXPECT_FALSE(case_of(cases, "judge/x.etl").as_expected);
}

TEST(TraceJudge, RulesNoTraceShowsAreNotJudgedWithTheirReason) {
  const auto cases = judge(clean());
  const CaseResult& c = case_of(cases, std::string("judge/") + rules::kHdrFlags);
  EXPECT_EQ(c.status, Status::kUnsupported);
  EXPECT_TRUE(c.as_expected);
  ASSERT_EQ(c.findings.size(), 1u);
  EXPECT_EQ(c.findings[0].check, kNotJudgedCheck);
  EXPECT_EQ(c.findings[0].observed, kNotInTrace);
}

TEST(TraceJudge, ProviderSelectionByNameOrGuid) {
  const auto by_name = judge(clean(), {"my.provider"});
  EXPECT_EQ(std::count_if(by_name.begin(), by_name.end(),
                          [](const CaseResult& c) { return c.id.find(kManifest) != c.id.npos; }),
            0);
  const auto by_guid = judge(clean(), {std::string("{") + kManifest + "}"});
  case_of(by_guid, std::string("judge/clean.etl/") + kManifest);
  const auto absent = judge(clean(), {"Nobody"});
  const CaseResult& c = case_of(absent, "judge/provider/Nobody");
  EXPECT_EQ(c.status, Status::kUnsupported);
  EXPECT_EQ(c.findings[0].observed, kProviderAbsent);
}

}  // namespace
}  // namespace etwh::recorded
