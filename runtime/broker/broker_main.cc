// etwrt-broker: ETW's kernel part for etwrt. Owns the sessions, the provider registrations of
// every connected process and the enable state; computes the per-provider aggregates and sends
// each registration its enable notifications. One per ETWRT_HOME (flock on broker.lock);
// single-threaded poll loop; exits when it has had no session and no client for a while.
#include "enable_filters.h"
#include "enable_table.h"
#include "requests.h"
#include "wire.h"
#if defined(ETWRT_MUTANTS)
#include "etwrt_mutant.h"
#endif

#include <etwrt/dataplane.h>

#include <windows.h>
#include <evntrace.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <random>
#include <string>
#include <thread>
#include <variant>
#include <vector>

namespace etwrt {
namespace {

using json = nlohmann::json;
using namespace etwrt::broker;
using Clock = std::chrono::steady_clock;

volatile sig_atomic_t g_stop = 0;

std::string guid_key(const GUID& g) { return std::string(reinterpret_cast<const char*>(&g), 16); }

struct Enable {
  SessionFilter filter;
  GUID source{};
  std::optional<FilterBlob> provider_filter;
  std::vector<FilterBlob> system_filters;  // Applied per session on the event path.
  // Set when this enable comes from a provider group the session enabled (GRP-ENABLE): the
  // group's GUID key. Such enables are derived, kept in step by sync_groups().
  std::string via_group;
};

// What an EnableTraceEx2 request (direct or through a group) asks of a provider.
Enable enable_from(const EnableRequest& request, const GUID& source) {
  Enable e;
  e.filter.level = request.level;
  e.filter.match_any = request.any;
  e.filter.match_all = request.all;
  e.filter.enable_property = request.property;
  e.source = source;
  e.provider_filter = request.provider_filter;
  e.system_filters = request.system_filters;
  return e;
}

struct Session {
  std::uint64_t handle = 0;
  std::string name;
  GUID guid{};
  std::string log_file;
  ULONG buffer_size_kb = 0;
  ULONG minimum_buffers = 0;
  ULONG maximum_buffers = 0;
  ULONG maximum_file_size = 0;
  ULONG log_file_mode = 0;
  ULONG flush_timer = 0;
  ULONG enable_flags = 0;
  std::map<std::string, Enable> enables;  // By provider GUID key.
  // The event path: the session's buffers, shared by fd with providers and consumers, and
  // the id peers know them by (never reused, unlike handles, across broker restarts).
  std::unique_ptr<dataplane::Pool> pool;
  std::uint64_t pool_id = 0;
  // Provider groups this session enabled (EVENT_ENABLE_PROPERTY_PROVIDER_GROUP), by group GUID
  // key, and the providers it keeps out of them (TraceSetDisallowList), by provider GUID key.
  std::map<std::string, Enable> group_enables;
  std::set<std::string> disallow;
};

struct Registration {
  int fd = -1;
  std::uint64_t token = 0;
  GUID guid{};
  bool traits_set = false;
  std::string traits_name;
  std::optional<GUID> group;  // EtwProviderTraitTypeGroup of its traits, if any.
  bool classic = false;       // RegisterTraceGuids: one enabling session at a time.
};

struct Connection {
  int fd = -1;
  bool allowed = false;
  FrameReader reader;
  std::vector<std::uint64_t> pending_waits;  // Wait ids this peer still has to ack.
  std::set<std::uint64_t> pools;  // Pool ids whose fd this peer got (it maps each once).
};

struct Wait {
  int controller_fd = -1;
  json request_id;
  int remaining = 0;
};

class Broker {
 public:
  Broker(std::string home, int listen_fd, std::chrono::milliseconds idle)
      : home_(std::move(home)), listen_fd_(listen_fd), idle_(idle) {}

  void run();

 private:
  void accept_client();
  void read_client(int fd);
  void drop_client(int fd);
  void handle(Connection& conn, const json& frame);
  json on_register(Connection& conn, const RegisterRequest& request);
  json on_unregister(Connection& conn, const UnregisterRequest& request);
  json on_set_traits(Connection& conn, const SetTraitsRequest& request);
  json on_start(const StartRequest& request);
  json on_control(const ControlRequest& request);
  // Returns nullopt when the reply is deferred until the callbacks have been acknowledged.
  std::optional<json> on_enable(Connection& conn, const EnableRequest& request, const json& id);
  void on_ack(Connection& conn, const AckRequest& request);
  // Replies itself: the reply carries the session's pool fd.
  void on_open(Connection& conn, const OpenRequest& request, const json& id);
  // Sends `fd` the pools of `key`'s enabling sessions it does not have yet; false on failure.
  bool send_pools(int fd, const std::string& key);
  void recover_pools();
  // Provider groups (groups section below).
  std::optional<json> on_group_enable(Connection& conn, const EnableRequest& request,
                                      const json& id, Session& session, const GUID& source);
  json on_disallow(const DisallowRequest& request);
  // Brings every session's group-derived enables in line with its group enables, disallow
  // list and the current members; notifies each provider whose enables changed. Returns how
  // many notifications went out (counted into `wait_id` when != 0).
  int sync_groups(const GUID& source, std::uint64_t wait_id);

