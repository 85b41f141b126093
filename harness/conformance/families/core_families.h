// The core side of every op (etwh_core: pure, no platform): its name, its parser, its part of
// the oracle and the body unit tests build. Each step family registers its ops in its folder
// (families/<family>/<family>_core.cc); core_ops() is their concatenation
// (core_families.cc), which the loader, the oracle and the tests read. The driver's side of the
// same ops (their runners) is driver_families.h.
#pragma once

#include "harness/conformance/oracle_model.h"
#include "harness/conformance/scenario.h"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace etwh {

namespace scenario_parse {
class CaseParser;
}

struct CoreOp {
  // Checks the step's JSON `v` at pointer `p` of case `c` and sets `s.body`; throws InputError.
  using Parse = void (*)(scenario_parse::CaseParser& parser, const nlohmann::json& v,
                         const std::string& p, Step& s, const Case& c);
  // The oracle's part: what the step must do given the replay so far, which it updates.
  using Expect = void (*)(oracle::detail::Model& model, const Step& step,
                          oracle::StepExpectation& e);
  // A body for unit tests: the op's struct, its session and provider set where it has them.
  using DefaultBody = StepBody (*)(const std::string& session, const std::string& provider);

  std::string_view name;  // as in scenario files: its family's ops::k* constant
  Parse parse = nullptr;
  Expect expect = nullptr;  // nullptr: judged by its family's pass over the whole case
  DefaultBody default_body = nullptr;
};

// An op whose fields are `Body`.
template <class Body>
CoreOp core_op(std::string_view name, CoreOp::Parse parse, CoreOp::Expect expect) {
  return {name, parse, expect, [](const std::string& session, const std::string& provider) {
            Body b{};
            if constexpr (requires { b.session; }) b.session = session;
            if constexpr (requires { b.provider; }) b.provider = provider;
            return StepBody(std::move(b));
          }};
}

// An expectation hook that is a part of the oracle's replay (oracle_model.h).
template <void (oracle::detail::Model::*Part)(const Step&, oracle::StepExpectation&)>
void model_part(oracle::detail::Model& model, const Step& step, oracle::StepExpectation& e) {
  (model.*Part)(step, e);
}

// Each family's registration, in its folder (family_core.h).
namespace family_core {
std::vector<CoreOp> sessions_core_ops();
std::vector<CoreOp> groups_core_ops();
std::vector<CoreOp> providers_core_ops();
std::vector<CoreOp> traits_core_ops();
std::vector<CoreOp> data_path_core_ops();
std::vector<CoreOp> classic_core_ops();
std::vector<CoreOp> subjects_core_ops();
std::vector<CoreOp> trace_files_core_ops();
}  // namespace family_core

// Every op, by family (core_families.cc). Each name once (else std::logic_error naming it).
const std::vector<CoreOp>& core_ops();
// The op named `name`, or nullptr.
const CoreOp* find_core_op(std::string_view name);

}  // namespace etwh
