#include "broker_state.h"

#include "wire.h"
#if defined(ETWRT_MUTANTS)
#include "etwrt_mutant.h"
#endif

#include <evntrace.h>

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <thread>
#include <variant>

namespace etwrt::broker {

using json = nlohmann::json;

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

namespace {

// Logger names are not case-sensitive on Windows (a second StartTrace whose name differs only
// in case is ERROR_ALREADY_EXISTS; controls by name match the same way). etwrt folds ASCII
// letters only (the names travel as UTF-8; see docs/etwrt/conformance.md, the audit table).
bool same_session_name(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto fold = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
    if (fold(a[i]) != fold(b[i])) return false;
  }
  return true;
}

// Now as a FILETIME (100 ns since 1601).
std::int64_t file_time_now() {
  timespec real{};
  ::clock_gettime(CLOCK_REALTIME, &real);
  return 116444736000000000LL + real.tv_sec * 10000000LL + real.tv_nsec / 100;
}

}  // namespace

std::string guid_key(const GUID& g) { return std::string(reinterpret_cast<const char*>(&g), 16); }

void BrokerState::connect(PeerId peer, bool allowed, std::uint32_t pid) {
  peers_[peer] = Peer{allowed, {}, {}, {}, pid};
}

bool BrokerState::allowed(PeerId peer) const {
  const auto it = peers_.find(peer);
  return it != peers_.end() && it->second.allowed;
}

void BrokerState::disconnect(PeerId id) {
  auto it = peers_.find(id);
  if (it == peers_.end()) return;
  const std::vector<std::uint64_t> pending = it->second.pending_waits;
  peers_.erase(it);
  for (auto& [wait_id, wait] : waits_) {
    if (wait.controller == id) wait.controller = -1;
  }
  // A provider process that went away: its registrations vanish with it.
  std::erase_if(registrations_, [id](const Registration& r) { return r.peer == id; });
  sync_groups(GUID_NULL, 0);
  for (std::uint64_t wait : pending) finish_wait(wait);
  // A provider that died keeps what it committed; a consumer that died frees its claims.
  recover_pools();
}

void BrokerState::recover_pools() {
  for (auto& [handle, s] : sessions_) {
    if (s.pool) s.pool->recover_dead_peers();
  }
  std::erase_if(draining_,
                [this](const Draining& entry) { return leave_pool_if_undrained(entry); });
}

// A stopped session's index leaves its pool once no connected process opened the session as a
// consumer (the hub that drains it takes it out itself) and no live one holds its reader: the
// buffers it alone still needed are freed. True when it is out.
bool BrokerState::leave_pool_if_undrained(const Draining& entry) {
  const auto& [pool, index, pool_id] = entry;
  pool->recover_dead_peers();
  if ((pool->sessions() & (1u << index)) == 0) return true;
  if (pool->reader_pid(index) != 0) return false;
  for (const auto& [id, peer] : peers_)
    if (peer.opened.contains(pool_id)) return false;
  try {
    pool->remove_session(index);
  } catch (const dataplane::Error&) {
    // Taken out meanwhile by the hub.
  }
  return true;
}

void BrokerState::send(PeerId peer, json message, std::shared_ptr<const dataplane::Pool> pool) {
  outbox_.push_back({peer, std::move(message), std::move(pool)});
}

void BrokerState::send_pools(PeerId id, const std::string& key) {
  auto peer = peers_.find(id);
  auto slots = slots_.find(key);
  if (peer == peers_.end() || slots == slots_.end()) return;
  for (std::uint64_t handle : slots->second) {
    if (handle == 0) continue;
    const Session& s = sessions_.at(handle);
    if (!s.pool || peer->second.pools.contains(s.pool_id)) continue;
    send(id,
         {{"op", "pool"},
          {"pool", s.pool_id},
          {"session", handle},
          {"index", s.pool_index},
          {"group", s.pool_group}},
         s.pool);
    peer->second.pools.insert(s.pool_id);
  }
}