  Session* find_session(std::uint64_t handle, const std::string& name);
  void stop_session(std::uint64_t handle);
  // The enabling sessions of a provider, in slot order, and the slot of each.
  std::vector<std::pair<int, const Enable*>> enables_of(const std::string& key) const;
  json sessions_json(const std::string& key) const;
  json aggregate_json(const std::string& key, ULONG is_enabled) const;
  json filter_chain(const std::string& key) const;
  // Sends a notification to every registration of `key`; counts them into `wait_id` if != 0.
  int notify(const std::string& key, const GUID& source, ULONG is_enabled, UCHAR level,
             std::uint64_t any, std::uint64_t all, const json& filter, std::uint64_t wait_id);
  void finish_wait(std::uint64_t wait_id);
  // A classic provider (RegisterTraceGuids) has one enabling session at a time: a new one
  // takes it over, the others silently lose it (EnableTraceEx2 doc; SES-CLASSIC-ONE).
  void take_over_classic(const std::string& key);
  static json properties_json(const Session& s);
  GUID random_guid();

  std::string home_;
  int listen_fd_;
  std::chrono::milliseconds idle_;
  std::map<int, Connection> conns_;
  std::map<std::uint64_t, Session> sessions_;
  std::map<std::string, std::array<std::uint64_t, kMaxSessionsPerProvider>> slots_;
  std::vector<Registration> registrations_;
  std::map<std::uint64_t, Wait> waits_;
  std::uint64_t next_handle_ = 1;
  std::uint64_t next_wait_ = 1;
  std::mt19937_64 random_{std::random_device{}()};
};

void Broker::run() {
  auto idle_since = Clock::now();
  auto last_sweep = Clock::now();
  while (g_stop == 0) {
    std::vector<pollfd> fds;
    fds.push_back({listen_fd_, POLLIN, 0});
    for (const auto& [fd, conn] : conns_) fds.push_back({fd, POLLIN, 0});
    const int ready = ::poll(fds.data(), fds.size(), 500);
    if (ready < 0 && errno != EINTR) break;
    if (ready > 0) {
      if ((fds[0].revents & POLLIN) != 0) accept_client();
      for (std::size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].revents != 0) read_client(fds[i].fd);
      }
    }
    if (Clock::now() - last_sweep > std::chrono::seconds(1)) {
      // Writers that died without their socket closing (forked children): hand their buffers on.
      recover_pools();
      last_sweep = Clock::now();
    }
    if (!sessions_.empty() || !conns_.empty()) {
      idle_since = Clock::now();
    } else if (Clock::now() - idle_since > idle_) {
      break;
    }
  }
}

void Broker::accept_client() {
  const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return;
  Connection conn;
  conn.fd = fd;
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
    conn.allowed = cred.uid == ::getuid() || cred.uid == 0;
  }
  // A peer that stops reading must not stall every other client forever.
  timeval timeout{2, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  conns_.emplace(fd, std::move(conn));
}

void Broker::read_client(int fd) {
  auto it = conns_.find(fd);
  if (it == conns_.end()) return;
  char buffer[65536];
  const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
  if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
    drop_client(fd);
    return;
  }
  if (n < 0) return;
  it->second.reader.append(buffer, static_cast<std::size_t>(n));
  for (;;) {
    auto found = conns_.find(fd);
    if (found == conns_.end()) return;
    bool corrupt = false;
    auto message = found->second.reader.next(corrupt);
    if (corrupt) {
      std::fprintf(stderr, "etwrt-broker: corrupt frame from fd %d, dropping it\n", fd);
      drop_client(fd);
      return;
    }
    if (!message) return;
    try {
      handle(found->second, *message);
    } catch (const std::exception& e) {
      // Requests are checked before use, so this is a fault of the broker itself; the peer
      // whose request met it is dropped (its request may be half done), everyone else stays.
      std::fprintf(stderr, "etwrt-broker: fault handling a request from fd %d: %s\n", fd,
                   e.what());
      drop_client(fd);
      return;
    }
  }
}

void Broker::drop_client(int fd) {
  auto it = conns_.find(fd);
  if (it == conns_.end()) return;
  const std::vector<std::uint64_t> pending = it->second.pending_waits;
  ::close(fd);
  conns_.erase(it);
  // A provider process that went away: its registrations vanish with it.
  std::erase_if(registrations_, [fd](const Registration& r) { return r.fd == fd; });
  sync_groups(GUID_NULL, 0);
  for (std::uint64_t wait : pending) finish_wait(wait);
  for (auto& [id, wait] : waits_) {
    if (wait.controller_fd == fd) wait.controller_fd = -1;
  }
  // A provider that died keeps what it committed; a consumer that died frees its claims.
  recover_pools();
}

void Broker::recover_pools() {
  for (auto& [handle, s] : sessions_) {
    if (s.pool) s.pool->recover_dead_peers();
  }
}

bool Broker::send_pools(int fd, const std::string& key) {
  auto conn = conns_.find(fd);
  if (conn == conns_.end()) return false;
  auto slots = slots_.find(key);
  if (slots == slots_.end()) return true;
  for (std::uint64_t handle : slots->second) {
    if (handle == 0) continue;
    const Session& s = sessions_.at(handle);
    if (!s.pool || conn->second.pools.contains(s.pool_id)) continue;
    if (!send_frame(fd, {{"op", "pool"}, {"pool", s.pool_id}}, s.pool->fd())) return false;
    conn->second.pools.insert(s.pool_id);
  }
  return true;
}

