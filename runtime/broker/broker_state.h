// etwrt-broker's state machine: sessions, provider registrations, enables, the per-provider
// aggregates, provider groups and the waits of EnableTraceEx2. It takes decoded requests
// (requests.h) from peers known by an opaque id and yields the frames to send to which peer;
// it owns no socket and makes no system call besides creating a session's pool, so it is
// unit-tested without a broker process (broker_state_test.cc). The event loop (broker_main.cc)
// sends what it yields and tells it when a peer is gone.
#pragma once

#include "enable_filters.h"
#include "enable_table.h"
#include "file_logger.h"
#include "requests.h"

#include <etwrt/dataplane.h>

#include <windows.h>

#include <nlohmann/json.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace etwrt::broker {

// A connected process, as the event loop names it (its socket's fd there).
using PeerId = int;

// One frame to send. When `pool` is set, its fd travels with the frame (SCM_RIGHTS).
struct Outgoing {
  PeerId peer = -1;
  nlohmann::json message;
  std::shared_ptr<const dataplane::Pool> pool;
};

// What a session asks of one provider: its filter, SourceId and filters.
struct Enable {
  SessionFilter filter;
  GUID source{};
  std::optional<FilterBlob> provider_filter;
  std::vector<FilterBlob> system_filters;  // Applied per session on the event path.
  // Set when this enable comes from a provider group the session enabled (GRP-ENABLE): the
  // group's GUID key. Such enables are derived, kept in step by sync_groups().
  std::string via_group;
};

struct Session : SessionSettings {
  std::uint64_t handle = 0;
  std::int64_t start_time = 0;  // FILETIME of StartTrace (TRACE_LOGFILE_HEADER.StartTime).
  std::map<std::string, Enable> enables;  // By provider GUID key.
  // The event path: the session's buffers, shared by fd with providers and consumers, and
  // the id peers know them by (never reused, unlike handles, across broker restarts).
  std::shared_ptr<dataplane::Pool> pool;
  std::uint64_t pool_id = 0;
  // Realtime sessions of equal BufferSize and FlushTimer share a pool (runtime/dataplane/
  // README.md, "Buffers shared among sessions"): the session's index there, and the pool's
  // identity (its first session's pool_id), by which clients write an event once per pool.
  std::uint32_t pool_index = 0;
  std::uint64_t pool_group = 0;
  // Provider groups this session enabled (EVENT_ENABLE_PROPERTY_PROVIDER_GROUP), by group GUID
  // key, and the providers it keeps out of them (TraceSetDisallowList), by provider GUID key.
  std::map<std::string, Enable> group_enables;
  std::set<std::string> disallow;
  // A session with a log file: the broker's thread that writes it (docs/etwrt/internals.md,
  // "Trace files (writing)").
  std::shared_ptr<FileLogger> logger;
};

struct Registration {
  PeerId peer = -1;
  std::uint64_t token = 0;
  GUID guid{};
  bool traits_set = false;
  std::string traits_name;
  std::optional<GUID> group;  // EtwProviderTraitTypeGroup of its traits, if any.
  bool classic = false;       // RegisterTraceGuids: one enabling session at a time.
};

// How many sessions may run at once when ETWRT_MAX_SESSIONS does not say: Windows' usual
// system-wide limit (StartTrace: ERROR_NO_SYSTEM_RESOURCES beyond it, "defaults to 64").
inline constexpr std::size_t kDefaultMaxSessions = 64;