void BrokerState::handle(PeerId id, const Request& request) {
  auto it = peers_.find(id);
  if (it == peers_.end()) return;
  Peer& peer = it->second;
  if (const auto* open = std::get_if<OpenRequest>(&request.body)) {
    return on_open(peer, id, *open, request.id);
  }
  if (const auto* ack = std::get_if<AckRequest>(&request.body)) return on_ack(peer, *ack);
  bool deferred = false;
  json reply =
      peer.allowed ? dispatch(id, request, deferred) : json{{"status", ERROR_ACCESS_DENIED}};
  if (deferred) return;
  reply["id"] = request.id;
  send(id, std::move(reply));
}

json BrokerState::dispatch(PeerId id, const Request& request, bool& deferred) {
  const RequestBody& body = request.body;
  if (std::holds_alternative<HelloRequest>(body)) return {{"status", ERROR_SUCCESS}};
  if (const auto* r = std::get_if<RegisterRequest>(&body)) return on_register(id, *r);
  if (const auto* u = std::get_if<UnregisterRequest>(&body)) return on_unregister(id, *u);
  if (const auto* t = std::get_if<SetTraitsRequest>(&body)) return on_set_traits(id, *t);
  if (const auto* start = std::get_if<StartRequest>(&body)) return on_start(*start);
  if (const auto* control = std::get_if<ControlRequest>(&body)) return on_control(*control);
  if (const auto* disallow = std::get_if<DisallowRequest>(&body)) return on_disallow(*disallow);
  if (std::holds_alternative<EnumerateRequest>(body)) return on_enumerate();
  if (const auto* providers = std::get_if<ProvidersRequest>(&body))
    return on_providers(id, *providers);
  if (const auto* info = std::get_if<SessionInfoRequest>(&body)) return on_session_info(*info);
  if (const auto* enable = std::get_if<EnableRequest>(&body)) {
    std::optional<json> immediate = on_enable(id, *enable, request.id);
    deferred = !immediate;
    return immediate.value_or(json());
  }
  return {{"status", ERROR_NOT_SUPPORTED}};
}

void BrokerState::on_open(Peer& peer, PeerId id, const OpenRequest& request, const json& rid) {
  json reply = {{"id", rid}};
  Session* s = nullptr;
  if (!peer.allowed) {
    reply["status"] = ERROR_ACCESS_DENIED;
  } else if ((s = find_session(0, request.name)) == nullptr || !s->pool) {
    reply["status"] = ERROR_WMI_INSTANCE_NOT_FOUND;
  } else if ((s->log_file_mode & EVENT_TRACE_REAL_TIME_MODE) == 0) {
    reply["status"] = ERROR_BAD_PATHNAME;  // etwrt choice: no realtime delivery to open.
  } else {
    reply["status"] = ERROR_SUCCESS;
    reply["pool"] = s->pool_id;
    reply["index"] = s->pool_index;
    reply["group"] = s->pool_group;
    reply["properties"] = properties_json(*s);
    reply["fd"] = true;
    peer.pools.insert(s->pool_id);
    peer.opened.insert(s->pool_id);
    send(id, std::move(reply), s->pool);
    return;
  }
  send(id, std::move(reply));
}

void BrokerState::on_ack(Peer& peer, const AckRequest& request) {
  auto pos = std::find(peer.pending_waits.begin(), peer.pending_waits.end(), request.wait);
  if (pos == peer.pending_waits.end()) return;  // Not ours to ack, or acked already.
  peer.pending_waits.erase(pos);
  finish_wait(request.wait);
}