void Broker::on_open(Connection& conn, const OpenRequest& request, const json& id) {
  json reply = {{"id", id}};
  Session* s = nullptr;
  if (!conn.allowed) {
    reply["status"] = ERROR_ACCESS_DENIED;
  } else if ((s = find_session(0, request.name)) == nullptr || !s->pool) {
    reply["status"] = ERROR_WMI_INSTANCE_NOT_FOUND;
  } else if ((s->log_file_mode & EVENT_TRACE_REAL_TIME_MODE) == 0) {
    reply["status"] = ERROR_BAD_PATHNAME;  // etwrt choice: no realtime delivery to open.
  } else {
    reply["status"] = ERROR_SUCCESS;
    reply["pool"] = s->pool_id;
    reply["properties"] = properties_json(*s);
    reply["fd"] = true;
    if (send_frame(conn.fd, reply, s->pool->fd())) conn.pools.insert(s->pool_id);
    return;
  }
  send_frame(conn.fd, reply);
}

void Broker::handle(Connection& conn, const json& frame) {
  const int fd = conn.fd;
  const Decoded decoded = decode_request(frame);
  if (const auto* bad = std::get_if<DecodeError>(&decoded)) {
    std::fprintf(stderr, "etwrt-broker: refused a request from fd %d: %s\n", fd,
                 bad->reason.c_str());
    send_frame(fd, {{"id", bad->id}, {"status", bad->status}, {"reason", bad->reason}});
    return;
  }
  const Request& request = std::get<Request>(decoded);
  const RequestBody& body = request.body;
  if (const auto* open = std::get_if<OpenRequest>(&body)) return on_open(conn, *open, request.id);
  if (const auto* ack = std::get_if<AckRequest>(&body)) return on_ack(conn, *ack);
  json reply;
  if (!conn.allowed) {
    reply = {{"status", ERROR_ACCESS_DENIED}};
  } else if (std::holds_alternative<HelloRequest>(body)) {
    reply = {{"status", ERROR_SUCCESS}};
  } else if (const auto* r = std::get_if<RegisterRequest>(&body)) {
    reply = on_register(conn, *r);
  } else if (const auto* u = std::get_if<UnregisterRequest>(&body)) {
    reply = on_unregister(conn, *u);
  } else if (const auto* t = std::get_if<SetTraitsRequest>(&body)) {
    reply = on_set_traits(conn, *t);
  } else if (const auto* start = std::get_if<StartRequest>(&body)) {
    reply = on_start(*start);
  } else if (const auto* control = std::get_if<ControlRequest>(&body)) {
    reply = on_control(*control);
  } else if (const auto* enable = std::get_if<EnableRequest>(&body)) {
    auto immediate = on_enable(conn, *enable, request.id);
    if (!immediate) return;
    reply = *immediate;
  } else if (const auto* disallow = std::get_if<DisallowRequest>(&body)) {
    reply = on_disallow(*disallow);
  }
  reply["id"] = request.id;
  // Handling may have dropped this very peer (a failed notification to it).
  if (conns_.contains(fd)) send_frame(fd, reply);
}

std::vector<std::pair<int, const Enable*>> Broker::enables_of(const std::string& key) const {
  std::vector<std::pair<int, const Enable*>> out;
  auto slots = slots_.find(key);
  if (slots == slots_.end()) return out;
  for (int slot = 0; slot < static_cast<int>(kMaxSessionsPerProvider); ++slot) {
    const std::uint64_t handle = slots->second[slot];
    if (handle == 0) continue;
    const Session& s = sessions_.at(handle);
    out.emplace_back(slot, &s.enables.at(key));
  }
  return out;
}

json Broker::sessions_json(const std::string& key) const {
  json list = json::array();
  for (const auto& [slot, e] : enables_of(key)) {
    const Session& s = sessions_.at(slots_.at(key)[slot]);
    // The system filters the event path applies for this session (system_filters.h).
    json system = json::array();
    for (const FilterBlob& f : e->system_filters) {
      if (f.type == EVENT_FILTER_TYPE_PID || f.type == EVENT_FILTER_TYPE_EVENT_ID) {
        system.push_back({f.type, bytes_to_hex(f.data.data(), f.data.size())});
      }
    }
    list.push_back({e->filter.level, e->filter.match_any, e->filter.match_all,
                    e->filter.enable_property, s.pool_id, slot, system});
  }
  return list;
}

// Level = max, MatchAny = OR, MatchAll = AND over the enabling sessions; all 0 with none.
json Broker::aggregate_json(const std::string& key, ULONG is_enabled) const {
  UCHAR level = 0;
  std::uint64_t any = 0;
  std::uint64_t all = 0;
  bool first = true;
  for (const auto& [slot, e] : enables_of(key)) {
    level = std::max(level, e->filter.level);
    any |= e->filter.match_any;
    all = first ? e->filter.match_all : (all & e->filter.match_all);
    first = false;
  }
#if defined(ETWRT_MUTANTS)
  // Mutants: Level min instead of max, MatchAll OR instead of AND, MatchAny AND instead of OR.
  bool mutant_first = true;
  for (const auto& [slot, e] : enables_of(key)) {
    const auto& f = e->filter;
    if (etwrt::mutant::active("level-min")) level = mutant_first ? f.level : std::min(level, f.level);
    if (etwrt::mutant::active("all-or")) all = mutant_first ? f.match_all : (all | f.match_all);
    if (etwrt::mutant::active("any-and")) any = mutant_first ? f.match_any : (any & f.match_any);
    mutant_first = false;
  }
#endif
  return {{"is_enabled", first ? 0u : is_enabled}, {"level", level}, {"any", any}, {"all", all},
          {"sessions", sessions_json(key)}};
}

