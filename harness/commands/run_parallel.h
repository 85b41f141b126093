// `etwh run -j N`: the selected case runs on N worker threads, each with its own Driver (its
// own session-name prefix, its own agents). ETW providers are machine-wide: a session enabling a
// provider GUID reaches every registration of it in every process. So two cases that share a
// provider GUID, a provider group or the provider under test never run at the same time; any
// other two may.
#pragma once

#include "harness/conformance/driver.h"
#include "harness/commands/run_selection.h"

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace etwh::cli {

// What a case holds while it runs, which no other running case may hold: its provider GUIDs
// ("{...}"), the provider groups it enables or joins, and "subject" when it runs a provider
// under test (whose GUID is the subject's own).
std::set<std::string> machine_wide_resources(const Case& c);

// Runs one case on a worker's driver, and judges it.
using RunCase = std::function<CaseResult(Driver& driver, const Case& c)>;
// Called once per finished run, from one thread at a time, in the order runs finish.
using RunFinished = std::function<void(const CaseResult& result, const ScheduledRun& run)>;

// Runs `selection.runs` on `jobs` workers (1: on the calling thread, with `driver` as given;
// more: worker k's sessions are named with `driver.session_prefix` + "w<k>-"). Runs start in
// the selection's order, each as soon as a worker is free and no running case holds one of its
// machine_wide_resources. Returns one result per run, at the run's index; a run a stop request
// came before is nullopt. An exception of `run_case` stops the other workers taking new runs,
// and is rethrown once they have ended theirs.
std::vector<std::optional<CaseResult>> run_in_parallel(const Selection& selection, int jobs,
                                                       const DriverOptions& driver,
                                                       const RunCase& run_case,
                                                       const RunFinished& finished);

}  // namespace etwh::cli