json BrokerState::on_register(PeerId peer, const RegisterRequest& request) {
  Registration r;
  r.peer = peer;
  r.token = request.token;
  r.guid = request.guid;
  r.classic = request.classic;
  const std::string key = guid_key(r.guid);
  registrations_.push_back(r);
  send_pools(peer, key);  // Before the reply that names them.
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

json BrokerState::on_unregister(PeerId peer, const UnregisterRequest& request) {
  const auto before = registrations_.size();
  std::erase_if(registrations_,
                [&](const Registration& r) { return r.peer == peer && r.token == request.token; });
  if (registrations_.size() != before) sync_groups(GUID_NULL, 0);
  return {{"status", registrations_.size() == before ? ERROR_INVALID_HANDLE : ERROR_SUCCESS}};
}

json BrokerState::on_set_traits(PeerId peer, const SetTraitsRequest& request) {
  for (Registration& r : registrations_) {
    if (r.peer != peer || r.token != request.token) continue;
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

GUID BrokerState::random_guid() {
  GUID g;
  const std::uint64_t a = random_();
  const std::uint64_t b = random_();
  std::memcpy(&g, &a, 8);
  std::memcpy(reinterpret_cast<char*>(&g) + 8, &b, 8);
  g.Data3 = static_cast<std::uint16_t>((g.Data3 & 0x0fff) | 0x4000);  // Version 4.
  g.Data4[0] = static_cast<std::uint8_t>((g.Data4[0] & 0x3f) | 0x80);
  return g;
}

json BrokerState::properties_json(const Session& s) {
  dataplane::Counters c;
  if (s.pool) c = s.pool->query(s.pool_index);
  std::uint64_t log_buffers_lost = 0;
  if (s.logger) {  // A file session: what reached the file, and every loss on the way.
    const EtlCounts file = s.logger->counts();
    c.buffers_written = file.buffers_written;
    c.events_lost = s.logger->events_lost();
    log_buffers_lost = file.buffers_lost;
  }
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
          {"client_context", s.client_context},
          {"start_time", s.start_time},
          {"number_of_buffers", c.number_of_buffers},
          {"free_buffers", c.free_buffers},
          {"events_lost", c.events_lost},
          {"buffers_written", c.buffers_written},
          {"log_buffers_lost", log_buffers_lost},
          {"real_time_buffers_lost", c.realtime_buffers_lost},
          {"real_time_events_lost", c.realtime_events_lost},
          {"events_delivered", c.events_delivered}};
}

// Sessions that deliver in real time and are not private may share a pool (a private
// session's events never leave its process).
bool BrokerState::shares_pools(const SessionSettings& s) {
  return (s.log_file_mode & EVENT_TRACE_REAL_TIME_MODE) != 0 && s.log_file.empty() &&
         (s.log_file_mode & EVENT_TRACE_PRIVATE_LOGGER_MODE) == 0;
}

// Gives `s` an index in a running session's pool of the same geometry that has room for its
// buffers. False when none has.
bool BrokerState::join_shared_pool(Session& s) {
  if (!shares_pools(s)) return false;
  for (auto& [handle, other] : sessions_) {
    if (!other.pool || !shares_pools(other) || other.log_file_mode != s.log_file_mode ||
        other.buffer_size_kb != s.buffer_size_kb || other.flush_timer != s.flush_timer) {
      continue;
    }
    try {
      s.pool_index = other.pool->add_session(s.minimum_buffers, s.maximum_buffers);
    } catch (const dataplane::Error&) {
      continue;  // no index or no room left there
    }
    s.pool = other.pool;
    s.pool_group = other.pool_group;
    return true;
  }
  return false;
}

json BrokerState::on_start(const StartRequest& request) {
  const std::string& name = request.name;
  for (const auto& [handle, s] : sessions_) {
    if (same_session_name(s.name, name)) return {{"status", ERROR_ALREADY_EXISTS}};
    // StartTrace page: "A session with the same name or GUID is already running." (A private
    // logger's GUID is its provider's: not a session identity.)
    const bool private_logger = (request.log_file_mode & EVENT_TRACE_PRIVATE_LOGGER_MODE) != 0;
    if (!private_logger && request.guid != GUID_NULL && s.guid == request.guid) {
      return {{"status", ERROR_ALREADY_EXISTS}};
    }
  }
  // StartTrace: "the maximum number of logging sessions on the system has been reached"
  // (private sessions count too: etwrt choice, no page gives them a limit of their own).
  if (sessions_.size() >= max_sessions_) return {{"status", ERROR_NO_SYSTEM_RESOURCES}};
  Session s;
  static_cast<SessionSettings&>(s) = request;
  s.handle = next_handle_++;
  if (s.guid == GUID_NULL) s.guid = random_guid();
  if (s.client_context == 0) s.client_context = 1;
#if defined(ETWRT_MUTANTS)
  // Mutant: the session's clock is ignored; every session runs on QPC.
  if (etwrt::mutant::active("clock-ignored")) s.client_context = 1;
#endif
  s.start_time = file_time_now();
  const ULONG processors = std::max(1u, std::thread::hardware_concurrency());
  const BufferPlan plan = plan_buffers(request.buffer_size_kb, request.minimum_buffers,
                                       request.maximum_buffers, processors, pool_limit_bytes());
  s.buffer_size_kb = plan.buffer_size_kb;
  s.minimum_buffers = plan.minimum_buffers;
  s.maximum_buffers = plan.maximum_buffers;
  dataplane::PoolConfig config;
  config.buffer_size_kb = s.buffer_size_kb;
  config.minimum_buffers = s.minimum_buffers;
  config.maximum_buffers = s.maximum_buffers;
  config.flush_timer_s = s.flush_timer;
  config.realtime = (s.log_file_mode & EVENT_TRACE_REAL_TIME_MODE) != 0;
  s.pool_id = random_() | 1;  // 0 means "no pool" to clients.
  if (!join_shared_pool(s)) {
    // A pool of its own; one that later sessions may share is laid out for 8 sessions'
    // buffers (only the pages written are memory).
    if (shares_pools(s)) {
      const std::uint64_t fit = pool_limit_bytes() / (std::uint64_t{config.buffer_size_kb} * 1024);
      config.reserve_buffers = static_cast<std::uint32_t>(std::max<std::uint64_t>(
          config.maximum_buffers,
          std::min<std::uint64_t>(
              {std::uint64_t{config.maximum_buffers} * dataplane::kMaxPoolSessions, fit, 65536})));
    }
    try {
      s.pool = std::make_shared<dataplane::Pool>(dataplane::Pool::create(config, "etwrt-" + name));
    } catch (const dataplane::Error& e) {
      std::fprintf(stderr, "etwrt-broker: session %s: %s\n", name.c_str(), e.what());
      return {{"status", ERROR_INVALID_PARAMETER}};
    }
    s.pool_index = 0;
    s.pool_group = s.pool_id;
  }
  if (const ULONG status = start_logger(s); status != ERROR_SUCCESS) return {{"status", status}};
  const auto handle = s.handle;
  sessions_.emplace(handle, std::move(s));
  return {{"status", ERROR_SUCCESS}, {"properties", properties_json(sessions_.at(handle))}};
}

json BrokerState::on_enumerate() const {
  // QueryAllTraces "does not return private logging sessions".
  json list = json::array();
  for (const auto& [handle, s] : sessions_) {
    if ((s.log_file_mode & EVENT_TRACE_PRIVATE_LOGGER_MODE) == 0) {
      list.push_back(properties_json(s));
    }
  }
  return {{"status", ERROR_SUCCESS}, {"sessions", std::move(list)}};
}

Session* BrokerState::find_session(std::uint64_t handle, const std::string& name) {
  if (handle != 0) {
    auto it = sessions_.find(handle);
    return it == sessions_.end() ? nullptr : &it->second;
  }
  for (auto& [h, s] : sessions_) {
    if (same_session_name(s.name, name)) return &s;
  }
  return nullptr;
}

void BrokerState::stop_session(std::uint64_t handle) {
  Session& s = sessions_.at(handle);
  std::vector<std::string> keys;
  for (const auto& [key, e] : s.enables) keys.push_back(key);
  for (const std::string& key : keys) {
    auto& slots = slots_[key];
    std::replace(slots.begin(), slots.end(), handle, std::uint64_t{0});
    s.enables.erase(key);
#if defined(ETWRT_MUTANTS)
    // Mutant: a stopping session leaves its providers without a callback.
    if (etwrt::mutant::active("no-stop-callback")) continue;
#endif
    // A stopping session notifies with SourceId GUID_NULL.
    notify_aggregate(key, GUID_NULL, 0);
  }
  if (s.logger) s.logger->stop();  // the file complete, the realtime feed ended
  // Consumers drain what is left and return from ProcessTrace; peers keep their own mapping.
  for (auto& [id, peer] : peers_) {
    if (peer.pools.contains(s.pool_id)) send(id, {{"op", "stopped"}, {"pool", s.pool_id}});
  }
  if (s.pool && s.pool->sessions() != 1u) {
    Draining entry{s.pool, s.pool_index, s.pool_id};
    if (!leave_pool_if_undrained(entry)) draining_.push_back(std::move(entry));
  }
  sessions_.erase(handle);
}

std::uint64_t pool_limit_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return kMaxPoolBytes;
  return std::min(kMaxPoolBytes,
                  static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size) / 4);
}

