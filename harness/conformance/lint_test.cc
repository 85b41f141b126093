// Unit tests of the linter: each rule fires on a bad input, stays quiet on a good one, names
// the offending event, and takes its severity from the catalog.
#include "harness/conformance/lint.h"
#include "win32_ops.h"

#include <gtest/gtest.h>

namespace etwh::lint {
namespace {

const Catalog& catalog() {
  static const Catalog c = load_catalog(ETWH_CATALOG_FILE);
  return c;
}

std::vector<std::string> rules_of(const std::vector<Finding>& f) {
  std::vector<std::string> out;
  for (const Finding& x : f) out.push_back(x.rule);
  return out;
}

using Rules = std::vector<std::string>;

// A descriptor with nothing to say about it: manifest channel, level 4, a provider keyword.
Descriptor good() { return Descriptor{7, 1, 0, 4, 0, 0x10, 8}; }

TEST(LintDescriptor, GoodDescriptorIsQuiet) {
  EXPECT_TRUE(lint_descriptor(good(), "w", catalog()).empty());
  Descriptor tl = good();
  tl.id = 0;
  tl.channel = 11;
  EXPECT_TRUE(lint_descriptor(tl, "w", catalog()).empty());
  Descriptor own = good();
  own.channel = 16;
  own.level = 16;
  EXPECT_TRUE(lint_descriptor(own, "w", catalog()).empty());
}

TEST(LintDescriptor, EachRuleFires) {
  Descriptor d = good();
  d.channel = 11;  // TraceLogging with an Id
  EXPECT_EQ(rules_of(lint_descriptor(d, "w", catalog())), Rules{"DESC-TL-ID0"});
  d = good();
  d.channel = 5;
  EXPECT_EQ(rules_of(lint_descriptor(d, "w", catalog())), Rules{"DESC-CHANNEL"});
  d = good();
  d.level = 0;
  EXPECT_EQ(rules_of(lint_descriptor(d, "w", catalog())), Rules{"DESC-LEVEL-NONZERO"});
  d.level = 9;
  EXPECT_EQ(rules_of(lint_descriptor(d, "w", catalog())), Rules{"DESC-LEVEL-NONZERO"});
  d = good();
  d.keyword = 0;
  EXPECT_EQ(rules_of(lint_descriptor(d, "w", catalog())), Rules{"DESC-KEYWORD-NONZERO"});
  d.keyword = 0x0001000000000000ull;
  EXPECT_EQ(rules_of(lint_descriptor(d, "w", catalog())), Rules{"DESC-KEYWORD-NONZERO"});
}

TEST(LintDescriptor, FindingNamesTheEventAndSeverityComesFromTheCatalog) {
  Descriptor d = good();
  d.channel = 3;
  const auto f = lint_descriptor(d, "case-x /cases/0/steps/2 provider p event 0", catalog());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kFailure);
  EXPECT_NE(f[0].where.find("case-x /cases/0/steps/2 provider p event 0: Id 7 Version 1 Channel 3"),
            std::string::npos);
  d = good();
  d.level = 0;
  EXPECT_EQ(lint_descriptor(d, "w", catalog())[0].severity, Severity::kWarning);
}

TEST(LintEventSet, IdVersionLayoutsAndOpcodePairs) {
  Descriptor a = good(), b = good();
  b.payload_size = 16;
  EXPECT_EQ(rules_of(lint_event_set({a, b}, "w", catalog())), Rules{"DESC-ID-VERSION"});
  b.version = 2;  // a new version may change the layout
  EXPECT_TRUE(lint_event_set({a, b}, "w", catalog()).empty());
  Descriptor start = good(), stop = good();
  start.opcode = 1;
  stop.opcode = 2;
  EXPECT_TRUE(lint_event_set({start, stop}, "w", catalog()).empty());
  EXPECT_EQ(rules_of(lint_event_set({start, start, stop}, "w", catalog())), Rules{"DESC-OPCODE"});
}

std::vector<std::uint8_t> blob(const std::string& name, std::vector<Trait> traits) {
  return build_traits_blob(name, traits);
}

TEST(LintTraits, ReservedTypesAndSize) {
  const GUID group{0x11111111, 0x2222, 0x3333, {4, 4, 4, 4, 4, 4, 4, 4}};
  EXPECT_TRUE(lint_traits(blob("P", {group_trait(group), {200, {1, 2}}}), "w", catalog()).empty());
  EXPECT_EQ(rules_of(lint_traits(blob("P", {{5, {1}}}), "w", catalog())),
            Rules{"TR-TYPE-RESERVED"});
  // Type 1 that is not a GUID-sized group trait is a misuse of Microsoft's type.
  EXPECT_EQ(rules_of(lint_traits(blob("P", {{1, {1, 2}}}), "w", catalog())),
            Rules{"TR-TYPE-RESERVED"});
  const auto big = lint_traits(blob("P", {{200, std::vector<std::uint8_t>(300)}}), "w", catalog());
  ASSERT_EQ(rules_of(big), Rules{"TR-SIZE-256"});
  EXPECT_EQ(big[0].severity, Severity::kWarning);
  EXPECT_TRUE(lint_traits({0x05, 0x00, 'P'}, "w", catalog()).empty());  // malformed: TR-FORMAT's
}

ClassicHeader good_header() {
  ClassicHeader h;
  h.type = 10;
  h.level = 4;
  h.version = 2;
  h.class_version = 10 | (4 << 8) | (2 << 16);
  h.flags = 0x00020000;
  return h;
}

TEST(LintClassicHeader, RollupTypesFlags) {
  EXPECT_TRUE(lint_classic_header(good_header(), "w", catalog()).empty());
  ClassicHeader h = good_header();
  h.class_version = 0x00020410u ^ 0x100u;
  EXPECT_EQ(rules_of(lint_classic_header(h, "w", catalog())), Rules{"HDR-CLASS-ROLLUP"});
  h = good_header();
  h.type = 9;
  h.class_version = 9 | (4 << 8) | (2 << 16);
  EXPECT_EQ(rules_of(lint_classic_header(h, "w", catalog())), Rules{"HDR-TYPES"});
  h = good_header();
  h.flags = 0;
  EXPECT_EQ(rules_of(lint_classic_header(h, "w", catalog())), Rules{"HDR-FLAGS"});
  h = good_header();
  h.guid_ptr_used = true;
  EXPECT_EQ(rules_of(lint_classic_header(h, "w", catalog())), Rules{"HDR-FLAGS"});
  h = good_header();
  h.mof_fields = 2;
  EXPECT_EQ(rules_of(lint_classic_header(h, "w", catalog())), Rules{"HDR-FLAGS"});
  h.flags |= 0x00100000;
  EXPECT_TRUE(lint_classic_header(h, "w", catalog()).empty());
  h.mof_fields = 17;
  EXPECT_EQ(rules_of(lint_classic_header(h, "w", catalog())), Rules{"HDR-FLAGS"});
}

TEST(LintCase, WalksWriteAndTraitsStepsAndJudges) {
  const auto cases = load_scenario_text(R"({"cases": [{
      "id": "lint-x", "rules": ["DESC-LEVEL-NONZERO"], "agents": {"a": {}},
      "providers": {"p": {"agent": "a", "guid": "11111111-2222-3333-4444-555555555555"}},
      "steps": [{"op": "register", "provider": "p"},
                {"op": "set_traits", "provider": "p", "traits": {"name": "P",
                  "custom": [{"type": 7, "data": "01"}]}},
                {"op": "write", "provider": "p", "events": [{"id": 3, "level": 0,
                  "keyword": "0x1"}]}],
      "expect_lint": ["DESC-LEVEL-NONZERO", "TR-TYPE-RESERVED"]}]})",
                                        "t.json", catalog().ids());
  ASSERT_EQ(cases.size(), 1u);
  ASSERT_TRUE(cases[0].expect_lint.has_value());
  const auto found = lint_case(cases[0], catalog());
  EXPECT_EQ(rules_of(found), (Rules{"TR-TYPE-RESERVED", "DESC-LEVEL-NONZERO"}));
  EXPECT_NE(found[1].where.find("lint-x /cases/0/steps/2 provider p event 0"), std::string::npos);
  EXPECT_TRUE(judge(*cases[0].expect_lint, found).ok);
  const Judgement missing = judge({"DESC-LEVEL-NONZERO", "DESC-CHANNEL"}, found);
  EXPECT_FALSE(missing.ok);
  EXPECT_NE(missing.message.find("DESC-CHANNEL did not fire"), std::string::npos);
  EXPECT_NE(missing.message.find("TR-TYPE-RESERVED fired unexpectedly"), std::string::npos);
  EXPECT_FALSE(judge({}, found).ok);
  EXPECT_TRUE(judge({}, {}).ok);
}

