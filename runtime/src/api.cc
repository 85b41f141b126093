// The Win32 ETW entry points of libetwrt that write events: argument checks in the calling
// process, then the sessions' buffers (registration and traits: api_register.cc; sessions and
// enables: api_controller.cc; activity IDs: api_activity.cc).
#include "api_shared.h"
#include "client.h"
#include "observe.h"
#include "replies.h"
#include "enable_filters.h"
#include "system_filters.h"
#include "trace_properties.h"
#include "traits.h"
#include "tracelogging.h"
#include "wire.h"

#include <windows.h>
#include <evntprov.h>
#include <evntrace.h>
#include <evntcons.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <type_traits>
#include <vector>

namespace {

using json = nlohmann::json;
using etwrt::Client;
using etwrt::kCallLimit;
using etwrt::Registration;
using etwrt::registration_of;
using etwrt::t_activity_id;

// The common case without the owner's guarded access: the writers this thread used, one entry
// per pool's cache_slot modulo the size (trivial, so no initialization guard; direct-mapped:
// one comparison per session, where a scan cost four to an event of four sessions). Filled
// from t_writers, which owns them; two pools sharing an entry take turns in it.
struct WriterCacheEntry {
  etwrt::SessionPool* pool;
  etwrt::dataplane::Writer* writer;
  std::uint32_t generation;
};
constexpr std::size_t kWriterCache = 16;
ETWRT_FAST_TLS WriterCacheEntry t_writer_cache[kWriterCache];

// The sessions that take an event, resolved once per (registration's table version, level,
// keyword) and thread: EnableTable::collect's snapshot with each session's writer for this
// thread, kept until the table is published again. An event then reads the table's version
// instead of every slot under the seqlock (collect cost a seventh of a one-session write, and
// a seventh of each further session's).
struct Route {
  std::uint64_t version;  // the table's version when collected (generation kNoRoute: no route)
  std::uint64_t keyword;
  std::uint32_t generation;
  std::uint8_t level;
  std::uint8_t count;
  // Every target has a pool and no event ID filter, and all share the first one's clock: an
  // event that no caller's flag excludes goes to each of them as it is (write_plain).
  bool plain;
  std::array<etwrt::Target, etwrt::kMaxSessionsPerProvider> targets;
  // This thread's writer for each target, found at its first event (nullptr: not yet).
  std::array<etwrt::dataplane::Writer*, etwrt::kMaxSessionsPerProvider> writers;
  // The targets by pool (sessions that share one, runtime/dataplane/README.md): an event is
  // written once per pool, through its first target's writer, with its targets' session bits.
  std::uint8_t pools;
  std::array<std::uint8_t, etwrt::kMaxSessionsPerProvider> pool_of;    // by target
  std::array<std::uint8_t, etwrt::kMaxSessionsPerProvider> first;      // by pool: a target
  std::array<std::uint32_t, etwrt::kMaxSessionsPerProvider> sessions;  // by pool: all its bits
};

// Groups a route's targets by the pool they write to (their SessionPool's group).
void group_by_pool(Route& r) {
  // Each pool's group id; a target without a pool yet is a group of its own (id 0, never
  // matched: a pool's group is its first session's nonzero pool id).
  std::array<std::uint64_t, etwrt::kMaxSessionsPerProvider> ids{};
  r.pools = 0;
  for (std::uint8_t i = 0; i < r.count; ++i) {
    const auto* pool = static_cast<const etwrt::SessionPool*>(r.targets[i].sink);
    const std::uint64_t id = pool != nullptr ? pool->group : 0;
    std::uint8_t g = 0;
    while (g < r.pools && (id == 0 || ids[g] != id)) ++g;
    if (g == r.pools) {
      ids[g] = id;
      r.first[g] = i;
      r.sessions[g] = 0;
      ++r.pools;
    }
    r.pool_of[i] = g;
    if (pool != nullptr) r.sessions[g] |= 1u << pool->index;
  }
}

// Direct-mapped by (registration, level, keyword).
constexpr unsigned kRouteCacheBits = 4;
constexpr std::size_t kRouteCache = std::size_t{1} << kRouteCacheBits;
struct RouteCache {
  RouteCache() {
    for (Route& r : routes) r.generation = kNoRoute;
  }
  static constexpr std::uint32_t kNoRoute = UINT32_MAX;  // a generation no event has
  std::array<Route, kRouteCache> routes{};
};
// Heap-allocated on a thread's first event to a session (a few KB: too much for the static TLS
// that initial-exec variables share); freed with the thread's writers.
ETWRT_FAST_TLS RouteCache* t_routes = nullptr;

// One Writer per thread and session pool, made on the thread's first event for that session
// and released (its buffer handed to delivery) when the thread exits. Writers inherited
// through fork belong to the parent's buffers: the child drops them unused.
class ThreadWriters {
 public:
  ~ThreadWriters() {
    for (WriterCacheEntry& e : t_writer_cache) e = {};
    delete t_routes;
    t_routes = nullptr;
    if (generation_ != etwrt::fork_generation()) {
      for (auto& [pool, writer] : writers_) (void)writer.release();  // Leaked on purpose.
    }
  }

