// Steps built in code for the unit tests: the body each op has (its registration's default,
// families/core_families.h), with its session and provider set where the op has them.
#pragma once

#include "harness/conformance/families/core_families.h"
#include "harness/conformance/scenario.h"

#include <stdexcept>
#include <string>
#include <string_view>

namespace etwh::test {

inline StepBody body_for(std::string_view op, const std::string& session,
                         const std::string& provider) {
  const CoreOp* registered = find_core_op(op);
  if (registered == nullptr) throw std::logic_error("no op \"" + std::string(op) + "\"");
  return registered->default_body(session, provider);
}

inline Step make_step(std::string_view op, const std::string& session = "",
                      const std::string& provider = "") {
  Step s;
  s.op = find_core_op(op) != nullptr ? find_core_op(op)->name : op;
  s.body = body_for(op, session, provider);
  return s;
}

// The body of a test's step, to set or read its fields (throws if it has another).
template <class T>
T& body(Step& s) {
  if (T* b = s.body.get_if<T>()) return *b;
  throw std::logic_error("step " + std::string(s.op) + " has other fields");
}
template <class T>
const T& body(const Step& s) {
  return step_body<T>(s);
}

}  // namespace etwh::test