TEST(LintCase, ClassicTraceEventHeaders) {
  const auto cases = load_scenario_text(R"({"cases": [{
      "id": "lint-h", "rules": ["HDR-TYPES"], "agents": {"a": {}},
      "providers": {"p": {"agent": "a", "guid": "11111111-2222-3333-4444-555555555556"}},
      "sessions": {"s": {}},
      "steps": [{"op": "register_classic", "provider": "p"},
                {"op": "trace_event", "provider": "p", "type": 10, "level": 4, "mof_fields": 2},
                {"op": "trace_event", "provider": "p", "type": 9, "level": 4},
                {"op": "trace_event", "provider": "p", "type": 10, "level": 4, "flags": "0x0"}]}]})",
                                        "t.json", catalog().ids());
  ASSERT_EQ(cases.size(), 1u);
  const auto found = lint_case(cases[0], catalog());
  EXPECT_EQ(rules_of(found), (Rules{"HDR-TYPES", "HDR-FLAGS"}));
  ASSERT_EQ(found.size(), 2u);
  EXPECT_NE(found[0].where.find("lint-h /cases/0/steps/2 provider p"), std::string::npos);
}

// TraceLogging metadata: size, tags, event name, then per field name, InType [, OutType].
std::vector<std::uint8_t> tl_meta(const std::string& event, std::vector<std::uint8_t> fields) {
  std::vector<std::uint8_t> m = {0, 0, 0};  // size (patched), tags 0
  for (char c : event) m.push_back(static_cast<std::uint8_t>(c));
  m.push_back(0);
  for (std::uint8_t b : fields) m.push_back(b);
  m[0] = static_cast<std::uint8_t>(m.size());
  m[1] = static_cast<std::uint8_t>(m.size() >> 8);
  return m;
}

