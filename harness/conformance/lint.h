// Lint: static checks of what providers use and write (RULES.md lint rules): event descriptors
// of write steps and their TraceLogging metadata, traits blobs of set_traits steps, classic
// EVENT_TRACE_HEADERs. Each finding names its rule, its severity (the catalog's `severity` of the
// rule), the case, the provider and the offending descriptor. A case with `expect_lint` passes its
// lint part iff exactly the listed rules fire (an empty list: the linter must stay quiet).
#pragma once

#include "harness/model/catalog.h"
#include "harness/model/result.h"
#include "harness/conformance/scenario.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace etwh::lint {

using etwh::Severity;  // kWarning or kFailure, never kNote

struct Finding {
  std::string rule;
  Severity severity = Severity::kWarning;
  std::string where;  // "<case> <step pointer> provider <label>: <descriptor>"
  std::string message;
};

// One written event descriptor, as lint sees it.
struct Descriptor {
  std::uint16_t id = 0;
  std::uint8_t version = 0;
  std::uint8_t channel = 0;
  std::uint8_t level = 0;
  std::uint8_t opcode = 0;
  std::uint64_t keyword = 0;
  std::size_t payload_size = 0;
};

// A classic provider's EVENT_TRACE_HEADER fields that HDR-* judge.
struct ClassicHeader {
  std::uint32_t class_version =
      0;                  // Class.Version as one ULONG (Type | Level << 8 | Version << 16)
  std::uint8_t type = 0;  // the Type field as the provider set it
  std::uint8_t level = 0;
  std::uint16_t version = 0;
  std::uint32_t flags = 0;       // WNODE_FLAG_*
  bool guid_ptr_used = false;    // the provider filled GuidPtr instead of Guid
  std::uint32_t mof_fields = 0;  // MOF_FIELDs that follow the header (0: inline data)
};

// A lint warning a provider under test says it means (its description's `intended_lint`): the
// rule on the event with this descriptor (its payload size aside), and why.
struct Intent {
  std::string rule;
  Descriptor event;
  std::string reason;
  bool matches(const std::string& r, const Descriptor& d) const {
    return r == rule && d.id == event.id && d.version == event.version &&
           d.channel == event.channel && d.level == event.level && d.opcode == event.opcode &&
           d.keyword == event.keyword;
  }
};

// Severity of a lint rule from the catalog (warning when the catalog says nothing).
Severity severity_of(const Catalog& catalog, const std::string& rule);

// Descriptor rules for one event (DESC-TL-ID0, DESC-CHANNEL, DESC-LEVEL-NONZERO,
// DESC-KEYWORD-NONZERO). `where` names the event in findings.
std::vector<Finding> lint_descriptor(const Descriptor& d, const std::string& where,
                                     const Catalog& catalog);

// Rules over all events one provider wrote: DESC-ID-VERSION (a triple with two payload layouts,
// judged by payload size) and DESC-OPCODE (START and STOP counts differ).
std::vector<Finding> lint_event_set(const std::vector<Descriptor>& events, const std::string& where,
                                    const Catalog& catalog);

// DESC-ID-VERSION where each event's layout is known by name rather than by payload size (a
// recorded trace, whose payloads vary with strings: the TraceLogging metadata it carried).
std::vector<Finding> lint_named_layouts(
    const std::vector<std::pair<Descriptor, std::string>>& events, const std::string& where,
    const Catalog& catalog);

// Traits blob rules (TR-TYPE-RESERVED, TR-SIZE-256). A blob that does not parse is the
// runtime's business (TR-FORMAT), not lint's: no finding.
std::vector<Finding> lint_traits(const std::vector<std::uint8_t>& blob, const std::string& where,
                                 const Catalog& catalog);

// TraceLogging event metadata (a Type 1 descriptor): TL-META-FORMAT (the size matches, names
// are NUL-terminated, nothing runs past the end), TL-META-INTYPE (every field's InType is a
// TraceLogging type), TL-META-EVENT-NAME (the event has a name). lint_tracelogging.cc.
std::vector<Finding> lint_tl_metadata(const std::vector<std::uint8_t>& meta,
                                      const std::string& where, const Catalog& catalog);

// HDR-CLASS-ROLLUP, HDR-TYPES, HDR-FLAGS (lint part).
std::vector<Finding> lint_classic_header(const ClassicHeader& h, const std::string& where,
                                         const Catalog& catalog);

// Everything a case's steps use and write.
std::vector<Finding> lint_case(const Case& c, const Catalog& catalog);

// The traits blob a set_traits step gives the provider: its raw bytes, or the blob built from
// its name, group and custom traits (throws when they do not fit a blob). The driver sends it.
std::vector<std::uint8_t> traits_blob_of(const Step& step);

struct Judgement {
  bool ok = true;
  std::vector<std::string> missing;     // expected rules that did not fire
  std::vector<std::string> unexpected;  // rules that fired and were not expected
  std::string message;                  // what did not match, then every finding
};

// Compares the rules that fired with the expected ones (each expected rule must fire, no other
// rule may).
Judgement judge(const std::vector<std::string>& expected, const std::vector<Finding>& found);

// One line per finding: "WARNING|FAILURE RULE where: message".
std::string describe(const Finding& f);

}  // namespace etwh::lint