BufferPlan plan_buffers(ULONG buffer_size_kb, ULONG minimum, ULONG maximum, ULONG processors,
                        std::uint64_t limit_bytes) {
  constexpr std::uint64_t kMostBuffers = 65536;  // dataplane::PoolConfig's limit.
  BufferPlan plan;
  plan.buffer_size_kb = buffer_size_kb == 0 ? 64 : std::min<ULONG>(buffer_size_kb, 16 * 1024);
  plan.minimum_buffers = std::max(minimum, 2 * processors);
  plan.maximum_buffers = std::max(maximum, plan.minimum_buffers + 20);
  const std::uint64_t fit = std::max<std::uint64_t>(
      2, std::min(kMostBuffers, limit_bytes / (std::uint64_t{plan.buffer_size_kb} * 1024)));
  plan.maximum_buffers = static_cast<ULONG>(std::min<std::uint64_t>(plan.maximum_buffers, fit));
  plan.minimum_buffers = std::min(plan.minimum_buffers, plan.maximum_buffers);
  return plan;
}

void BrokerState::stop_all_sessions() {
  while (!sessions_.empty()) stop_session(sessions_.begin()->first);
}

json BrokerState::on_control(const ControlRequest& request) {
  Session* s = find_session(request.handle, request.name);
  if (s == nullptr) return {{"status", ERROR_WMI_INSTANCE_NOT_FOUND}};
  if (request.code == EVENT_TRACE_CONTROL_UPDATE) {
    // What an UPDATE may change (documented: the log file, first, so that a switch refused
    // changes nothing; flush timer, maximum buffers, enable flags, the real-time bit); zero or
    // empty means keep.
    const ULONG status = switch_log_file(*s, request.log_file);
    if (status != ERROR_SUCCESS) return {{"status", status}};
    if (request.flush_timer != 0) s->flush_timer = request.flush_timer;
    if (request.maximum_buffers != 0) {
      s->maximum_buffers = std::max(request.maximum_buffers, s->minimum_buffers);
      // Bounded as at start (the pool itself keeps the size it was made with).
      const std::uint64_t buffer_bytes = std::uint64_t{s->buffer_size_kb} * 1024;
      s->maximum_buffers = static_cast<ULONG>(std::max<std::uint64_t>(
          s->minimum_buffers,
          std::min<std::uint64_t>(s->maximum_buffers, pool_limit_bytes() / buffer_bytes)));
    }
    if (request.enable_flags != 0) s->enable_flags = request.enable_flags;
    if (request.log_file_mode != 0) {
      s->log_file_mode = (s->log_file_mode & ~ULONG{EVENT_TRACE_REAL_TIME_MODE}) |
                         (request.log_file_mode & EVENT_TRACE_REAL_TIME_MODE);
    }
  }
  // FLUSH: the buffers reach the file before the call returns; STOP: the file is complete
  // (its header final) before the reply gives its counts.
  if (request.code == EVENT_TRACE_CONTROL_FLUSH && s->logger) s->logger->flush();
  if (request.code == EVENT_TRACE_CONTROL_STOP && s->logger) s->logger->stop();
  json reply = {{"status", ERROR_SUCCESS}, {"properties", properties_json(*s)}};
  if (request.code == EVENT_TRACE_CONTROL_FLUSH && s->pool) s->pool->request_flush(s->pool_index);
  if (request.code == EVENT_TRACE_CONTROL_STOP) stop_session(s->handle);
  return reply;
}