  etwrt::dataplane::Writer& get(etwrt::SessionPool* pool) {
    if (generation_ != etwrt::fork_generation()) {
      for (auto& [p, writer] : writers_) (void)writer.release();
      writers_.clear();
      generation_ = etwrt::fork_generation();
    }
    for (auto& [p, writer] : writers_) {
      if (p == pool) return *writer;
    }
    writers_.emplace_back(pool, std::make_unique<etwrt::dataplane::Writer>(pool->pool));
    return *writers_.back().second;
  }

 private:
  std::uint32_t generation_ = etwrt::fork_generation();
  std::vector<std::pair<etwrt::SessionPool*, std::unique_ptr<etwrt::dataplane::Writer>>> writers_;
};

thread_local ThreadWriters t_writers;

// Out of line: inlined, its allocation and thread-local set-up made the common path below
// save and restore registers on every call.
[[gnu::noinline, gnu::cold]] etwrt::dataplane::Writer& writer_not_cached(etwrt::SessionPool* pool,
                                                                         WriterCacheEntry& e,
                                                                         std::uint32_t generation) {
  etwrt::dataplane::Writer& w = t_writers.get(pool);
  e = {pool, &w, generation};
  return w;
}

// The thread's writer for `session`'s pool: the one of the first of the pool's sessions this
// process mapped (SessionPool::canonical), so that a thread holds one buffer per pool.
inline etwrt::dataplane::Writer& writer_for(const etwrt::SessionPool* session) {
  etwrt::SessionPool* pool = session->canonical;
  const std::uint32_t generation = etwrt::fork_generation();
  WriterCacheEntry& e = t_writer_cache[pool->cache_slot % kWriterCache];
  if (e.pool == pool && e.generation == generation) [[likely]]
    return *e.writer;
  return writer_not_cached(pool, e, generation);
}

[[gnu::noinline, gnu::cold]] RouteCache* make_route_cache() {
  (void)&t_writers;  // constructed here, so that its destructor frees the cache
  t_routes = new RouteCache;
  return t_routes;
}

// A snapshot taken between two equal readings of the version is that version's (or a newer
// one's, then replaced at the next event: enable_table.h).
[[gnu::noinline]] Route& fill_route(Route& r, const etwrt::EnableTable& table, std::uint8_t level,
                                    std::uint64_t keyword, std::uint32_t generation,
                                    std::uint64_t version) {
  r.count = static_cast<std::uint8_t>(table.collect(level, keyword, r.targets));
  r.writers.fill(nullptr);
  const auto* first = static_cast<const etwrt::SessionPool*>(r.targets[0].sink);
  r.plain = true;
  for (std::size_t i = 0; i < r.count; ++i) {
    const auto* pool = static_cast<const etwrt::SessionPool*>(r.targets[i].sink);
    if (pool == nullptr || r.targets[i].id_filter != nullptr || pool->clock != first->clock) {
      r.plain = false;  // first is not null past i == 0
      break;
    }
  }
  group_by_pool(r);
  r.level = level;
  r.keyword = keyword;
  // A publish came in between: serve this event, match none later.
  const bool stable = table.version() == version;
  r.generation = stable ? generation : RouteCache::kNoRoute;
  r.version = version;
  return r;
}

inline Route& route_for(const Registration* registration, std::uint8_t level,
                        std::uint64_t keyword) {
  RouteCache* cache = t_routes;
  if (cache == nullptr) [[unlikely]]
    cache = make_route_cache();
  // Each kind of event its own entry (a provider mixing levels and keywords would otherwise
  // refill one entry at every event); the version alone names the registration, since every
  // publish of any table has its own.
  const std::uint64_t mixed = (reinterpret_cast<std::uintptr_t>(registration) >> 6) ^ keyword ^
                              (std::uint64_t{level} << 56);
  Route& r = cache->routes[(mixed * 0x9E3779B97F4A7C15u) >> (64 - kRouteCacheBits)];
  const std::uint32_t generation = etwrt::fork_generation();
  const std::uint64_t version = registration->table.version();
  if (r.version == version && r.level == level && r.keyword == keyword &&
      r.generation == generation) [[likely]]
    return r;
  return fill_route(r, registration->table, level, keyword, generation, version);
}

inline etwrt::dataplane::Writer& route_writer(Route& r, std::size_t i, etwrt::SessionPool* pool) {
  etwrt::dataplane::Writer* w = r.writers[i];
  if (w == nullptr) [[unlikely]]
    w = r.writers[i] = &writer_for(pool);
  return *w;
}

// EventWriteEx page: an EVENT_WRITE_FLAG_INPRIVATE event is dropped by every session that
// enabled the provider with EVENT_ENABLE_PROPERTY_EXCLUDE_INPRIVATE.
constexpr bool excluded_as_in_private(ULONG write_flags, std::uint32_t enable_property) {
  return (write_flags & EVENT_WRITE_FLAG_INPRIVATE) != 0 &&
         (enable_property & EVENT_ENABLE_PROPERTY_EXCLUDE_INPRIVATE) != 0;
}

// EventWrite pages: ERROR_ARITHMETIC_OVERFLOW when "the event size is larger than the allowed
// maximum (64k - header)", whatever the session's buffers (EVENT_RECORD.UserDataLength is a
// USHORT). Checked once some session takes the event (etwrt choice: no cost when none does).
bool too_large_for_an_event(const EVENT_DATA_DESCRIPTOR* data, ULONG count) {
  std::uint64_t total = 0;
  for (ULONG i = 0; i < count; ++i) total += data[i].Size;
  return total > 0xFFFF - sizeof(EVENT_HEADER);
}

// One clock reading stamps an event in every session whose pool shares the clock (the reading
// is a third of a one-session write), and the record encoded for the first of them is copied
// into the others (the same bytes: same stamp, process and thread); one session keeps the
// writer's own reading, taken after it has secured a buffer.
struct SharedStamp {
  std::uint64_t stamp = 0;
  const etwrt::dataplane::Pool::ClockKey* clock = nullptr;
  std::span<const std::byte> encoded;  // in the first stamped session's buffer, once written
};

inline etwrt::dataplane::WriteResult write_to(etwrt::dataplane::Writer& writer,
                                              etwrt::SessionPool* pool,
                                              const etwrt::dataplane::EventInput& in, bool several,
                                              SharedStamp& shared, std::uint32_t sessions) {
  if (!several) return writer.write(in, 0, sessions);
  if (shared.clock == nullptr) {
    shared.clock = pool->clock;
    shared.stamp = pool->pool.now_ns();
  } else if (pool->clock != shared.clock) {
    return writer.write(in, 0, sessions);
  } else if (!shared.encoded.empty()) {
    return writer.write_copy(shared.encoded, sessions);
  }
  const etwrt::dataplane::WriteResult result = writer.write(in, shared.stamp, sessions);
  if (result == etwrt::dataplane::WriteResult::written) shared.encoded = writer.last_record();
  return result;
}

// A session's result folded into the call's status: the first failure is the one returned.
inline ULONG with_result(ULONG status, etwrt::dataplane::WriteResult result) {
  if (status != ERROR_SUCCESS) return status;
  switch (result) {
    case etwrt::dataplane::WriteResult::written: return ERROR_SUCCESS;
    case etwrt::dataplane::WriteResult::lost: return ERROR_NOT_ENOUGH_MEMORY;
    case etwrt::dataplane::WriteResult::too_large: return ERROR_MORE_DATA;
  }
  return status;
}

// A plain route (no filter to consult, one clock) with no session excluded by the caller: the
// loop of write_event without its per-session checks (a quarter of each further session's
// instructions).
// The same records as write_to's: one reading for several sessions, one encoding, copies.
// Not through write_to: its clock checks, needless here, cost 50 of four sessions' ~640
// instructions (callgrind).
inline ULONG write_plain(Route& route, const etwrt::dataplane::EventInput& in) {
  const std::size_t n = route.pools;
  const std::uint64_t stamp =
      n > 1 ? static_cast<etwrt::SessionPool*>(route.targets[0].sink)->pool.now_ns() : 0;
  std::span<const std::byte> encoded;
  ULONG status = ERROR_SUCCESS;
  for (std::size_t g = 0; g < n; ++g) {
    const std::size_t i = route.first[g];
    etwrt::dataplane::Writer& writer =
        route_writer(route, i, static_cast<etwrt::SessionPool*>(route.targets[i].sink));
    etwrt::dataplane::WriteResult result;
    if (encoded.empty()) {
      result = writer.write(in, stamp, route.sessions[g]);
      if (result == etwrt::dataplane::WriteResult::written) encoded = writer.last_record();
    } else {
      result = writer.write_copy(encoded, route.sessions[g]);
    }
    if (result != etwrt::dataplane::WriteResult::written) [[unlikely]]
      status = with_result(status, result);
  }
  return status;
}

// EventWrite's common path: the sessions that accept the event, each its own filter (the
// enable table), minus those the caller excludes by InstanceId; a copy into each one's
// buffer. No system call, no shared lock.
// kObserved (etwh observe): the same path, also noting in `to` each session the event went to
// (written or lost there), from the very snapshot of the sessions it used; the unobserved
// instantiation has no trace of it.
template <bool kObserved = false>
ULONG write_typed(Registration* registration, const EVENT_DESCRIPTOR& descriptor,
                  const GUID* activity, const GUID* related, ULONG64 exclude, ULONG count,
                  const EVENT_DATA_DESCRIPTOR* data, USHORT extra_flags, ULONG write_flags,
                  etwrt::observe::Delivered* to);

template <bool kObserved = false>
ULONG write_event(Registration* registration, const EVENT_DESCRIPTOR& descriptor,
                  const GUID* activity, const GUID* related, ULONG64 exclude, ULONG count,
                  const EVENT_DATA_DESCRIPTOR* data, USHORT extra_flags = 0, ULONG write_flags = 0,
                  const etwrt::TypedEvent* typed = nullptr,
                  etwrt::observe::Delivered* to = nullptr) {
  if (registration == nullptr) return ERROR_INVALID_HANDLE;  // registration_of found none
  if (registration->table.empty()) return ERROR_SUCCESS;     // No session: one relaxed load.
  if (typed == nullptr && registration->use_descriptor_type.load(std::memory_order_relaxed))
      [[unlikely]] {
    return write_typed<kObserved>(registration, descriptor, activity, related, exclude, count, data,
                                  extra_flags, write_flags, to);
  }
  Route& route = route_for(registration, descriptor.Level, descriptor.Keyword);
  const std::size_t n = route.count;
  if (n == 0) return ERROR_SUCCESS;
  const auto& targets = route.targets;
  if (too_large_for_an_event(data, count)) return ERROR_ARITHMETIC_OVERFLOW;
  etwrt::dataplane::EventInput in;
  in.provider_id = &registration->guid;
  in.descriptor = &descriptor;
  in.activity_id = activity != nullptr ? activity : &t_activity_id;
  in.related_activity_id = related;
  in.extra_flags = extra_flags;
  if (const auto* traits = registration->traits_blob.load(std::memory_order_acquire)) {
    in.provider_traits = std::span<const std::byte>(traits->data(), traits->size());
  }
  in.user_data = std::span<const EVENT_DATA_DESCRIPTOR>(data, count);
  if (typed != nullptr) {
    in.event_schema = typed->schema;
    if (!typed->traits.empty()) in.provider_traits = typed->traits;
    if (typed->has_timestamp) in.timestamp_override = &typed->timestamp;
  }
  if constexpr (!kObserved) {
    if (route.plain && exclude == 0 && (write_flags & EVENT_WRITE_FLAG_INPRIVATE) == 0) [[likely]]
      return write_plain(route, in);
  }
  // The sessions of each pool that take this event, then one write per pool.
  std::array<std::uint32_t, etwrt::kMaxSessionsPerProvider> sessions{};
  for (std::size_t i = 0; i < n; ++i) {
    auto* pool = static_cast<etwrt::SessionPool*>(targets[i].sink);
    if (pool == nullptr || (exclude & (ULONG64{1} << targets[i].slot)) != 0) continue;
    if (excluded_as_in_private(write_flags, targets[i].enable_property)) continue;
    // The session's EVENT_FILTER_TYPE_EVENT_ID filter, if it gave one.
    if (targets[i].id_filter != nullptr &&
        !static_cast<const etwrt::SystemFilter*>(targets[i].id_filter)->accepts_id(descriptor.Id)) {
      continue;
    }
    sessions[route.pool_of[i]] |= 1u << pool->index;
  }
  ULONG status = ERROR_SUCCESS;
  SharedStamp shared;
  std::array<etwrt::dataplane::WriteResult, etwrt::kMaxSessionsPerProvider> results{};
  for (std::size_t g = 0; g < route.pools; ++g) {
    if (sessions[g] == 0) continue;
    auto* pool = static_cast<etwrt::SessionPool*>(targets[route.first[g]].sink);
    results[g] = write_to(route_writer(route, route.first[g], pool), pool, in, route.pools > 1,
                          shared, sessions[g]);
    status = with_result(status, results[g]);
  }
  if constexpr (kObserved) {
    for (std::size_t i = 0; i < n; ++i) {
      auto* pool = static_cast<etwrt::SessionPool*>(targets[i].sink);
      if (pool == nullptr || (sessions[route.pool_of[i]] & (1u << pool->index)) == 0) continue;
      if (results[route.pool_of[i]] != etwrt::dataplane::WriteResult::too_large)
        to->add(pool->session.load(std::memory_order_relaxed));
    }
  }
  return status;
}

// EVENT_DATA_DESCRIPTOR.Type honoured (tracelogging.h): the payload descriptors alone are
// written, the metadata and timestamp travel beside them.
template <bool kObserved>
ULONG write_typed(Registration* registration, const EVENT_DESCRIPTOR& descriptor,
                  const GUID* activity, const GUID* related, ULONG64 exclude, ULONG count,
                  const EVENT_DATA_DESCRIPTOR* data, USHORT extra_flags, ULONG write_flags,
                  etwrt::observe::Delivered* to) {
  etwrt::TypedEvent typed;  // 2 KB of descriptors: on this frame, not write_event's.
  const bool traits_set = registration->traits_blob.load(std::memory_order_acquire) != nullptr;
  const ULONG split =
      etwrt::split_by_type(std::span<const EVENT_DATA_DESCRIPTOR>(data, count), traits_set, typed);
  if (split != ERROR_SUCCESS) return split;
  return write_event<kObserved>(registration, descriptor, activity, related, exclude,
                                static_cast<ULONG>(typed.payload_count), typed.payload.data(),
                                extra_flags, write_flags, &typed, to);
}

// EventWriteEx's Flags: the page lists EVENT_WRITE_FLAG_INPRIVATE; NO_FAULTING is for kernel
// mode only (evntprov.h), so a user-mode caller passing it is refused (etwrt choice).
constexpr ULONG kUserWriteFlags = EVENT_WRITE_FLAG_INPRIVATE;

// The disabled path, inlined into each EventWrite* entry point ahead of write_event: the
// handle's lookup, a load and a branch, no stack frame (write_event's frame, six saved
// registers and the call cost more than the load when they came first). A handle that names
// no registration is not "no session": write_event answers ERROR_INVALID_HANDLE for it.
inline bool no_session(const Registration* registration) {
  return __builtin_expect(registration != nullptr, 1) &&
         __builtin_expect(registration->table.empty(), 1);
}

// Bitwise, not short-circuit: with the descriptor test the argument checks are one predicted
// branch, and the disabled path below falls through to the return (no taken jump besides the
// call and the return themselves).
inline bool bad_arguments(PCEVENT_DESCRIPTOR descriptor, ULONG count,
                          const EVENT_DATA_DESCRIPTOR* data) {
  return (descriptor == nullptr) | (count > MAX_EVENT_DATA_DESCRIPTORS) |
         ((count != 0) & (data == nullptr));
}

// Observed EventWrite* (observe.h): out of line and with the entry point's own parameters, so
// that the entry point reaches them by a tail jump and its disabled path stays frameless (a call
// that returns into the entry point made it save registers on every call).
ULONG observed(const char* api, REGHANDLE handle, const EVENT_DESCRIPTOR& descriptor,
               const GUID* activity, const GUID* related, ULONG64 filter, ULONG flags, ULONG count,
               const EVENT_DATA_DESCRIPTOR* data) {
  etwrt::observe::Delivered to;
  ULONG status = ERROR_SUCCESS;
  Registration* const registration = registration_of(handle);
  if (!no_session(registration)) {
    status = etwrt::guarded(api, [&] {
      return write_event<true>(registration, descriptor, activity, related, filter, count, data, 0,
                               flags, nullptr, &to);
    });
  }
  etwrt::observe::write(api, handle, descriptor, to);
  return status;
}

[[gnu::noinline, gnu::cold]] ULONG observed_write(REGHANDLE handle, PCEVENT_DESCRIPTOR descriptor,
                                                  ULONG count, PEVENT_DATA_DESCRIPTOR data) {
  return observed("EventWrite", handle, *descriptor, nullptr, nullptr, 0, 0, count, data);
}

[[gnu::noinline, gnu::cold]] ULONG observed_write_transfer(REGHANDLE handle,
                                                           PCEVENT_DESCRIPTOR descriptor,
                                                           LPCGUID activity, LPCGUID related,
                                                           ULONG count,
                                                           PEVENT_DATA_DESCRIPTOR data) {
  return observed("EventWriteTransfer", handle, *descriptor, activity, related, 0, 0, count, data);
}

[[gnu::noinline, gnu::cold]] ULONG observed_write_ex(REGHANDLE handle,
                                                     PCEVENT_DESCRIPTOR descriptor, ULONG64 filter,
                                                     ULONG flags, LPCGUID activity, LPCGUID related,
                                                     ULONG count, PEVENT_DATA_DESCRIPTOR data) {
  return observed("EventWriteEx", handle, *descriptor, activity, related, filter, flags, count,
                  data);
}

}  // namespace

