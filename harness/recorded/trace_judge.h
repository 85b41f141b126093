// `etwh judge`'s verdicts on recorded traces (pure: no platform call). Per file, one case for
// the trace itself (CON-HEADER-EVENT: the header event first; CON-ORDER: stamps never go back
// in delivery order; CON-CLOCK: none before the header's StartTime; the header's EventsLost and
// BuffersLost as findings), then one case per provider that wrote in it, judged by lint
// (harness/conformance/lint.h) on what its events carried: each event kind's descriptor
// (DESC-*), its TraceLogging metadata (TL-META-*), its traits (TR-TYPE-RESERVED, TR-SIZE-256),
// the Type of its classic events (HDR-TYPES). A rule a provider's events cannot show (no
// TraceLogging metadata, no traits, no classic event) is a `not_judged` note of its case; a rule
// no trace can show is a case of its own, NOT JUDGED: UNSUPPORTED, as expected, the reason as
// data (as harness/observe/judge.h does).
#pragma once

#include "harness/model/catalog.h"
#include "harness/model/result.h"
#include "harness/recorded/recorded_trace.h"

#include <string>
#include <vector>

namespace etwh::recorded {

// Why a rule was not judged (the `observed` of a `not_judged` finding).
inline constexpr char kNotJudgedCheck[] = "not_judged";
inline constexpr char kNoMetadata[] = "no_metadata";          // no TraceLogging metadata item
inline constexpr char kNoTraits[] = "no_traits";              // no provider traits item
inline constexpr char kNoClassic[] = "no_classic";            // no classic event
inline constexpr char kNoDescriptor[] = "no_descriptor";      // classic events only
inline constexpr char kNoLayout[] = "no_layout";              // no event says its layout
inline constexpr char kNotInTrace[] = "not_in_trace";         // a trace cannot show it
inline constexpr char kProviderAbsent[] = "provider_absent";  // --provider found no event

// The checks of the trace's own case.
inline constexpr char kCheckEventsLost[] = "events_lost";
inline constexpr char kCheckRecords[] = "records";

struct JudgeOptions {
  const Catalog* catalog = nullptr;
  // --provider: GUIDs (with or without braces, any case) or names (any case); empty: every
  // provider.
  std::vector<std::string> providers;
};

std::vector<CaseResult> judge_traces(const std::vector<RecordedTrace>& traces,
                                     const JudgeOptions& options);

}  // namespace etwh::recorded
