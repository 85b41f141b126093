// etwrt: the process-wide connection of libetwrt to its broker. One connection per process,
// opened lazily by the first API call; a reader thread matches replies to requests by id and
// queues enable notifications to a callback thread, which invokes the EnableCallbacks (so a
// slow callback never blocks the reader). Registrations survive a broker restart: the reader
// reconnects in the background and registers them again.
#pragma once

#include "enable_table.h"
#include "registration_handles.h"

#include <etwrt/dataplane.h>

#include <windows.h>
#include <evntprov.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace etwrt {

// A session's pool as this process maps it (once per pool, its other sessions holding aliases;
// kept until the process exits: lock-free writers may still hold a pointer to it, so it is
// never unmapped).
inline std::atomic<std::uint32_t> g_next_pool_cache_slot{0};

// The one copy of each distinct clock key this process has seen (never freed: pools are never
// unmapped either), so that EventWrite compares two sessions' clocks by address.
const dataplane::Pool::ClockKey* intern_clock(const dataplane::Pool::ClockKey& key);

struct SessionPool {
  SessionPool(std::uint64_t pool_id, dataplane::Pool&& mapped, std::uint32_t session_index,
              std::uint64_t pool_group)
      : id(pool_id),
        index(session_index),
        group(pool_group),
        pool(std::move(mapped)),
        clock(intern_clock(pool.clock_key())),
        cache_slot(g_next_pool_cache_slot.fetch_add(1, std::memory_order_relaxed)) {}
  std::uint64_t id;
  // The session's index in its pool, and the pool's identity: sessions of one group share the
  // pool's memory (runtime/dataplane/README.md, "Buffers shared among sessions"), mapped once
  // per process (the first session's mapping, Pool::alias for the others), and EventWrite
  // writes an event once per group.
  std::uint32_t index;
  std::uint64_t group;
  // The first session of its group this process mapped (itself if none): a thread writes to a
  // pool through that one's writer, whichever of the pool's sessions an event is for, so it
  // holds one buffer per pool.
  SessionPool* canonical = this;
  dataplane::Pool pool;
  // EventWrite's per-session work, kept beside the pool: the clock key it compares to stamp an
  // event once for all sessions (interned: equal keys, same address), and the slot of the
  // thread's writer cache this pool uses.
  const dataplane::Pool::ClockKey* const clock;
  const std::uint32_t cache_slot;
  // The session's TRACEHANDLE (0: not said), reported by the observation (observe.h).
  std::atomic<std::uint64_t> session{0};
  std::atomic<bool> stopped{false};  // The broker said the session stopped (or died).
  // The connection to the broker that owned the session closed before it said "stopped": the
  // session ended with its broker (ProcessTrace drains, then returns kBrokerLostStatus).
  std::atomic<bool> broker_lost{false};
};

// ProcessTrace's status when the session's broker died (ProcessTrace doc: "The session from
// which you are trying to consume events in real time is not running").
inline constexpr ULONG kBrokerLostStatus = ERROR_WMI_INSTANCE_NOT_FOUND;

// Bumped in a forked child: thread-local writers made before the fork are not reused.
inline std::atomic<std::uint32_t> g_fork_generation{0};
inline std::uint32_t fork_generation() { return g_fork_generation.load(std::memory_order_relaxed); }

// A provider registration.
struct Registration {
  // Its REGHANDLE and its token on the wire (registration_handles.h), given by add_registration.
  std::uint64_t handle = 0;
  GUID guid{};
  PENABLECALLBACK callback = nullptr;
  void* context = nullptr;
  EnableTable table;
  // The traits request that succeeded, re-sent when the broker is reached again.
  std::optional<nlohmann::json> traits;
  // The traits blob as given, travelling in every event (EVENT_HEADER_EXT_TYPE_PROV_TRAITS).
  std::atomic<const std::vector<std::byte>*> traits_blob{nullptr};
  // EVENT_DATA_DESCRIPTOR.Type is honoured (EventProviderUseDescriptorType or traits set).
  std::atomic<bool> use_descriptor_type{false};
  // Every SystemFilter the enable table has pointed to: a writer may still read an old one,
  // so they live as long as the registration (publishers only, on the reader thread).
  std::vector<std::shared_ptr<const void>> system_filters;
};

