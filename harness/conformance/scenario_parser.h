// The scenario loader's parts (internal to scenario.cc and scenario_steps.cc): Reader walks
// one file's JSON and throws InputError at a JSON pointer; CaseParser builds a Case, its steps
// through one table of ops (scenario_steps.cc), each op parsed by its family's function.
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

 private:
  // A step op's parser: fills `s` from `v` at pointer `p`.
  using OpParser = void (CaseParser::*)(const json& v, const std::string& p, Step& s,
                                        const Case& c);
  struct Op {
    const char* name;  // as in scenario files
    StepOp op;
    OpParser parse;
  };
  // Every op, with its family's parser (scenario_steps.cc).
  static const std::vector<Op>& ops();

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
  std::string ref(const json& step, const std::string& p, const char* name, const Case& c);

  // --- Steps, by family (scenario_steps.cc) -----------------------------------------------
  Step parse_step(const json& v, const std::string& p, const Case& c);
  // start, stop, enable, disable, capture_state, flush
  void parse_session_step(const json& v, const std::string& p, Step& s, const Case& c);
  // register, unregister, query_enabled, exit_agent, kill_agent
  void parse_provider_step(const json& v, const std::string& p, Step& s, const Case& c);
  void parse_set_traits(const json& v, const std::string& p, Step& s, const Case& c);
  // write, collect (consume: parse_consume)
  void parse_data_step(const json& v, const std::string& p, Step& s, const Case& c);
  void parse_classic_step(const json& v, const std::string& p, Step& s, const Case& c);
  // subject_write and inject_callback name a provider under test.
  void parse_subject_step(const json& v, const std::string& p, Step& s, const Case& c);
  void parse_expect(const json& v, const std::string& p, Step& s);
  void parse_traits(const json& v, const std::string& p, TraitsStep& s);
  void parse_filters(const json& v, const std::string& p, std::vector<FilterDef>& filters);
  // Level, keywords, SourceId, api, timeout: the controller call's arguments.
  void parse_call(const json& v, const std::string& p, StepOp op, ControlStep& s, bool needs_level);
  void parse_consume(const json& v, const std::string& p, Step& s, const Case& c);
  // last_error: `api` (OpenTrace, GetTraceLoggerHandle, GetTraceEnableLevel or
  // GetTraceEnableFlags) called in `agent`.
  void parse_last_error(const json& v, const std::string& p, Step& s, const Case& c);
  void parse_events(const json& v, const std::string& p, WriteStep& s);
  void parse_typed(const json& v, const std::string& p, EventDef& e);
  // enable / disable: a provider label, or a provider group's GUID (groups).
  void parse_target(const json& v, const std::string& p, ControlStep& s, const Case& c);
  // disallow: TraceSetDisallowList of `session` with the GUIDs of `providers` (labels).
  void parse_disallow(const json& v, const std::string& p, Step& s, const Case& c);

  const Reader& r_;
  const std::set<std::string>& known_rules_;
  std::string file_;
  std::set<std::string> consumers_;  // "<case id>\n<consumer label>"
  std::uint64_t case_events_ = 0;    // written by the write steps of the case being read
};

}  // namespace etwh::scenario_parse
