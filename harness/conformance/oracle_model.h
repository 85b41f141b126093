// The oracle's replay of a case (internal to oracle*.cc): Model holds who enables which
// provider, who is registered and each session's data path, and answers each step with its
// expectation. Each family's part is in its folder (families/<family>/<family>_oracle.cc):
// sessions, enables and callbacks; providers and agents; traits; the data path; provider groups and
// disallow lists. Classic providers and providers under test have their own passes
// (classic_steps.h, subject_oracle.h).
#pragma once

#include "harness/conformance/oracle.h"
#include "harness/conformance/scenario.h"
#include "harness/conformance/families/data_path/event_def.h"
#include "harness/conformance/families/sessions/filter_def.h"

#include <windows.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace etwh::oracle::detail {

inline constexpr GUID kNullGuid{};

struct Enable {
  SessionEnable settings;
  bool has_filter = false;
  // EVENT_FILTER_TYPE_EVENT_ID given: FilterIn and the IDs (applied per session on delivery).
  std::optional<std::pair<bool, std::set<std::uint16_t>>> event_ids;
  bool via_group = false;  // derived from a group enable (GRP-ENABLE)
  bool ids_ignored =
      false;  // the group enable gave event ID filters, not applied (GRP-NO-ID-FILTERS)
};

bool same_enable(const Enable& a, const Enable& b);

// A filter descriptor bound for the provider's callback (not one the platform applies).
bool provider_bound(const FilterDef& f);

// EVENT_FILTER_EVENT_ID bytes: FilterIn (BOOLEAN), Reserved, Count (USHORT), Events[Count].
std::optional<std::pair<bool, std::set<std::uint16_t>>> event_id_filter(
    const std::vector<FilterDef>& filters);

// The replayed world: who enables which provider GUID, who is registered.
class Model {
 public:
  explicit Model(const Case& c) : case_(c) {}

  StepExpectation apply(const Step& step);

  // Every part below is public: the families' oracle parts (families/<family>/<family>_oracle.cc)
  // are this class's, and their registrations (families/core_families.h) name them.
  using SessionMap = std::map<std::string, Enable>;  // session label -> its enable

  struct SessionData {
    bool consumer_attached = false;       // a consumer has attached since the start
    std::vector<ExpectedEvent> buffered;  // for the first consumer (CON-RT-BUFFERED)
    std::map<std::uint64_t, Exclusion> buffered_excluded;
    std::vector<std::string> consumers;  // active consumer labels
  };

  // --- Sessions, enables and callbacks (families/sessions/sessions_oracle.cc) ---------------
  std::string key(const std::string& provider) const;
  std::vector<SessionEnable> settings_of(const SessionMap& m) const;
  static bool any_filter(const SessionMap& m);
  // Registrations that receive callbacks for `guid_key`, by label.
  std::vector<const ProviderDef*> listeners(const std::string& guid_key) const;
  // Appends the callbacks every listener gets after a change of `guid_key`'s sessions.
  void notify_change(const std::string& guid_key, StepExpectation& e,
                     const std::string& is_enabled_rule, const std::string& cause,
                     const GUID& source, const std::string& source_rule);
  // The callback `p` gets when the sessions enabling it become `m`.
  void push_callback(const ProviderDef& provider, const SessionMap& m, StepExpectation& e,
                     const std::string& is_enabled_rule, const std::string& cause,
                     const GUID& source, const std::string& source_rule);
  // CB-TIMEOUT: what the return of a controller call must look like given the callbacks' delays.
  void timing(const Step& step, StepExpectation& e);
  void start(const Step& step, StepExpectation& e);
  void stop(const Step& step, StepExpectation& e);
  // The SourceId a callback must carry for a controller call, and the rule behind it.
  static std::pair<GUID, std::string> expected_source(const Step& step);
  void enable(const Step& step, StepExpectation& e);
  void disable(const Step& step, StepExpectation& e);
  void capture_state(const Step& step, StepExpectation& e);
  void flush(const Step& step, StepExpectation& e);

  // --- Providers and agents (families/providers/providers_oracle.cc) ------------------------
  void do_register(const Step& step, StepExpectation& e);
  void unregister(const Step& step, StepExpectation& e);
  void query_enabled(const Step& step, StepExpectation& e);
  // exit_agent, kill_agent: the agent's registrations are gone.
  void agent_gone(const Step& step, StepExpectation& e);

