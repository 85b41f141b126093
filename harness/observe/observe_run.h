// `etwh observe`'s run: starts the program with the observation channel, walks each provider
// that registers through the schedule (as controller and consumer), waits for the program to end
// (or stops it after the timeout), and judges what it recorded (judge.h). Linux only.
#pragma once

#include "harness/model/catalog.h"
#include "harness/model/result.h"
#include "harness/observe/schedule.h"

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace etwh::observe {

// The check of the per-session accounting findings in the case observe/program: expected is
// what the observation says was written to the session, observed its delivered + lost, evidence
// the session's name.
inline constexpr char kAccountingCheck[] = "accounting";

struct ObserveOptions {
  std::filesystem::path program;
  std::vector<std::string> args;
  Schedule schedule;
  std::string schedule_file;
  const Catalog* catalog = nullptr;
  std::chrono::milliseconds timeout{60000};  // the whole program's run
  bool echo_output = false;                  // -v: the program's output on stdout as well
};

// The program's case ("observe/program": how it ended, its output, what the observation lost,
// the sessions' accounts) first, then one case per provider. Needs ETWRT_HOME (a private home).
std::vector<CaseResult> observe_program(const ObserveOptions& options);

}  // namespace etwh::observe