class BrokerState {
 public:
  explicit BrokerState(std::size_t max_sessions = kDefaultMaxSessions)
      : max_sessions_(max_sessions) {}
  // A peer connected; `allowed` when it runs as the broker's user (or root); `pid` its process
  // (0 when unknown), which EnumerateTraceGuidsEx reports for its registrations.
  void connect(PeerId peer, bool allowed, std::uint32_t pid = 0);
  // Whether `peer` is this broker's user (or root): another user's frames get
  // ERROR_ACCESS_DENIED before anything about them is judged.
  bool allowed(PeerId peer) const;
  // Handles one request of a connected peer; what to send waits in the outbox.
  void handle(PeerId peer, const Request& request);
  // A peer whose socket closed or whose frame could not be sent: its registrations vanish,
  // the waits for its callbacks finish. Unknown peers are ignored.
  void disconnect(PeerId peer);
  // Hands the buffers of dead writers and the claims of dead readers on, in every pool.
  void recover_pools();
  struct Draining {
    std::shared_ptr<dataplane::Pool> pool;
    std::uint32_t index = 0;
    std::uint64_t pool_id = 0;
  };
  bool leave_pool_if_undrained(const Draining& entry);
  static bool shares_pools(const SessionSettings& s);
  bool join_shared_pool(Session& s);
  // Stops every session as ControlTrace(STOP) would (the broker is ending on a signal or
  // because its owner is gone): providers are notified, consumers drain and return.
  void stop_all_sessions();
  // For the fuzz target: a StartTrace with a log file gets ERROR_NOT_SUPPORTED and nothing is
  // written to disk (fuzzed names must not create or truncate files).
  void disable_log_files() { log_files_ = false; }
  // The frames to send, in order, since the last call.
  std::vector<Outgoing> take_outbox() { return std::exchange(outbox_, {}); }
  // No session and no peer: the broker may exit.
  bool idle() const { return sessions_.empty() && peers_.empty(); }

 private:
  struct Peer {
    bool allowed = false;
    std::vector<std::uint64_t> pending_waits;  // Wait ids this peer still has to ack.
    std::set<std::uint64_t> pools;   // Pool ids whose fd this peer got (it maps each once).
    std::set<std::uint64_t> opened;  // Pool ids of the sessions it opened as a consumer.
    std::uint32_t pid = 0;
  };
  struct Wait {
    PeerId controller = -1;  // -1 once the controller is gone.
    nlohmann::json request_id;
    int remaining = 0;
  };

  void send(PeerId peer, nlohmann::json message,
            std::shared_ptr<const dataplane::Pool> pool = nullptr);
  nlohmann::json dispatch(PeerId id, const Request& request, bool& deferred);
  nlohmann::json on_register(PeerId peer, const RegisterRequest& request);
  nlohmann::json on_unregister(PeerId peer, const UnregisterRequest& request);
  nlohmann::json on_set_traits(PeerId peer, const SetTraitsRequest& request);
  nlohmann::json on_start(const StartRequest& request);
  nlohmann::json on_control(const ControlRequest& request);
  nlohmann::json on_enumerate() const;
  // broker_providers.cc; `peer` asks (TraceGuidQueryProcess lists its registrations).
  nlohmann::json on_providers(PeerId peer, const ProvidersRequest& request) const;
  nlohmann::json on_session_info(const SessionInfoRequest& request);  // broker_providers.cc
  // Returns nullopt when the reply is deferred until the callbacks have been acknowledged.
  std::optional<nlohmann::json> on_enable(PeerId peer, const EnableRequest& request,
                                          const nlohmann::json& id);
  // The enable, disable and capture-state steps of on_enable; each returns the notifications
  // it sent, or nullopt when the request is refused (`refusal` says with what).
  std::optional<int> enable_provider(Session& session, const std::string& key,
                                     const EnableRequest& request, const GUID& source,
                                     std::uint64_t wait_id, nlohmann::json& refusal);
  int disable_provider(Session& session, const std::string& key, const GUID& source,
                       std::uint64_t wait_id);
  void on_ack(Peer& peer, const AckRequest& request);
  void on_open(Peer& peer, PeerId id, const OpenRequest& request, const nlohmann::json& rid);
  // Starts a wait for the callbacks (1 held while notifications go out); 0 when not waiting.
  std::uint64_t begin_wait(bool wait, PeerId controller, const nlohmann::json& id);
  // Adds `sent` to the wait and drops the 1 held: the reply now, or nullopt if deferred.
  std::optional<nlohmann::json> end_wait(std::uint64_t wait_id, int sent);
  // Sends `peer` the pools of `key`'s enabling sessions it does not have yet.
  void send_pools(PeerId peer, const std::string& key);