// One SCHEMATIZED descriptor whose data chains one EVENT_FILTER_HEADER block per enabling
// session that gave a provider-bound filter (seed 000: one filter from each such session),
// InstanceId = 1 << slot, NextOffset = distance to the next block (0 on the last). A
// provider-defined filter (no high bit) gets a header etwrt synthesizes: Id 0, Version 0,
// Size = header + data, its bytes after the header (etwrt choice: the documents name no other
// way to carry several sessions' filters in one descriptor). Blocks start on 8-byte boundaries
// so providers can read headers in place.
json Broker::filter_chain(const std::string& key) const {
  std::vector<std::uint8_t> chain;
  std::size_t last_header = 0;
  bool any = false;
  for (const auto& [slot, e] : enables_of(key)) {
    if (!e->provider_filter) continue;
    const FilterBlob& blob = *e->provider_filter;
    while (chain.size() % 8 != 0) chain.push_back(0);
    const std::size_t at = chain.size();
    if (any) {
      EVENT_FILTER_HEADER previous;
      std::memcpy(&previous, chain.data() + last_header, sizeof previous);
      previous.NextOffset = static_cast<ULONG>(at - last_header);
      std::memcpy(chain.data() + last_header, &previous, sizeof previous);
    }
    EVENT_FILTER_HEADER header{};
    if (blob.type == EVENT_FILTER_TYPE_SCHEMATIZED) {
      chain.insert(chain.end(), blob.data.begin(), blob.data.end());
      std::memcpy(&header, chain.data() + at, sizeof header);
    } else {
      header.Size = static_cast<ULONG>(sizeof header + blob.data.size());
      chain.resize(at + sizeof header);
      chain.insert(chain.end(), blob.data.begin(), blob.data.end());
    }
    header.InstanceId = 1ull << slot;
    header.NextOffset = 0;
    std::memcpy(chain.data() + at, &header, sizeof header);
    last_header = at;
    any = true;
  }
  if (!any) return nullptr;
  return {{"type", EVENT_FILTER_TYPE_SCHEMATIZED}, {"data", bytes_to_hex(chain.data(), chain.size())}};
}

int Broker::notify(const std::string& key, const GUID& source, ULONG is_enabled, UCHAR level,
                   std::uint64_t any, std::uint64_t all, const json& filter,
                   std::uint64_t wait_id) {
  json message = {{"op", "notify"},      {"source", guid_to_wire(source)},
                  {"is_enabled", is_enabled}, {"level", level},
                  {"any", any},          {"all", all},
                  {"filter", filter},    {"sessions", sessions_json(key)},
                  {"wait", wait_id}};
  int sent = 0;
  std::vector<int> failed;
  for (const Registration& r : registrations_) {
    if (guid_key(r.guid) != key) continue;
    message["token"] = r.token;
    if (!send_pools(r.fd, key) || !send_frame(r.fd, message)) {
      failed.push_back(r.fd);
      continue;
    }
    if (wait_id != 0) conns_.at(r.fd).pending_waits.push_back(wait_id);
    ++sent;
  }
  for (int fd : failed) drop_client(fd);
  return sent;
}

void Broker::finish_wait(std::uint64_t wait_id) {
  auto it = waits_.find(wait_id);
  if (it == waits_.end()) return;
  if (--it->second.remaining > 0) return;
  if (it->second.controller_fd >= 0) {
    send_frame(it->second.controller_fd, {{"id", it->second.request_id}, {"status", ERROR_SUCCESS}});
  }
  waits_.erase(it);
}

void Broker::take_over_classic(const std::string& key) {
  const bool classic = std::any_of(registrations_.begin(), registrations_.end(),
                                   [&](const Registration& r) {
                                     return r.classic && guid_key(r.guid) == key;
                                   });
  if (!classic) return;
  for (std::uint64_t& handle : slots_[key]) {
    if (handle == 0) continue;
    sessions_.at(handle).enables.erase(key);
    handle = 0;
  }
}

void Broker::on_ack(Connection& conn, const AckRequest& request) {
  const std::uint64_t wait_id = request.wait;
  auto pos = std::find(conn.pending_waits.begin(), conn.pending_waits.end(), wait_id);
  if (pos == conn.pending_waits.end()) return;  // Not ours to ack, or acked already.
  conn.pending_waits.erase(pos);
  finish_wait(wait_id);
}

json Broker::on_register(Connection& conn, const RegisterRequest& request) {
  Registration r;
  r.fd = conn.fd;
  r.token = request.token;
  r.guid = request.guid;
  r.classic = request.classic;
  const std::string key = guid_key(r.guid);
  registrations_.push_back(r);
  send_pools(conn.fd, key);  // Before the reply that names them.
  json reply = aggregate_json(key, 1);
  reply["status"] = ERROR_SUCCESS;
#if defined(ETWRT_MUTANTS)
  // Mutant: the registration-time callback gets the enabling session's SourceId, not GUID_NULL.
  if (etwrt::mutant::active("sourceid-preenabled-kept")) {
    for (const auto& [slot, e] : enables_of(key)) {
      reply["mutant_source"] = guid_to_wire(e->source);
      break;
    }
  }
#endif
  return reply;
}

