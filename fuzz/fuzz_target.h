// What every fuzz target of fuzz/ shares: the libFuzzer entry point's signature, and how a
// target reports a finding. A finding aborts, so that libFuzzer (or fuzz_replay_main.cc in a
// normal build) saves the input and fails; bad input that gets its documented error is not one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <typeinfo>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace etwh::fuzz {

// Reports what went wrong and aborts: the caller's input is a finding.
[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz finding: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

// For a catch (...) or catch (const std::exception&) after the documented error type: an
// exception of any other type escaped the code under test.
[[noreturn]] inline void unexpected_exception(const std::exception& e) {
  finding(std::string("undocumented exception ") + typeid(e).name() + ": " + e.what());
}

// A documented error must name the input first ("<file>: <where>: reason").
// InputError's format: "<file>: ..." or "<file>:<line>:<col>: ...".
inline void expect_names_file(std::string_view message, std::string_view file) {
  const bool named = message.substr(0, file.size()) == file &&
                     (message.substr(file.size(), 2) == ": " ||
                      (message.size() > file.size() + 1 && message[file.size()] == ':' &&
                       message[file.size() + 1] >= '0' && message[file.size() + 1] <= '9'));
  if (!named) {
    finding("error message does not start with \"" + std::string(file) + ": \" or \"" +
            std::string(file) + ":<line>:<col>: \": " + std::string(message));
  }
}

inline std::string as_text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

}  // namespace etwh::fuzz
