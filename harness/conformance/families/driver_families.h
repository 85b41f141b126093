// The driver's side of every op (the `etwh` program, which talks to agents and the platform):
// its runner. Each step family registers its runners in its folder (the end of
// families/<family>/<family>_run.cc); driver_ops() is their concatenation (driver_families.cc).
// The core side of the same ops (name, parser, oracle part) is core_families.h: the two are
// apart because the core never depends on the driver; op_registration_mismatches() holds them
// to one list of names.
#pragma once

#include "harness/conformance/case_run.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace etwh {

struct DriverOp {
  // Sends the step, returns the reply for the driver to judge (its status, then the callbacks,
  // timing and budgets every step may cause), or nullopt when the runner judged all.
  using Run = std::optional<StepReply> (*)(CaseRun& run, const Step& step,
                                           const oracle::StepExpectation& e);

  std::string_view name;  // as in scenario files: its family's ops::k* constant
  Run run = nullptr;
};

// A runner that is a part of CaseRun (case_run.h).
template <std::optional<StepReply> (CaseRun::*Part)(const Step&, const oracle::StepExpectation&)>
std::optional<StepReply> run_part(CaseRun& run, const Step& step,
                                  const oracle::StepExpectation& e) {
  return (run.*Part)(step, e);
}

// Each family's registration, in its folder.
std::vector<DriverOp> sessions_driver_ops();
std::vector<DriverOp> groups_driver_ops();
std::vector<DriverOp> providers_driver_ops();
std::vector<DriverOp> traits_driver_ops();
std::vector<DriverOp> data_path_driver_ops();
std::vector<DriverOp> classic_driver_ops();
std::vector<DriverOp> subjects_driver_ops();

// Every runner, by family (driver_families.cc).
const std::vector<DriverOp>& driver_ops();
// The runner of op `name`, or nullptr.
const DriverOp* find_driver_op(std::string_view name);

// What keeps the two sides one list: each op of the core with no runner or with several, each
// runner of an op the core does not have; one sentence naming the op each, none when they agree.
std::vector<std::string> op_registration_mismatches();

}  // namespace etwh