json Broker::on_unregister(Connection& conn, const UnregisterRequest& request) {
  const auto token = request.token;
  const auto before = registrations_.size();
  std::erase_if(registrations_,
                [&](const Registration& r) { return r.fd == conn.fd && r.token == token; });
  if (registrations_.size() != before) sync_groups(GUID_NULL, 0);
  return {{"status", registrations_.size() == before ? ERROR_INVALID_HANDLE : ERROR_SUCCESS}};
}

json Broker::on_set_traits(Connection& conn, const SetTraitsRequest& request) {
  const auto token = request.token;
  for (Registration& r : registrations_) {
    if (r.fd != conn.fd || r.token != token) continue;
#if defined(ETWRT_MUTANTS)
    // Mutant: traits are accepted again and again.
    if (etwrt::mutant::active("traits-twice")) r.traits_set = false;
#endif
    // Seed 001: traits can be set once per registration; later attempts fail. etwrt choice:
    // ERROR_ALREADY_EXISTS (no public source names the code Windows returns).
    if (r.traits_set) return {{"status", ERROR_ALREADY_EXISTS}};
    r.traits_set = true;
    r.traits_name = request.name;
    r.group = request.group;
    // A registration that joins a group some session enabled is enabled now (GRP-ENABLE:
    // present and future members).
    if (r.group) sync_groups(GUID_NULL, 0);
    return {{"status", ERROR_SUCCESS}};
  }
  return {{"status", ERROR_INVALID_HANDLE}};
}

GUID Broker::random_guid() {
  GUID g;
  const std::uint64_t a = random_();
  const std::uint64_t b = random_();
  std::memcpy(&g, &a, 8);
  std::memcpy(reinterpret_cast<char*>(&g) + 8, &b, 8);
  g.Data3 = static_cast<std::uint16_t>((g.Data3 & 0x0fff) | 0x4000);  // Version 4.
  g.Data4[0] = static_cast<std::uint8_t>((g.Data4[0] & 0x3f) | 0x80);
  return g;
}

json Broker::properties_json(const Session& s) {
  dataplane::Counters c;
  if (s.pool) c = s.pool->query();
  return {{"handle", s.handle},
          {"name", s.name},
          {"guid", guid_to_wire(s.guid)},
          {"log_file", s.log_file},
          {"buffer_size", s.buffer_size_kb},
          {"minimum_buffers", s.minimum_buffers},
          {"maximum_buffers", s.maximum_buffers},
          {"maximum_file_size", s.maximum_file_size},
          {"log_file_mode", s.log_file_mode},
          {"flush_timer", s.flush_timer},
          {"enable_flags", s.enable_flags},
          {"number_of_buffers", c.number_of_buffers},
          {"free_buffers", c.free_buffers},
          {"events_lost", c.events_lost},
          {"buffers_written", c.buffers_written},
          {"log_buffers_lost", 0},
          {"real_time_buffers_lost", c.realtime_buffers_lost},
          {"real_time_events_lost", c.realtime_events_lost},
          {"events_delivered", c.events_delivered}};
}

json Broker::on_start(const StartRequest& request) {
  const std::string& name = request.name;
  for (const auto& [handle, s] : sessions_) {
    if (s.name == name) return {{"status", ERROR_ALREADY_EXISTS}};
  }
  Session s;
  s.handle = next_handle_++;
  s.name = name;
  s.guid = request.guid;
  if (s.guid == GUID_NULL) s.guid = random_guid();
  s.log_file = request.log_file;
  s.log_file_mode = request.log_file_mode;
  s.flush_timer = request.flush_timer;
  s.enable_flags = request.enable_flags;
  s.maximum_file_size = request.maximum_file_size;
  // Defaults and clamps as Windows applies them (observed): a 64 KB buffer when 0 is given,
  // at most 16 MB; at least two buffers per processor; at least 20 more maximum than minimum.
  s.buffer_size_kb = request.buffer_size;
  if (s.buffer_size_kb == 0) s.buffer_size_kb = 64;
  s.buffer_size_kb = std::min<ULONG>(s.buffer_size_kb, 16 * 1024);
  const ULONG processors = std::max(1u, std::thread::hardware_concurrency());
  s.minimum_buffers = std::max(request.minimum_buffers, 2 * processors);
  s.maximum_buffers = std::max(request.maximum_buffers, s.minimum_buffers + 20);
  dataplane::PoolConfig config;
  config.buffer_size_kb = s.buffer_size_kb;
  config.minimum_buffers = s.minimum_buffers;
  config.maximum_buffers = s.maximum_buffers;
  config.flush_timer_s = s.flush_timer;
  config.realtime = (s.log_file_mode & EVENT_TRACE_REAL_TIME_MODE) != 0;
  try {
    s.pool = std::make_unique<dataplane::Pool>(dataplane::Pool::create(config, "etwrt-" + name));
  } catch (const dataplane::Error& e) {
    std::fprintf(stderr, "etwrt-broker: session %s: %s\n", name.c_str(), e.what());
    return {{"status", ERROR_INVALID_PARAMETER}};
  }
  s.pool_id = random_() | 1;  // 0 means "no pool" to clients.
  const auto handle = s.handle;
  sessions_.emplace(handle, std::move(s));
  return {{"status", ERROR_SUCCESS}, {"properties", properties_json(sessions_.at(handle))}};
}

