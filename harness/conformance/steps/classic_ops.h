// The ops of the classic providers family (harness/conformance/classic_steps.h): register_classic,
// unregister_classic, trace_event, trace_message.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace etwh {

struct ClassicStep {
  std::string provider;
  // The agent request's fields, validated by classic::parse_step.
  nlohmann::json request = nlohmann::json::object();
};

}  // namespace etwh
