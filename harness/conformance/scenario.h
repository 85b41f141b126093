// The scenario model and its loader: conformance cases as data (scenarios/README.md describes
// the JSON format). Loading checks everything it can before anything runs, and reports bad
// input as InputError "<file>:<line>:<col>: <JSON pointer>: reason".
#pragma once

#include "harness/model/input_error.h"

#include <windows.h>

#include <nlohmann/json.hpp>

#include <any>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace etwh {

struct ProviderDef {
  std::string label;
  std::string agent;
  GUID guid{};
  std::uint64_t context = 0;
  bool has_callback = true;  // false: EventRegister with a NULL callback
  std::uint32_t delay_ms = 0;
  // A provider under test (its agent is a subject): registered by the user's code, its GUID
  // is the subject's own (`guid` only stands in for it in the case).
  bool subject = false;
  std::uint32_t callback_budget_ms = 0;  // CB-FAST: each callback must be quicker (0: unjudged)
};

struct SessionDef {
  std::string label;
  // Extra StartTraceA settings, passed as-is to start_session (buffer_size_kb, ...).
  nlohmann::json settings = nlohmann::json::object();
  // A file session: the name of its log file in the run's temporary folder (empty: realtime).
  std::string log_file;

  // The session's clock, Wnode.ClientContext (`client_context`, WNODE_HEADER): 1 QPC (also
  // what 0, the documented default, means), 2 system time, 3 CPU cycle counter.
  std::uint32_t clock() const {
    const std::uint32_t c =
        settings.is_object() ? settings.value("client_context", std::uint32_t{1}) : 1;
    return c == 0 ? 1 : c;
  }
};

// A status the step must return, when the oracle cannot know it.
struct ExplicitStatus {
  bool nonzero = false;     // any failure status
  std::uint32_t value = 0;  // the exact status, when !nonzero
};

// A step's own fields: one struct per op (or per set of ops with the same fields), defined in
// its family's header (families/<family>/<family>_ops.h). Type-erased, so that a new op's struct
// stays in its family and this header needs none of theirs (a new op rebuilds the files that
// include its family's header, not every user of a scenario): read it with get_if<T> (nullptr
// when it holds another), or step_body<T> where the op fixes the type.
class StepBody {
 public:
  StepBody() = default;
  template <class T>
  requires(!std::is_same_v<std::decay_t<T>, StepBody>)
      StepBody(T&& body) {  // NOLINT(google-explicit-constructor): `s.body = SessionStep{...}`
    emplace<std::decay_t<T>>(std::forward<T>(body));
  }

  template <class T, class... Args>
  T& emplace(Args&&... args) {
    labels_ = &labels_of<T>;
    return value_.emplace<T>(std::forward<Args>(args)...);
  }
  template <class T>
  const T* get_if() const {
    return std::any_cast<T>(&value_);
  }
  template <class T>
  T* get_if() {
    return std::any_cast<T>(&value_);
  }
  template <class T>
  bool holds() const {
    return get_if<T>() != nullptr;
  }
  bool empty() const { return !value_.has_value(); }
  // The provider label and the session label the body names ("" where it has none).
  const std::string& provider() const { return *labels_(value_).provider; }
  const std::string& session() const { return *labels_(value_).session; }

 private:
  // The labels a body names: its provider and session fields, or "" for each it lacks.
  struct Labels {
    const std::string* provider;
    const std::string* session;
  };
  static Labels no_labels(const std::any&) {
    static const std::string empty;
    return {&empty, &empty};
  }
  template <class T>
  static Labels labels_of(const std::any& v) {
    const T& b = *std::any_cast<T>(&v);
    Labels labels = no_labels(v);
    if constexpr (requires { b.provider; }) labels.provider = &b.provider;
    if constexpr (requires { b.session; }) labels.session = &b.session;
    return labels;
  }

  std::any value_;
  Labels (*labels_)(const std::any&) = &no_labels;
};

struct Step {
  // The op's name as in scenario files ("start", "enable", ...): one of the ops::k* constants of
  // the families' <family>_ops.h, which the registrations (op_registry.h) are keyed by.
  std::string_view op;
  std::string pointer;  // JSON pointer of the step in its file, for messages
  std::string via;      // controller steps: run in this agent instead of the driver
  std::optional<ExplicitStatus> expect_status;
  StepBody body;
};

// The body of `step` as T, the alternative its op has. Throws std::logic_error when it has
// another (a harness bug, never bad input).
template <class T>
const T& step_body(const Step& step) {
  if (const T* b = step.body.get_if<T>()) return *b;
  throw std::logic_error("step " + step.pointer + " (" + std::string(step.op) +
                         ") has no such fields");
}

// The provider label a step names (empty if none) and its session (empty if none), whatever
// its op: for the replays that follow one provider or session through every step.
const std::string& step_provider(const Step& step);
const std::string& step_session(const Step& step);

struct Case {
  std::string id;
  std::string file;
  std::string pointer;
  std::vector<std::string> rules;
  std::string description;
  std::vector<std::string> agents;       // labels, in file order
  std::set<std::string> subject_agents;  // agents that run the provider under test
  std::map<std::string, ProviderDef> providers;
  std::map<std::string, SessionDef> sessions;
  std::vector<Step> steps;
  // Lint rules that must fire on this case's steps, and no other (harness/conformance/lint.h);
  // unset: lint findings do not judge the case.
  std::optional<std::vector<std::string>> expect_lint;
};

// Loads one scenario file. `known_rules` is the catalog's ID set. Throws InputError.
std::vector<Case> load_scenario_file(const std::filesystem::path& file,
                                     const std::set<std::string>& known_rules);

// Same, from text already in memory (`file` only names it in messages).
std::vector<Case> load_scenario_text(const std::string& text, const std::string& file,
                                     const std::set<std::string>& known_rules);

// Loads several files (directories expand to their *.json, sorted) and rejects a case id used
// twice across them. Throws InputError on the first problem.
std::vector<Case> load_scenarios(const std::vector<std::filesystem::path>& paths,
                                 const std::set<std::string>& known_rules);

}  // namespace etwh