namespace etwrt {

// The calling thread's activity ID (api_shared.h).
constinit ETWRT_FAST_TLS GUID t_activity_id = {0, 0, 0, {0, 0, 0, 0, 0, 0, 0, 0}};

// TraceEvent's and TraceMessage's way into one session (classic.cc): the same per-thread
// writers as EventWrite, so classic and manifest events of a thread share its buffer.
ULONG write_to_pool(SessionPool* pool, const dataplane::EventInput& in) {
  switch (writer_for(pool).write(in, 0, 1u << pool->index)) {
    case dataplane::WriteResult::written: return ERROR_SUCCESS;
    case dataplane::WriteResult::lost: return ERROR_NOT_ENOUGH_MEMORY;
    case dataplane::WriteResult::too_large: return ERROR_MORE_DATA;
  }
  return ERROR_NOT_ENOUGH_MEMORY;
}

}  // namespace etwrt

extern "C" {

BOOLEAN EVNTAPI EventEnabled(REGHANDLE RegHandle, PCEVENT_DESCRIPTOR EventDescriptor) {
  const Registration* registration = registration_of(RegHandle);
  if (registration == nullptr || EventDescriptor == nullptr) return FALSE;
  const BOOLEAN answer =
      registration->table.accepts(EventDescriptor->Level, EventDescriptor->Keyword);
  if (etwrt::observe::on()) [[unlikely]] {
    etwrt::observe::enabled_query("EventEnabled", RegHandle, EventDescriptor->Level,
                                  EventDescriptor->Keyword, answer);
  }
  return answer;
}

BOOLEAN EVNTAPI EventProviderEnabled(REGHANDLE RegHandle, UCHAR Level, ULONGLONG Keyword) {
  const Registration* registration = registration_of(RegHandle);
  if (registration == nullptr) return FALSE;
  const BOOLEAN answer = registration->table.accepts(Level, Keyword);
  if (etwrt::observe::on()) [[unlikely]] {
    etwrt::observe::enabled_query("EventProviderEnabled", RegHandle, Level, Keyword, answer);
  }
  return answer;
}

ULONG EVNTAPI EventWrite(REGHANDLE RegHandle, PCEVENT_DESCRIPTOR EventDescriptor,
                         ULONG UserDataCount, PEVENT_DATA_DESCRIPTOR UserData) {
  if (bad_arguments(EventDescriptor, UserDataCount, UserData)) [[unlikely]]
    return ERROR_INVALID_PARAMETER;
  if (etwrt::observe::on()) [[unlikely]]
    return observed_write(RegHandle, EventDescriptor, UserDataCount, UserData);
  Registration* const registration = registration_of(RegHandle);
  if (no_session(registration)) [[likely]]
    return ERROR_SUCCESS;
  return etwrt::guarded("EventWrite", [&] {
    return write_event(registration, *EventDescriptor, nullptr, nullptr, 0, UserDataCount,
                       UserData);
  });
}

ULONG EVNTAPI EventWriteTransfer(REGHANDLE RegHandle, PCEVENT_DESCRIPTOR EventDescriptor,
                                 LPCGUID ActivityId, LPCGUID RelatedActivityId, ULONG UserDataCount,
                                 PEVENT_DATA_DESCRIPTOR UserData) {
  if (bad_arguments(EventDescriptor, UserDataCount, UserData)) [[unlikely]]
    return ERROR_INVALID_PARAMETER;
  if (etwrt::observe::on()) [[unlikely]]
    return observed_write_transfer(RegHandle, EventDescriptor, ActivityId, RelatedActivityId,
                                   UserDataCount, UserData);
  Registration* const registration = registration_of(RegHandle);
  if (no_session(registration)) [[likely]]
    return ERROR_SUCCESS;
  return etwrt::guarded("EventWriteTransfer", [&] {
    return write_event(registration, *EventDescriptor, ActivityId, RelatedActivityId, 0,
                       UserDataCount, UserData);
  });
}

ULONG EVNTAPI EventWriteEx(REGHANDLE RegHandle, PCEVENT_DESCRIPTOR EventDescriptor, ULONG64 Filter,
                           ULONG Flags, LPCGUID ActivityId, LPCGUID RelatedActivityId,
                           ULONG UserDataCount, PEVENT_DATA_DESCRIPTOR UserData) {
  if (bad_arguments(EventDescriptor, UserDataCount, UserData) | ((Flags & ~kUserWriteFlags) != 0))
      [[unlikely]]
    return ERROR_INVALID_PARAMETER;
  if (etwrt::observe::on()) [[unlikely]]
    return observed_write_ex(RegHandle, EventDescriptor, Filter, Flags, ActivityId,
                             RelatedActivityId, UserDataCount, UserData);
  Registration* const registration = registration_of(RegHandle);
  if (no_session(registration)) [[likely]]
    return ERROR_SUCCESS;
  return etwrt::guarded("EventWriteEx", [&] {
    return write_event(registration, *EventDescriptor, ActivityId, RelatedActivityId, Filter,
                       UserDataCount, UserData, 0, Flags);
  });
}

ULONG EVNTAPI EventWriteString(REGHANDLE RegHandle, UCHAR Level, ULONGLONG Keyword, PCWSTR String) {
  return etwrt::guarded("EventWriteString", [&]() -> ULONG {
    if (String == nullptr) return ERROR_INVALID_PARAMETER;
    EVENT_DESCRIPTOR descriptor{};
    descriptor.Level = Level;
    descriptor.Keyword = Keyword;
    std::size_t length = 0;
    while (String[length] != 0) ++length;
    EVENT_DATA_DESCRIPTOR data;
    EventDataDescCreate(&data, String, static_cast<ULONG>((length + 1) * sizeof(WCHAR)));
    if (etwrt::observe::on()) [[unlikely]] {
      etwrt::observe::Delivered to;
      const ULONG status =
          write_event<true>(registration_of(RegHandle), descriptor, nullptr, nullptr, 0, 1, &data,
                            EVENT_HEADER_FLAG_STRING_ONLY, 0, nullptr, &to);
      etwrt::observe::write("EventWriteString", RegHandle, descriptor, to);
      return status;
    }
    return write_event(registration_of(RegHandle), descriptor, nullptr, nullptr, 0, 1, &data,
                       EVENT_HEADER_FLAG_STRING_ONLY);
  });
}

}  // extern "C"