  // --- Traits (families/traits/traits_oracle.cc) ---------------------------------------------
  void set_traits(const Step& step, StepExpectation& e);

  // Whether the case checks `rule` (oracle.cc).
  bool case_has(const std::string& rule) const;

  // --- Data path (families/data_path/data_path_oracle.cc) ----------------------------------
  // An event a session takes has passed every filter test at once (level, keyword, keyword 0,
  // MatchAny 0): its delivery checks each of those rules, and is blamed on the one the case is
  // about. (A dropped event has one deciding rule: filter_rule's.)
  std::string delivery_rule(const std::string& deciding) const;
  // The rule a wrong EventEnabled answer for an event of `lk` violates, given every session's
  // enable of its provider.
  std::string enabled_rule(const std::vector<SessionEnable>& all,
                           const EventLevelKeyword& lk) const;
  // Which filter rule decides whether `s` takes `ev`.
  static std::string filter_rule(const SessionEnable& s, const EventLevelKeyword& ev);
  void consume(const Step& step, StepExpectation& e);
  void last_error(const Step& step, StepExpectation& e);
  void write(const Step& step, StepExpectation& e);
  bool deliver(const Step& step, const EventDef& def, std::uint64_t seq, const std::string& session,
               const SessionMap& m);
  void collect(const Step& step, StepExpectation& e);

  // --- Trace files (families/trace_files/trace_files_oracle.cc)
  // read_file: stops the session; its log file must hold what it took, as the rules say.
  void read_file(const Step& step, StepExpectation& e);
  // An APPEND session's stop: what it took stays in its log file for the next session that
  // appends to it (ETL-APPEND).
  void keep_appended(const std::string& session);
  // StartTrace refuses APPEND with CIRCULAR, NEWFILE, REAL_TIME or PRIVATE_LOGGER (ETL-APPEND).
  bool refused_append(const std::string& session, StepExpectation& e) const;

  // --- Provider groups and disallow lists (families/groups/groups_oracle.cc) ----------------
  // The sessions enabling registration `label`: its GUID's own
  // enables, plus the group enable of each session that enabled the group its traits named, unless
  // that session enables the GUID directly or disallows it (GRP-ENABLE, GRP-DISALLOW). Event ID
  // filters given with a group enable do not apply (GRP-NO-ID-FILTERS).
  SessionMap effective(const std::string& label) const;
  bool disallowed_group(const std::string& session, const std::string& label) const;
  // The sessions enabling each registered provider with a callback, to compare after a change.
  std::map<std::string, SessionMap> snapshot() const;
  // One callback to every registration whose enabling sessions changed since `before`.
  void notify_diff(const std::map<std::string, SessionMap>& before, StepExpectation& e,
                   const std::string& is_enabled_rule, const std::string& cause, const GUID& source,
                   const std::string& source_rule);
  bool is_private(const std::string& session) const;
  // enable / disable of a provider group (EVENT_ENABLE_PROPERTY_PROVIDER_GROUP).
  void group_enable(const Step& step, StepExpectation& e);
  // disallow: TraceSetInformation(TraceSetDisallowList) replaces the session's list; what it
  // enabled through groups follows at once (GRP-DISALLOW).
  void disallow(const Step& step, StepExpectation& e);

  const Case& case_;
  std::set<std::string> started_;
  std::set<std::string> stopped_;
  std::set<std::string> registered_;
  std::set<std::string> traits_attempted_;
  std::set<std::string> traits_set_;
  std::set<std::string> use_descriptor_type_;  // EventProviderUseDescriptorType TRUE
  std::map<std::string, SessionMap> enables_;  // provider GUID text -> sessions enabling it
  std::map<std::string, SessionData> data_;    // session label -> its data path state
  std::map<std::string, ConsumerExpectation> consumers_;
  std::set<std::string> replaced_;  // "<session>\n<guid>" enabled again (FLT-REPLACE)
  std::map<std::string, std::string> member_group_;  // provider label -> group GUID text
  std::map<std::string, SessionMap> group_enables_;  // group GUID text -> sessions enabling it
  std::map<std::string, std::set<std::string>> disallow_;  // session -> provider GUID texts
  // An APPEND log file (the case's log_file name) -> the sequence numbers earlier sessions left.
  std::map<std::string, std::vector<std::uint64_t>> appended_;
  std::uint64_t next_seq_ = 1;
};

}  // namespace etwh::oracle::detail
