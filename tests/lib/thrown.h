// For unit tests: what an exception a call throws says, so that a test compares messages as
// text ("<file>:<line>:<col>: <pointer>: <reason>") instead of writing a try/catch each time.
#pragma once

#include <string>
#include <utility>

namespace etwh::test_support {

// text_of(e) for the `Error` that `call()` throws, or `none` when it returns.
template <class Error, class Call, class TextOf>
std::string thrown_as(Call&& call, TextOf&& text_of, std::string none = "(no error)") {
  try {
    std::forward<Call>(call)();
  } catch (const Error& e) {
    return text_of(e);
  }
  return none;
}

// The what() of the `Error` that `call()` throws, or `none` when it returns.
template <class Error, class Call>
std::string thrown(Call&& call, std::string none = "(no error)") {
  return thrown_as<Error>(
      std::forward<Call>(call), [](const Error& e) { return std::string(e.what()); },
      std::move(none));
}

}  // namespace etwh::test_support