struct ClientReply {
  ULONG status = ERROR_SUCCESS;  // ERROR_SUCCESS when `body` holds the broker's reply.
  nlohmann::json body;
};

class Client {
 public:
  // The client of this process (a fresh one in a forked child).
  static Client& instance();

  // Sends `request` and waits for its reply, at most `timeout` (then ERROR_TIMEOUT).
  // ERROR_NOT_SUPPORTED when the broker cannot be reached or the connection drops.
  // `on_reply`, if set, runs on the reader thread before any later message is handled.
  ClientReply call(nlohmann::json request, std::chrono::milliseconds timeout,
                   std::function<void(const nlohmann::json&)> on_reply = {});

  // Adds/removes a registration in the table notifications are routed through. Adding gives it
  // its handle; false (no handle) when the process has no handle left.
  bool add_registration(Registration* registration);
  // Removes it and waits until no callback of it is running (unless called from inside one).
  bool remove_registration(Registration* registration);
  // The traits request a registration re-sends when the broker is reached again: written by
  // EventSetInformation, read by the reattaching reader thread, so both under the lock.
  void set_traits(Registration& registration, nlohmann::json request);
  std::optional<nlohmann::json> traits_of(Registration& registration);

  // Publishes a registration's session filters from a "sessions" array of the broker.
  void publish_sessions(Registration& registration, const nlohmann::json& sessions);

  // The pool of `pool_id` if this process mapped it (nullptr otherwise).
  SessionPool* pool(std::uint64_t pool_id);
  // Maps a pool from `fd` (closing it) unless known already; nullptr when it is not a pool.
  // `index` and `group` as the broker said (a pool of its own: 0 and the pool's id).
  SessionPool* adopt_pool(std::uint64_t pool_id, int fd, std::uint64_t session, std::uint32_t index,
                          std::uint64_t group);

  // Invokes a registration's callback as a notification would (used by EventRegister for the
  // synchronous callback of an already enabled provider).
  static void invoke(const Registration& registration, const GUID& source, ULONG is_enabled,
                     UCHAR level, std::uint64_t any, std::uint64_t all,
                     PEVENT_FILTER_DESCRIPTOR filter);

 private:
  struct Pending {
    bool done = false;
    ClientReply reply;
    std::function<void(const nlohmann::json&)> on_reply;
  };
  struct Notification {
    std::uint64_t token = 0;
    nlohmann::json message;
  };

  // Internal status of a request whose connection went away before its reply.
  static constexpr ULONG kConnectionLost = 0xE7000001u;

  Client() = default;
  ClientReply call_once(nlohmann::json request, std::chrono::milliseconds timeout,
                        const std::function<void(const nlohmann::json&)>& on_reply);
  // Connects (starting the broker if needed) unless connected to the current ETWRT_HOME.
  ULONG ensure_connected_locked(std::unique_lock<std::mutex>& lock);
  void reader_loop(int fd, std::uint64_t generation);
  void dispatch(nlohmann::json message, std::deque<int>& fds);
  void connection_lost(int fd, std::uint64_t generation);
  void reattach();
  void callback_loop();
  bool send(const nlohmann::json& message);
  // Writes a frame on connection `generation` unless that connection was closed meanwhile.
  bool write_frame(int fd, std::uint64_t generation, const std::string& body);

  std::mutex mu_;
  std::condition_variable replies_cv_;
  int fd_ = -1;
  std::uint64_t generation_ = 0;
  std::string home_;
  std::uint64_t next_id_ = 1;
  std::map<std::uint64_t, std::shared_ptr<Pending>> pending_;
  std::map<std::uint64_t, Registration*> registrations_;
  // Writes and the close of a connection hold send_mu_: a request copied the descriptor under
  // mu_, and a number closed between that copy and its write can belong to another open by then.
  std::mutex send_mu_;
  std::set<std::uint64_t> open_generations_;  // Connections not closed yet (guarded by send_mu_).

  // Callback thread state (guarded by mu_).
  std::deque<Notification> queue_;
  std::condition_variable queue_cv_;
  std::condition_variable idle_cv_;
  std::uint64_t running_token_ = 0;
  std::thread::id callback_thread_id_;
  bool callback_thread_started_ = false;
  bool reattaching_ = false;

  std::mutex pools_mu_;
  std::map<std::uint64_t, SessionPool*> pools_;
};

}  // namespace etwrt