Session* Broker::find_session(std::uint64_t handle, const std::string& name) {
  if (handle != 0) {
    auto it = sessions_.find(handle);
    return it == sessions_.end() ? nullptr : &it->second;
  }
  for (auto& [h, s] : sessions_) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

void Broker::stop_session(std::uint64_t handle) {
  Session& s = sessions_.at(handle);
  std::vector<std::string> keys;
  for (const auto& [key, e] : s.enables) keys.push_back(key);
  for (const std::string& key : keys) {
    auto& slots = slots_[key];
    std::replace(slots.begin(), slots.end(), handle, std::uint64_t{0});
    s.enables.erase(key);
    const json agg = aggregate_json(key, 1);
    // A stopping session notifies with SourceId GUID_NULL.
    const json filter = agg["is_enabled"] != 0u ? filter_chain(key) : json(nullptr);
#if defined(ETWRT_MUTANTS)
    // Mutant: a stopping session leaves its providers without a callback.
    if (etwrt::mutant::active("no-stop-callback")) continue;
#endif
    notify(key, GUID_NULL, agg["is_enabled"], agg["level"], agg["any"], agg["all"], filter, 0);
  }
  // Consumers drain what is left and return from ProcessTrace; peers keep their own mapping.
  std::vector<int> failed;
  for (auto& [fd, conn] : conns_) {
    if (!conn.pools.contains(s.pool_id)) continue;
    if (!send_frame(fd, {{"op", "stopped"}, {"pool", s.pool_id}})) failed.push_back(fd);
  }
  for (int fd : failed) drop_client(fd);
  sessions_.erase(handle);
}

json Broker::on_control(const ControlRequest& request) {
  Session* s = find_session(request.handle, request.name);
  if (s == nullptr) return {{"status", ERROR_WMI_INSTANCE_NOT_FOUND}};
  const ULONG code = request.code;
  if (code == EVENT_TRACE_CONTROL_UPDATE) {
    // What an UPDATE may change (documented: flush timer, maximum buffers, enable flags,
    // the real-time bit); zero means keep.
    const ULONG flush = request.flush_timer;
    if (flush != 0) s->flush_timer = flush;
    const ULONG maximum = request.maximum_buffers;
    if (maximum != 0) s->maximum_buffers = std::max(maximum, s->minimum_buffers);
    const ULONG flags = request.enable_flags;
    if (flags != 0) s->enable_flags = flags;
    const ULONG mode = request.log_file_mode;
    if (mode != 0) {
      s->log_file_mode = (s->log_file_mode & ~ULONG{EVENT_TRACE_REAL_TIME_MODE}) |
                         (mode & EVENT_TRACE_REAL_TIME_MODE);
    }
  }
  json reply = {{"status", ERROR_SUCCESS}, {"properties", properties_json(*s)}};
  if (code == EVENT_TRACE_CONTROL_FLUSH && s->pool) s->pool->request_flush();
  if (code == EVENT_TRACE_CONTROL_STOP) stop_session(s->handle);
  return reply;
}

std::optional<json> Broker::on_enable(Connection& conn, const EnableRequest& request,
                                      const json& id) {
  const auto handle = request.handle;
  auto it = sessions_.find(handle);
  if (it == sessions_.end()) return json{{"status", ERROR_INVALID_HANDLE}};
  Session& session = it->second;
  // NULL EnableParameters: the session's own GUID.
  const GUID source = request.source.value_or(session.guid);
  if ((request.property & EVENT_ENABLE_PROPERTY_PROVIDER_GROUP) != 0) {
    return on_group_enable(conn, request, id, session, source);
  }
  const std::string key = guid_key(request.provider);
  const ULONG code = request.code;
  const bool wait = request.wait;
  std::uint64_t wait_id = wait ? next_wait_++ : 0;
  if (wait) waits_[wait_id] = Wait{conn.fd, id, 1};

  if (code == EVENT_CONTROL_CODE_ENABLE_PROVIDER) {
    auto& slots = slots_[key];
#if defined(ETWRT_MUTANTS)
    // Mutant: a second session enabling a classic provider shares it instead of taking it over.
    if (!etwrt::mutant::active("classic-shared"))
#endif
    if (!session.enables.contains(key)) take_over_classic(key);
    if (!session.enables.contains(key)) {
      auto free = std::find(slots.begin(), slots.end(), std::uint64_t{0});
      if (free == slots.end()) {
        waits_.erase(wait_id);
        return json{{"status", ERROR_NO_SYSTEM_RESOURCES}};
      }
      *free = handle;
    }
    session.enables[key] = enable_from(request, source);
    const json filter = filter_chain(key);
    const json agg = aggregate_json(key, 1);
    const int sent = notify(key, source, 1, agg["level"], agg["any"], agg["all"], filter, wait_id);
    if (wait) waits_[wait_id].remaining += sent;
  } else if (code == EVENT_CONTROL_CODE_DISABLE_PROVIDER) {
    // A direct disable leaves what the session enabled through a group alone.
    auto direct = session.enables.find(key);
    if (direct != session.enables.end() && direct->second.via_group.empty()) {
      session.enables.erase(direct);
      auto& slots = slots_[key];
      std::replace(slots.begin(), slots.end(), handle, std::uint64_t{0});
      json agg = aggregate_json(key, 1);
#if defined(ETWRT_MUTANTS)
      // Mutant: DISABLE_PROVIDER although other sessions still enable the provider.
      if (etwrt::mutant::active("disable-while-enabled")) agg["is_enabled"] = 0u;
#endif
      // Still enabled by others: their filters, as with any enable notification.
      const json filter = agg["is_enabled"] != 0u ? filter_chain(key) : json(nullptr);
      const int sent = notify(key, source, agg["is_enabled"], agg["level"], agg["any"],
                              agg["all"], filter, wait_id);
      if (wait) waits_[wait_id].remaining += sent;
      // A member of a group the session enables falls back to the group's settings.
      const int derived = sync_groups(source, wait_id);
      if (wait) waits_[wait_id].remaining += derived;
    }
  } else if (code == EVENT_CONTROL_CODE_CAPTURE_STATE) {
    // Capture state: IsEnabled 2 with the call's own level and keywords; aggregates unchanged.
    json filter = nullptr;
    if (request.provider_filter) {
      filter = {{"type", request.provider_filter->type},
                {"data", bytes_to_hex(request.provider_filter->data.data(),
                                      request.provider_filter->data.size())}};
    }
    const int sent = notify(key, source, 2, request.level, request.any, request.all, filter,
                            wait_id);
    if (wait) waits_[wait_id].remaining += sent;
  } else {
    waits_.erase(wait_id);
    return json{{"status", ERROR_INVALID_PARAMETER}};
  }
  if (!wait) return json{{"status", ERROR_SUCCESS}};
  // The initial 1 kept the wait alive while notifications went out; drop it now.
  auto pending = waits_.find(wait_id);
  if (pending != waits_.end() && pending->second.remaining == 1) {
    waits_.erase(pending);
    return json{{"status", ERROR_SUCCESS}};
  }
  if (pending != waits_.end()) --pending->second.remaining;
  return std::nullopt;
}

// --- Provider groups (GRP-*) ----------------------------------------------------------------
// A group enable is kept per session by group GUID; sync_groups() derives from it one enable
// per member provider GUID (a registration whose traits named the group), as if the session
// had enabled that provider directly, unless the session enables it directly or disallows it.
// Membership is by provider GUID: a registration of a member's GUID is reached too (etwrt
// choice; the documents do not say how registrations of one GUID with different traits mix).

std::optional<json> Broker::on_group_enable(Connection& conn, const EnableRequest& request,
                                            const json& id, Session& session,
                                            const GUID& source) {
  // GRP-NO-PRIVATE. No document names the status: etwrt returns ERROR_NOT_SUPPORTED.
  if ((session.log_file_mode & EVENT_TRACE_PRIVATE_LOGGER_MODE) != 0) {
    return json{{"status", ERROR_NOT_SUPPORTED}};
  }
  const std::string gkey = guid_key(request.provider);  // The group's GUID.
  const ULONG code = request.code;
  const bool wait = request.wait;
  const std::uint64_t wait_id = wait ? next_wait_++ : 0;
  if (wait) waits_[wait_id] = Wait{conn.fd, id, 1};
  int sent = 0;
  if (code == EVENT_CONTROL_CODE_ENABLE_PROVIDER) {
    Enable e = enable_from(request, source);
    // GRP-NO-ID-FILTERS (observed): event ID, event name and payload filters do not apply to
    // groups; scope filters (PID) do.
    std::erase_if(e.system_filters, [](const FilterBlob& b) {
      return b.type == EVENT_FILTER_TYPE_EVENT_ID || b.type == EVENT_FILTER_TYPE_EVENT_NAME ||
             b.type == EVENT_FILTER_TYPE_PAYLOAD;
    });
    session.group_enables[gkey] = std::move(e);
    sent = sync_groups(source, wait_id);
  } else if (code == EVENT_CONTROL_CODE_DISABLE_PROVIDER) {
    if (session.group_enables.erase(gkey) > 0) sent = sync_groups(source, wait_id);
  } else if (code == EVENT_CONTROL_CODE_CAPTURE_STATE) {
    std::set<std::string> keys;
    for (const Registration& r : registrations_) {
      if (r.group && guid_key(*r.group) == gkey) keys.insert(guid_key(r.guid));
    }
    for (const std::string& key : keys) {
      sent += notify(key, source, 2, request.level, request.any, request.all, nullptr, wait_id);
    }
  } else {
    waits_.erase(wait_id);
    return json{{"status", ERROR_INVALID_PARAMETER}};
  }
  if (!wait) return json{{"status", ERROR_SUCCESS}};
  auto pending = waits_.find(wait_id);
  if (pending == waits_.end()) return json{{"status", ERROR_SUCCESS}};
  pending->second.remaining += sent;
  if (pending->second.remaining == 1) {
    waits_.erase(pending);
    return json{{"status", ERROR_SUCCESS}};
  }
  --pending->second.remaining;
  return std::nullopt;
}

json Broker::on_disallow(const DisallowRequest& request) {
  Session* s = find_session(request.handle, "");
  if (s == nullptr) return {{"status", ERROR_INVALID_HANDLE}};
  std::set<std::string> keys;
  for (const GUID& guid : request.guids) keys.insert(guid_key(guid));
  // The list replaces the previous one and applies to what is enabled already (GRP-DISALLOW).
  s->disallow = std::move(keys);
  sync_groups(s->guid, 0);
  return {{"status", ERROR_SUCCESS}};
}

int Broker::sync_groups(const GUID& source, std::uint64_t wait_id) {
  std::map<std::string, std::set<std::string>> member_groups;  // provider key -> group keys
  for (const Registration& r : registrations_) {
    if (r.group) member_groups[guid_key(r.guid)].insert(guid_key(*r.group));
  }
  std::map<std::string, GUID> changed;  // provider key -> SourceId of its notification
  for (auto& [handle, s] : sessions_) {
    std::map<std::string, std::pair<std::string, const Enable*>> want;  // key -> (group, enable)
    for (const auto& [key, groups] : member_groups) {
#if defined(ETWRT_MUTANTS)
      // Mutant: the session's disallow list is ignored.
      if (!etwrt::mutant::active("disallow-ignored"))
#endif
      if (s.disallow.contains(key)) continue;
      for (const std::string& g : groups) {
        auto it = s.group_enables.find(g);
        if (it == s.group_enables.end()) continue;
        want[key] = {g, &it->second};
        break;
      }
    }
    std::vector<std::string> gone;
    for (auto& [key, e] : s.enables) {
      if (e.via_group.empty()) continue;
      auto w = want.find(key);
      if (w == want.end()) {
        gone.push_back(key);
        continue;
      }
      const Enable& g = *w->second.second;
      if (e.via_group != w->second.first || e.filter.level != g.filter.level ||
          e.filter.match_any != g.filter.match_any || e.filter.match_all != g.filter.match_all ||
          e.filter.enable_property != g.filter.enable_property) {
        e = g;
        e.via_group = w->second.first;
        changed.emplace(key, g.source);
      }
    }
    for (const std::string& key : gone) {
      s.enables.erase(key);
      auto& slots = slots_[key];
      std::replace(slots.begin(), slots.end(), handle, std::uint64_t{0});
      changed.emplace(key, source);
    }
    for (const auto& [key, w] : want) {
      if (s.enables.contains(key)) continue;  // Enabled directly, or derived already.
      auto& slots = slots_[key];
      auto free = std::find(slots.begin(), slots.end(), std::uint64_t{0});
      if (free == slots.end()) {
        std::fprintf(stderr, "etwrt-broker: session %s: group enable of a provider that already "
                     "has %zu sessions not applied\n", s.name.c_str(), kMaxSessionsPerProvider);
        continue;
      }
      *free = handle;
      Enable e = *w.second;
      e.via_group = w.first;
      s.enables[key] = std::move(e);
      changed.emplace(key, w.second->source);
    }
  }
  int sent = 0;
  for (const auto& [key, src] : changed) {
    const json agg = aggregate_json(key, 1);
    const json filter = agg["is_enabled"] != 0u ? filter_chain(key) : json(nullptr);
    sent += notify(key, src, agg["is_enabled"], agg["level"], agg["any"], agg["all"], filter,
                   wait_id);
  }
  return sent;
}

void on_signal(int) { g_stop = 1; }

}  // namespace
}  // namespace etwrt