TEST(LintTraceLogging, WellFormedMetadataIsQuiet) {
  // "n" UINT32, "s" ANSISTRING with OutType UTF8, "a" UINT8[3] (constant count).
  const auto m = tl_meta("Etwh.Event", {'n', 0, 8, 's', 0, 2 | 0x80, 35, 'a', 0, 4 | 0x20, 3, 0});
  EXPECT_TRUE(lint_tl_metadata(m, "w", catalog()).empty());
}

TEST(LintTraceLogging, EachRuleFires) {
  auto wrong_size = tl_meta("E", {'n', 0, 8});
  wrong_size[0] += 1;
  EXPECT_EQ(rules_of(lint_tl_metadata(wrong_size, "w", catalog())), Rules{"TL-META-FORMAT"});
  const auto unterminated = std::vector<std::uint8_t>{6, 0, 0, 'E', 'v', 't'};
  const auto f = lint_tl_metadata(unterminated, "w", catalog());
  ASSERT_EQ(rules_of(f), Rules{"TL-META-FORMAT"});
  EXPECT_NE(f[0].message.find("event name is not NUL-terminated"), std::string::npos);
  EXPECT_EQ(rules_of(lint_tl_metadata(tl_meta("E", {'n', 0}), "w", catalog())),
            Rules{"TL-META-FORMAT"});  // a field without its InType
  EXPECT_EQ(rules_of(lint_tl_metadata(tl_meta("E", {'a', 0, 4 | 0x20, 3}), "w", catalog())),
            Rules{"TL-META-FORMAT"});  // a constant count cut short
  EXPECT_EQ(rules_of(lint_tl_metadata(tl_meta("E", {'n', 0, 0}), "w", catalog())),
            Rules{"TL-META-INTYPE"});
  EXPECT_EQ(rules_of(lint_tl_metadata(tl_meta("E", {'p', 0, 16}), "w", catalog())),
            Rules{"TL-META-INTYPE"});
  EXPECT_EQ(rules_of(lint_tl_metadata(tl_meta("E", {'x', 0, 26}), "w", catalog())),
            Rules{"TL-META-INTYPE"});
  EXPECT_EQ(rules_of(lint_tl_metadata(tl_meta("", {'n', 0, 8}), "w", catalog())),
            Rules{"TL-META-EVENT-NAME"});
  // Severities from the catalog: the malformations fail, the missing name warns.
  EXPECT_EQ(lint_tl_metadata(wrong_size, "w", catalog())[0].severity, Severity::kFailure);
  EXPECT_EQ(lint_tl_metadata(tl_meta("", {}), "w", catalog())[0].severity, Severity::kWarning);
}

}  // namespace
}  // namespace etwh::lint
