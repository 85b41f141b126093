// The driver's run of one case (internal to the driver): CaseRun holds the case's agents,
// sessions and what has been matched so far, runs each step through its family's runner (one
// table, families/driver_families.h) and judges what follows. Each family's runners are its
// folder's <family>_run.cc under harness/conformance/families/: sessions (sessions, enables and the
// callbacks they cause), groups (disallow lists), providers (registration,
// EventProviderEnabled, agents' ends), traits, data_path (writes, consumers, collect), subjects
// (providers under test), classic.
#pragma once

#include "agent_client.h"
#include "harness/conformance/families/classic/classic_steps.h"
#include "harness/conformance/driver.h"
#include "harness/conformance/oracle.h"
#include "harness/model/result.h"
#include "harness/conformance/scenario.h"
#include "harness/conformance/families/subjects/subject_oracle.h"
#include "win32_ops.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace etwh {

// Generous upper bounds, never verdicts: they only keep a broken platform from hanging us.
inline constexpr std::chrono::milliseconds kReplySlack{10000};
inline constexpr std::chrono::milliseconds kCallbackWait{3000};
// Once a case has missed an expected callback it has failed; later waits only collect what is
// in flight, so a platform without callbacks (Wine) or a mutant pays one full wait per case.
inline constexpr std::chrono::milliseconds kCallbackWaitAfterMiss{200};
inline constexpr std::chrono::milliseconds kCollectWait{15000};
// How long an agent may take to answer a ping once a step failed.
inline constexpr std::chrono::milliseconds kPingWait{2000};

// A fault of the harness or the scenario (never a platform verdict).
struct HarnessFault : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct SessionState {
  std::string name;    // the real session name
  std::string handle;  // hex, as replied
  std::string owner;   // "" = the driver, else the agent that started it
  bool running = false;
  std::string log_file;  // a file session's log file (absolute), else empty
};

// What a step's runner gives back: the platform's reply, and whether its status is judged.
struct StepReply {
  nlohmann::json reply;
  bool status_judged = true;
};

class CaseRun {
 public:
  CaseRun(const Case& c, const DriverOptions& options, unsigned index)
      : case_(c), options_(options), index_(index) {}

  ~CaseRun() { cleanup(); }

  CaseOutcome run();

  // Every part below is public: the families' runners (families/<family>/<family>_run.cc) are
  // this class's parts, and their registrations (families/driver_families.h) name them; nothing
  // but the driver includes this header.
  using json = nlohmann::json;
  using milliseconds = std::chrono::milliseconds;

  // --- Common (driver.cc) ---------------------------------------------------------------
  StepLocation location() const;
  // A failed check of the current step (its rule empty: a step that only prepares the case).
  void fail(Finding f);
  // A value observed and recorded, judging nothing.
  void note(std::string text);
  void spawn_agents();
  AgentProcess& agent(const std::string& label);
  // An agent that died without being told to is a crash, whatever the step was.
  void check_agents_alive(const Step& step);
  // Every running agent answers a ping, or the case is a TIMEOUT (AgentError).
  void require_agents_answer();
  json session_request(const std::string& op, const std::string& label, const std::string& via);
  json controller_call(const std::string& via, json req, milliseconds timeout);
  void run_step(const Step& step, const oracle::StepExpectation& e);
  void require_session(const std::string& label);
  void check_status(const oracle::StepExpectation& e, const json& reply);
  // --trace: the agents' callbacks as slices on their threads, each agent a process track.
  void trace_agents() const;
  // --trace: a cumulative count of an agent's, as a counter on its process track.
  void trace_count(const std::string& agent, const std::string& counter, const std::string& series,
                   std::uint64_t value);
  // Stops every session the case started, by name, even those of exited agents.
  void cleanup() noexcept;

  // --- Sessions, enables and their callbacks (families/sessions/sessions_run.cc) -----------------
  std::optional<StepReply> start_session(const Step& step, const oracle::StepExpectation& e);
  std::optional<StepReply> stop_session(const Step& step, const oracle::StepExpectation& e);
  // enable, disable and capture_state, of a provider or a provider group.
  std::optional<StepReply> enable(const Step& step, const oracle::StepExpectation& e);
  std::optional<StepReply> flush_session(const Step& step, const oracle::StepExpectation& e);
  // Waits for the callbacks the oracle expects, then compares them in order per registration.
  // Anything beyond them that has arrived by then is reported as unexpected.
  void check_callbacks(const oracle::StepExpectation& e);
  void missing_callback(const std::string& provider, const oracle::ExpectedCallback& want);
  void compare(const oracle::ExpectedCallback& want, const json& ev);
  // CB-TIMEOUT compares orderings on the system-wide steady clock, never durations.
  void check_timing(const oracle::StepExpectation& e, std::int64_t returned_ns);

  // --- Groups and disallow lists (families/groups/groups_run.cc) ---------------------------------
  std::optional<StepReply> disallow(const Step& step, const oracle::StepExpectation& e);