int main(int argc, char** argv) {
  using namespace etwrt;
  std::string home = broker_home();
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--home") == 0) home = argv[i + 1];
  }
  std::string error;
  if (!ensure_private_dir(home, error)) {
    std::fprintf(stderr, "etwrt-broker: %s\n", error.c_str());
    return 1;
  }
  const int lock_fd = ::open(lock_path(home).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd < 0) {
    std::fprintf(stderr, "etwrt-broker: cannot open %s: %s\n", lock_path(home).c_str(),
                 std::strerror(errno));
    return 1;
  }
  // Another broker already serves this home: the starter that raced us will reach it.
  if (::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) return 0;

  const std::string path = socket_path(home);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof address.sun_path) {
    std::fprintf(stderr, "etwrt-broker: socket path too long: %s\n", path.c_str());
    return 1;
  }
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  ::unlink(path.c_str());  // A stale socket of a broker that died; we hold the lock.
  const int listen_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const mode_t old_mask = ::umask(0177);
  const int bound = ::bind(listen_fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  ::umask(old_mask);
  if (listen_fd < 0 || bound != 0 || ::listen(listen_fd, 64) != 0) {
    std::fprintf(stderr, "etwrt-broker: cannot listen on %s: %s\n", path.c_str(),
                 std::strerror(errno));
    return 1;
  }
  ::chmod(path.c_str(), 0600);
  {
    std::ofstream pid_file(pid_path(home), std::ios::trunc);
    pid_file << ::getpid() << "\n";
  }
  struct sigaction action {};
  action.sa_handler = on_signal;
  ::sigaction(SIGTERM, &action, nullptr);
  ::sigaction(SIGINT, &action, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  long idle_ms = 3000;
  if (const char* idle = std::getenv("ETWRT_BROKER_IDLE_MS"); idle != nullptr) {
    idle_ms = std::max(100L, std::strtol(idle, nullptr, 10));
  }
  Broker broker(home, listen_fd, std::chrono::milliseconds(idle_ms));
  broker.run();
  // Unlink while still holding the lock, so a new broker never loses its fresh socket to us.
  ::unlink(path.c_str());
  ::unlink(pid_path(home).c_str());
  ::close(listen_fd);
  return 0;
}
