// Judging one realtime consumer: what consume_stop says it received, against the oracle's
// ConsumerExpectation. ProcessTrace's return, the header event first, UserContext, order, each
// expected event exactly once with its fields and traits, nothing excluded, and the loss
// accounting of a lossy consumer (CON-*, FLT-*, TR-IN-EVENTS, and the rule of each event).
#pragma once

#include "harness/conformance/oracle.h"
#include "harness/model/result.h"
#include "harness/conformance/scenario.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace etwh {

// What the judge needs of the running case.
struct ConsumerFacts {
  const Case* c = nullptr;
  // provider label -> the traits blob it set, as hex
  const std::map<std::string, std::string>* traits = nullptr;
  // The process ID of an agent still running; nullopt once it ended.
  std::function<std::optional<int>(const std::string& agent)> pid_of;
  // Sets aside a record of a provider under test (judged apart); true if it was one.
  std::function<bool(const nlohmann::json& record)> set_aside;
};

struct ConsumerVerdict {
  std::vector<Finding> failures;   // one per rule and kind of mismatch, with a few examples
  std::vector<std::string> notes;  // counts and values recorded, not judged
};

// `reply` is the agent's consume_stop reply; `properties` the session's ControlTrace
// properties when it was stopped.
ConsumerVerdict judge_consumer(const oracle::ConsumerExpectation& want, const nlohmann::json& reply,
                               const nlohmann::json& properties, const ConsumerFacts& facts);

}  // namespace etwh
