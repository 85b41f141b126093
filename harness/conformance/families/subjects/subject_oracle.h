// The provider-side oracle: what a provider under test (providers/adapter/) must write, given
// what its callback was told, and the comparison with what a consumer received. Rules
// PROV-RECORD, PROV-EVENT-ENABLED, PROV-CAPTURE-STATE, CB-FILTER-COPY and CB-UNKNOWN-CODE are
// judged here; the platform's own filter (each session's) applies on top, as it does on Windows.
#pragma once

#include "harness/conformance/lint.h"
#include "harness/conformance/oracle.h"
#include "harness/model/result.h"
#include "harness/conformance/scenario.h"
#include "harness/conformance/families/data_path/event_def.h"
#include "harness/conformance/families/sessions/filter_def.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace etwh::subject {

// What a subject says it writes (the subject_register reply, providers/PROTOCOL.md).
struct Description {
  std::vector<EventDef> test_events;        // in write order
  std::vector<EventDef> state_events;       // in write order
  std::optional<std::uint16_t> id_filter;   // EVENT_FILTER_HEADER Id of its skip-IDs filter
  std::vector<lint::Intent> intended_lint;  // lint findings it means
};

// Reads a subject_register reply. Throws std::runtime_error naming the bad field.
Description parse_description(const nlohmann::json& reply);

// The IDs a subject skips given the filters of one enable (EVENT_FILTER_TYPE_SCHEMATIZED blocks
// with Id `id_filter`, data = little-endian USHORT event IDs).
std::set<std::uint16_t> skipped_ids(const std::vector<FilterDef>& filters, std::uint16_t id_filter);

// Events a consumer must receive from one step, in order, and the rules a mismatch breaks
// (most specific first).
struct Segment {
  std::string step;   // JSON pointer of the step
  std::string cause;  // e.g. "subject_write after inject_callback IsEnabled 3"
  std::vector<std::string> rules;
  std::vector<EventDef> events;
};

// Per consumer label, the segments that the subject provider `provider` contributes. Consumers
// count only what is written after their consume step. `base` is oracle::expect_case(c).
std::map<std::string, std::vector<Segment>> expect_subject_events(
    const Case& c, const std::vector<oracle::StepExpectation>& base, const std::string& provider,
    const Description& description);

// Compares `records` (a consumer's records from the subject provider, in arrival order, as
// consume_stop gives them) with `segments`; a mismatch is reported under the first of its
// segment's rules that the case names. Empty when everything matches.
std::vector<Finding> judge_records(const std::vector<Segment>& segments,
                                   const std::vector<nlohmann::json>& records,
                                   const std::vector<std::string>& case_rules);

// "id 3 level 3 keyword 0x3" (the fields that tell a subject's events apart).
std::string describe_event(const EventDef& e);

}  // namespace etwh::subject