std::uint64_t BrokerState::begin_wait(bool wait, PeerId controller, const json& id) {
  if (!wait) return 0;
  const std::uint64_t wait_id = next_wait_++;
  waits_[wait_id] = Wait{controller, id, 1};
  return wait_id;
}

std::optional<json> BrokerState::end_wait(std::uint64_t wait_id, int sent) {
  if (wait_id == 0) return json{{"status", ERROR_SUCCESS}};
  auto pending = waits_.find(wait_id);
  if (pending == waits_.end()) return json{{"status", ERROR_SUCCESS}};
  pending->second.remaining += sent;
  // The initial 1 kept the wait alive while notifications went out; drop it now.
  if (pending->second.remaining == 1) {
    waits_.erase(pending);
    return json{{"status", ERROR_SUCCESS}};
  }
  --pending->second.remaining;
  return std::nullopt;
}

std::optional<json> BrokerState::on_enable(PeerId peer, const EnableRequest& request,
                                           const json& id) {
  auto it = sessions_.find(request.handle);
  if (it == sessions_.end()) return json{{"status", ERROR_INVALID_HANDLE}};
  Session& session = it->second;
  // NULL EnableParameters: the session's own GUID.
  const GUID source = request.source.value_or(session.guid);
  if ((request.property & EVENT_ENABLE_PROPERTY_PROVIDER_GROUP) != 0) {
    return on_group_enable(peer, request, id, session, source);
  }
  const std::string key = guid_key(request.provider);
  if (request.code > EVENT_CONTROL_CODE_CAPTURE_STATE) {
    return json{{"status", ERROR_INVALID_PARAMETER}};
  }
  const std::uint64_t wait_id = begin_wait(request.wait, peer, id);
  int sent = 0;
  if (request.code == EVENT_CONTROL_CODE_ENABLE_PROVIDER) {
    json refusal;
    const std::optional<int> enabled =
        enable_provider(session, key, request, source, wait_id, refusal);
    if (!enabled) {
      waits_.erase(wait_id);
      return refusal;
    }
    sent = *enabled;
  } else if (request.code == EVENT_CONTROL_CODE_DISABLE_PROVIDER) {
    sent = disable_provider(session, key, source, wait_id);
  } else {
    // Capture state: IsEnabled 2 with the call's own level and keywords; aggregates unchanged.
    json filter = nullptr;
    if (const auto& f = request.provider_filter) {
      filter = {{"type", f->type}, {"data", bytes_to_hex(f->data.data(), f->data.size())}};
    }
    sent = notify(key, source, 2, request.level, request.any, request.all, filter, wait_id);
  }
  return end_wait(wait_id, sent);
}