  // --- Providers and agents (families/providers/providers_run.cc) --------------------------------
  std::optional<StepReply> register_provider(const Step& step, const oracle::StepExpectation& e);
  std::optional<StepReply> unregister_provider(const Step& step, const oracle::StepExpectation& e);
  // query_enabled: EventProviderEnabled against the oracle (no status to judge).
  std::optional<StepReply> query_enabled(const Step& step, const oracle::StepExpectation& e);
  std::optional<StepReply> exit_agent(const Step& step, const oracle::StepExpectation& e);
  std::optional<StepReply> kill_agent(const Step& step, const oracle::StepExpectation& e);

  // --- Traits (families/traits/traits_run.cc) ----------------------------------------------------
  std::optional<StepReply> set_traits(const Step& step, const oracle::StepExpectation& e);

  // --- Data path and consumers (families/data_path/data_path_run.cc) -----------------------------
  std::optional<StepReply> consume(const Step& step, const oracle::StepExpectation& e);
  std::optional<StepReply> write(const Step& step, const oracle::StepExpectation& e);
  // last_error: the call fails as its page says, and the thread's last error is the reply's
  // status (checked against the oracle's).
  std::optional<StepReply> last_error(const Step& step, const oracle::StepExpectation& e);
  // consume before its session's start: OpenTrace only; start_session then has the agent's
  // ProcessTrace attach (CON-OPEN-BEFORE-START).
  void attach_early_consumers(const std::string& session);
  // The real name of the session `label` of this case (what its start step starts).
  std::string session_name(const std::string& label) const;
  // collect: ends the consumers and judges them (consumer_judge.h), then the callbacks.
  std::optional<StepReply> collect_step(const Step& step, const oracle::StepExpectation& e);
  // Trace files (families/trace_files/trace_files_run.cc)
  std::optional<StepReply> read_file(const Step& step, const oracle::StepExpectation& e);
  // At the end of the case, whatever its outcome: removes every file its sessions were given
  // (a NEWFILE session's numbered files, an APPEND session's case file), and only those.
  void remove_log_files() noexcept;
  // One agent call per entry of the event set; EventEnabled and EventProviderEnabled are asked
  // first, for that entry's descriptor, where the oracle can tell what they must say.
  json write_events(const Step& step, const oracle::StepExpectation& e);
  // Ends every consumer: stops their sessions (ProcessTrace then returns with all that was
  // committed), takes each consumer's records and judges them against the oracle's.
  void collect(const oracle::StepExpectation& e);

  // --- Providers under test (families/subjects/subjects_run.cc,
  // families/subjects/subject_oracle.h)
  // ----------------- subject_write and inject_callback.
  std::optional<StepReply> subject(const Step& step, const oracle::StepExpectation& e);
  // The GUID a controller call names: a subject's own, else the case's.
  std::string wire_guid(const std::string& provider) const;
  json register_subject(const ProviderDef& p);
  void subject_step(const Step& step);
  // CB-FAST: a callback slower than the scenario's budget for that provider.
  void check_budget(const ProviderDef& p, const std::string& which, std::int64_t duration_ns);
  void check_callback_budgets();
  // Sets aside a record of a provider under test (judged by judge_subjects); true if it was one.
  bool subject_record(const std::string& consumer, const json& r);
  // What the providers under test wrote, from one consumer each (several consumers of one
  // provider received copies of the same events).
  std::vector<SubjectEvent> subject_events() const;
  // What each consumer received from each provider under test, against subject_oracle.
  void judge_subjects(const oracle::StepExpectation& e);

  // --- Classic providers (families/classic/classic_run.cc, classic_steps.h) ----------------------
  std::optional<StepReply> classic_step(const Step& step, const oracle::StepExpectation& e);
  // What classic_steps.cc needs of this run.
  classic::DriverHooks classic_hooks();

  const Case& case_;
  const DriverOptions& options_;
  unsigned index_;
  Controller controller_;
  std::map<std::string, std::unique_ptr<AgentProcess>> agents_;
  std::set<std::string> gone_;
  std::map<std::string, SessionState> sessions_;
  std::set<std::string> started_names_;
  std::map<std::string, std::size_t> consumed_;          // provider label -> callbacks matched
  std::map<std::string, std::size_t> seen_by_agent_;     // agent -> callbacks seen
  std::map<std::string, std::string> traits_;            // provider -> the blob it set (hex)
  std::map<std::string, std::uint64_t> written_failed_;  // provider -> EventWrite failures
  std::map<std::string, std::uint64_t> written_traced_;  // provider -> events written (--trace)
  // session -> (agent, consumer) opened before the session started, in step order
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> early_consumers_;
  std::map<std::string, std::string> subject_guids_;  // subject provider -> its real GUID
  std::map<std::string, subject::Description> subject_descriptions_;
  // consumer -> subject provider -> its records, in arrival order
  std::map<std::string, std::map<std::string, std::vector<json>>> subject_records_;
  std::map<std::string, std::size_t> budget_checked_;  // subject provider -> callbacks judged
  std::vector<Finding> failures_;
  milliseconds callback_wait_ = kCallbackWait;  // see kCallbackWaitAfterMiss
  std::vector<Finding> notes_;
  const Step* current_ = nullptr;
  std::size_t current_index_ = 0;
  std::int64_t returned_ns_ = 0;  // when the current step's call returned (CB-TIMEOUT)
  classic::Run classic_;
};

// The steady clock, in ns, as the agents stamp their callbacks.
std::int64_t now_ns();

}  // namespace etwh
