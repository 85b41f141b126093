// The scenario loader's parts (internal to the loader: scenario.cc and the families' parsers):
// Reader walks one file's JSON and throws InputError at a JSON pointer; CaseParser builds a
// Case, each step parsed by its op's registration (families/core_families.h).
#pragma once

#include "harness/model/input_error.h"
#include "harness/model/json_text.h"
#include "harness/conformance/scenario.h"
#include "win32_text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <set>
#include <string>
#include <vector>

namespace etwh::scenario_parse {

using nlohmann::json;

// Escapes a key for use in a JSON pointer (RFC 6901).
std::string pointer_token(const std::string& key);

// Walks one file's JSON and throws InputError with its name and the pointer.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& pointer, const std::string& reason) const {
    throw InputError(file_, pointer.empty() ? "/" : pointer, reason);
  }

  const json& object(const json& v, const std::string& pointer,
                     std::initializer_list<const char*> allowed) const {
    if (!v.is_object()) fail(pointer, "expected an object, got " + json_type_name(v));
    for (const auto& [k, ignored] : v.items()) {
      if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return k == a; })) {
        fail(pointer + "/" + pointer_token(k), "unknown field \"" + k + "\"");
      }
    }
    return v;
  }

  const json& field(const json& obj, const std::string& pointer, const char* name) const {
    auto it = obj.find(name);
    if (it == obj.end()) fail(pointer, std::string("missing field \"") + name + "\"");
    return *it;
  }

  std::string string(const json& v, const std::string& pointer) const {
    if (!v.is_string()) fail(pointer, "expected a string, got " + json_type_name(v));
    return v.get<std::string>();
  }

  bool boolean(const json& v, const std::string& pointer) const {
    if (!v.is_boolean()) fail(pointer, "expected a boolean, got " + json_type_name(v));
    return v.get<bool>();
  }

  std::string label(const json& v, const std::string& pointer) const {
    std::string s = string(v, pointer);
    if (s.empty()) fail(pointer, "empty label");
    return s;
  }

  std::uint64_t integer(const json& v, const std::string& pointer, std::uint64_t max,
                        const char* what) const {
    if (!v.is_number_integer()) {
      fail(pointer, "expected an integer, got " + json_type_name(v));
    }
    if (v.is_number_unsigned()) {
      const std::uint64_t u = v.get<std::uint64_t>();
      if (u > max) {
        fail(pointer, std::string(what) + " " + std::to_string(u) + " > " + std::to_string(max));
      }
      return u;
    }
    const std::int64_t i = v.get<std::int64_t>();
    if (i < 0) fail(pointer, std::string(what) + " " + std::to_string(i) + " is negative");
    if (static_cast<std::uint64_t>(i) > max) {
      fail(pointer, std::string(what) + " " + std::to_string(i) + " > " + std::to_string(max));
    }
    return static_cast<std::uint64_t>(i);
  }

  std::uint64_t hex64(const json& v, const std::string& pointer, const char* what) const {
    const std::string s = string(v, pointer);
    auto parsed = parse_hex(s);
    if (!parsed) {
      const bool hex_digits = s.size() > 2 && s.rfind("0x", 0) == 0 &&
                              s.find_first_not_of("0123456789abcdefABCDEF", 2) == std::string::npos;
      fail(pointer, std::string(what) + " \"" + s + "\"" +
                        (hex_digits ? " is out of range (more than 64 bits)"
                                    : " is not a \"0x\"-prefixed hex value"));
    }
    return *parsed;
  }

  GUID guid(const json& v, const std::string& pointer) const {
    const std::string s = string(v, pointer);
    auto g = parse_guid(s);
    if (!g) fail(pointer, "malformed GUID \"" + s + "\"");
    return *g;
  }

  std::vector<std::uint8_t> bytes(const json& v, const std::string& pointer) const {
    const std::string s = string(v, pointer);
    auto b = hex_to_bytes(s);
    if (!b) fail(pointer, "malformed hex bytes \"" + s + "\"");
    return *b;
  }

 private:
  std::string file_;
};

// What one case may ask for (scenarios/README.md): a file can make no run without end.
inline constexpr std::size_t kMaxAgentsPerCase = 16;
inline constexpr std::size_t kMaxSessionsPerCase = 64;  // Windows' limit of loggers at once
inline constexpr std::uint64_t kMaxEventsPerCase = 1000000;

class CaseParser {
 public:
  CaseParser(const Reader& r, const std::set<std::string>& known_rules, std::string file)
      : r_(r), known_rules_(known_rules), file_(std::move(file)) {}

  Case parse(const json& v, const std::string& p);

  // --- What the families' parsers use (families/<family>/<family>_core.cc) ----------------
  const Reader& reader() const { return r_; }
  const std::string& file() const { return file_; }
  // The label `step[name]` names: an agent, provider or session of `c` (else InputError).
  std::string ref(const json& step, const std::string& p, const char* name, const Case& c);
  // A consumer label of case `c`: false when the case already has one by that name.
  bool new_consumer(const Case& c, const std::string& label) {
    return consumers_.insert(c.id + "\n" + label).second;
  }
  // Counts `n` more events written by the case being read; returns the case's total so far.
  std::uint64_t add_case_events(std::uint64_t n) { return case_events_ += n; }

 private:
  // --- The case (scenario.cc) ------------------------------------------------------------
  void parse_rules(const json& v, const std::string& p, Case& c);
  // Lint rules only: the names of the rules a linter must report for this case.
  void parse_expect_lint(const json& v, const std::string& p, Case& c);
  void parse_agents(const json& v, const std::string& p, Case& c);
  bool has_agent(const Case& c, const std::string& a) const;
  void parse_providers(const json& v, const std::string& p, Case& c);
  void parse_sessions(const json& v, const std::string& p, Case& c);
  void check_writes_registered(const Case& c);
  // A provider under test: the user's code registers it (context and callback are theirs). Its
  // GUID is the subject's; the case's `guid`, if any, only keys it in the oracle.
  void parse_subject_provider(const json& def, const std::string& pp, Case& c, ProviderDef& d);
  // A step: its op's registration (families/core_families.h) parses its fields; then what
  // every op may have (`via`, `expect`).
  Step parse_step(const json& v, const std::string& p, const Case& c);
  void parse_expect(const json& v, const std::string& p, Step& s);

  const Reader& r_;
  const std::set<std::string>& known_rules_;
  std::string file_;
  std::set<std::string> consumers_;  // "<case id>\n<consumer label>"
  std::uint64_t case_events_ = 0;    // written by the write steps of the case being read
};

}  // namespace etwh::scenario_parse