std::optional<int> BrokerState::enable_provider(Session& session, const std::string& key,
                                                const EnableRequest& request, const GUID& source,
                                                std::uint64_t wait_id, json& refusal) {
  auto& slots = slots_[key];
#if defined(ETWRT_MUTANTS)
  // Mutant: a second session enabling a classic provider shares it instead of taking it over.
  if (!etwrt::mutant::active("classic-shared"))
#endif
    if (!session.enables.contains(key)) take_over_classic(key);
  if (!session.enables.contains(key)) {
    auto free = std::find(slots.begin(), slots.end(), std::uint64_t{0});
    if (free == slots.end()) {
      refusal = {{"status", ERROR_NO_SYSTEM_RESOURCES}};
      return std::nullopt;
    }
    *free = session.handle;
  }
  session.enables[key] = enable_from(request, source);
  const json filter = filter_chain(key);
  const json agg = aggregate_json(key, 1);
  return notify(key, source, 1, agg["level"], agg["any"], agg["all"], filter, wait_id);
}

int BrokerState::disable_provider(Session& session, const std::string& key, const GUID& source,
                                  std::uint64_t wait_id) {
  // A direct disable leaves what the session enabled through a group alone.
  auto direct = session.enables.find(key);
  if (direct == session.enables.end() || !direct->second.via_group.empty()) return 0;
  session.enables.erase(direct);
  auto& slots = slots_[key];
  std::replace(slots.begin(), slots.end(), session.handle, std::uint64_t{0});
  json agg = aggregate_json(key, 1);
#if defined(ETWRT_MUTANTS)
  // Mutant: DISABLE_PROVIDER although other sessions still enable the provider.
  if (etwrt::mutant::active("disable-while-enabled")) agg["is_enabled"] = 0u;
#endif
  // Still enabled by others: their filters, as with any enable notification.
  const json filter = agg["is_enabled"] != 0u ? filter_chain(key) : json(nullptr);
  const int sent =
      notify(key, source, agg["is_enabled"], agg["level"], agg["any"], agg["all"], filter, wait_id);
  // A member of a group the session enables falls back to the group's settings.
  return sent + sync_groups(source, wait_id);
}

}  // namespace etwrt::broker
