// The driver: runs one scenario case against the platform. Agents are child processes
// (AgentProcess), the driver is the controller in-process (Controller) unless a step goes
// "via" an agent. Observations are compared with the oracle's expectations; every failed
// check names the rule, the expected and the observed value.
#pragma once

#include "harness/conformance/lint.h"
#include "harness/model/result.h"
#include "harness/conformance/scenario.h"
#include "harness/report/trace/trace.h"

#include <filesystem>
#include <cstdint>
#include <map>
#include <string>

namespace etwh {

struct DriverOptions {
  std::filesystem::path agent;
  // Prefix of every real session name of this run, so that parallel runs never collide.
  std::string session_prefix;
  // The agent of agents marked "subject": a provider under test (providers/adapter/).
  std::filesystem::path subject;
  // `--trace`: the timeline the run adds its cases, steps, controller calls and the agents'
  // callbacks to (harness/report/trace/); null: none.
  trace::Trace* trace = nullptr;
};

// One event a provider under test wrote, as a consumer received it (lint judges these).
struct SubjectEvent {
  std::string provider;  // label in the case
  lint::Descriptor descriptor;
};

struct CaseOutcome {
  Status status = Status::kPass;  // PASS, FAIL, TIMEOUT, CRASH or HARNESS_ERROR
  // The failed checks of the step that failed the case, then the values only observed (notes).
  std::vector<Finding> findings;
  std::string fault;        // what ended the case early (TIMEOUT, CRASH, HARNESS_ERROR)
  StepLocation fault_step;  // the step it happened in (no index: while setting the case up)
  // The case's rules it stopped before judging (CaseResult::unreached).
  std::vector<std::string> unreached;
  double duration_s = 0;
  // Per provider under test, the events of the first consumer that received any of its.
  std::vector<SubjectEvent> subject_events;
  // Per provider under test (its label), the lint findings it says it means.
  std::map<std::string, std::vector<lint::Intent>> intended_lint;
};

// The calling thread's track in a --trace timeline: this process, one thread id per driving thread.
trace::Track driver_track();

class Driver {
 public:
  // Throws std::runtime_error naming the cause when the platform cannot be used here (etwrt:
  // a bad ETWRT_HOME, a broker that cannot be reached), before any case runs.
  explicit Driver(DriverOptions options);

  // Runs `c` and cleans up after it (stops every session it started, ends its agents),
  // whatever happened. A case during which the etwrt broker died or restarted is a
  // HARNESS_ERROR naming that, whatever its checks said.
  CaseOutcome run(const Case& c);

 private:
  DriverOptions options_;
  unsigned case_counter_ = 0;
};

}  // namespace etwh