  // Provider groups (broker_groups.cc).
  std::optional<nlohmann::json> on_group_enable(PeerId peer, const EnableRequest& request,
                                                const nlohmann::json& id, Session& session,
                                                const GUID& source);
  nlohmann::json on_disallow(const DisallowRequest& request);
  // Brings every session's group-derived enables in line with its group enables, disallow
  // list and the current members; notifies each provider whose enables changed. Returns how
  // many notifications went out (counted into `wait_id` when != 0).
  int sync_groups(const GUID& source, std::uint64_t wait_id);

  // Aggregates and notifications (broker_aggregate.cc).
  // The enabling sessions of a provider, in slot order, and the slot of each.
  std::vector<std::pair<int, const Enable*>> enables_of(const std::string& key) const;
  nlohmann::json sessions_json(const std::string& key) const;
  nlohmann::json aggregate_json(const std::string& key, ULONG is_enabled) const;
  nlohmann::json filter_chain(const std::string& key) const;
  // Sends a notification to every registration of `key`; counts them into `wait_id` if != 0.
  int notify(const std::string& key, const GUID& source, ULONG is_enabled, UCHAR level,
             std::uint64_t any, std::uint64_t all, const nlohmann::json& filter,
             std::uint64_t wait_id);
  // Notifies `key`'s registrations of its aggregate after a change (no filter when disabled).
  int notify_aggregate(const std::string& key, const GUID& source, std::uint64_t wait_id);
  void finish_wait(std::uint64_t wait_id);
  // A classic provider (RegisterTraceGuids) has one enabling session at a time: a new one
  // takes it over, the others silently lose it (EnableTraceEx2 doc; SES-CLASSIC-ONE).
  void take_over_classic(const std::string& key);

  Session* find_session(std::uint64_t handle, const std::string& name);
  // Trace files (broker_files.cc): starts the logger of a session with a log file; its
  // StartTrace status (ERROR_BAD_PATHNAME when another session writes that file); a session
  // without a log file has no logger.
  ULONG start_logger(Session& s);
  // ControlTrace(UPDATE)'s switch to another log file: its status (broker_files.cc).
  ULONG switch_log_file(Session& s, const std::string& name);
  void stop_session(std::uint64_t handle);
  static nlohmann::json properties_json(const Session& s);
  GUID random_guid();

  std::size_t max_sessions_;
  bool log_files_ = true;
  std::map<PeerId, Peer> peers_;
  std::map<std::uint64_t, Session> sessions_;
  // Stopped sessions whose index is still in a shared pool: a consumer's hub drains them and
  // then takes the index out; if its process dies first, recover_pools() does.
  std::vector<Draining> draining_;
  std::map<std::string, std::array<std::uint64_t, kMaxSessionsPerProvider>> slots_;
  std::vector<Registration> registrations_;
  std::map<std::uint64_t, Wait> waits_;
  std::vector<Outgoing> outbox_;
  std::uint64_t next_handle_ = 1;
  std::uint64_t next_wait_ = 1;
  std::mt19937_64 random_{std::random_device{}()};
};

// The most memory one session's buffers may take (BufferSize x MaximumBuffers), etwrt's
// choice: 1 GiB, or a quarter of physical memory when that is less (pool_limit_bytes()).
inline constexpr std::uint64_t kMaxPoolBytes = std::uint64_t{1} << 30;
std::uint64_t pool_limit_bytes();

struct BufferPlan {
  ULONG buffer_size_kb = 0;
  ULONG minimum_buffers = 0;
  ULONG maximum_buffers = 0;
};

// StartTrace's buffer settings as etwrt applies them. EVENT_TRACE_PROPERTIES: ETW checks them
// against physical memory and processors and replaces unreasonable ones (the call succeeds,
// the properties carry the values used). A 64 KB buffer when 0 is given, at most 16 MB; at
// least two buffers per processor; MaximumBuffers at least MinimumBuffers + 20; then both
// lowered until the pool fits `limit_bytes` and 65536 buffers (never below 2).
BufferPlan plan_buffers(ULONG buffer_size_kb, ULONG minimum, ULONG maximum, ULONG processors,
                        std::uint64_t limit_bytes);

// What an EnableTraceEx2 request (direct or through a group) asks of a provider.
Enable enable_from(const EnableRequest& request, const GUID& source);

// A GUID as a map key (its 16 bytes).
std::string guid_key(const GUID& g);

}  // namespace etwrt::broker
