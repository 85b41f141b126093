#include "client.h"
#include "observe.h"

#include "etwrt_os.h"
#include "replies.h"

#include "access_mode.h"
#include "broker_link.h"
#include "system_filters.h"
#include "wire.h"
#if defined(ETWRT_MUTANTS)
#include "etwrt_mutant.h"
#endif

#include <fcntl.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>

namespace etwrt {

const dataplane::Pool::ClockKey* intern_clock(const dataplane::Pool::ClockKey& key) {
  static std::mutex mu;
  static std::deque<dataplane::Pool::ClockKey> keys;  // stable addresses
  std::lock_guard lock(mu);
  for (const dataplane::Pool::ClockKey& k : keys)
    if (k == key) return &k;
  return &keys.emplace_back(key);
}
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

std::atomic<Client*> g_client{nullptr};

// A forked child must not touch the parent's threads or locks: it starts over with a new
// client (the old one is leaked on purpose; its mutexes may be held by threads that are gone).
void reset_after_fork() {
  g_client.store(nullptr, std::memory_order_relaxed);
  g_fork_generation.fetch_add(1, std::memory_order_relaxed);
}

// A notification's fields, read and checked before the callback runs.
struct NotificationFields {
  GUID source = GUID_NULL;
  ULONG is_enabled = 0;
  UCHAR level = 0;
  std::uint64_t any = 0;
  std::uint64_t all = 0;
  std::vector<std::uint8_t> filter;
  bool has_filter = false;
  ULONG filter_type = 0;
};

// Throws nlohmann's type_error on a mistyped field (the caller logs and skips the callback).
NotificationFields read_notification(const json& m, std::size_t filter_capacity) {
  NotificationFields f;
  guid_from_wire(m.value("source", ""), f.source);
  f.is_enabled = m.value("is_enabled", 0u);
  f.level = static_cast<UCHAR>(m.value("level", 0u));
  f.any = m.value("any", std::uint64_t{0});
  f.all = m.value("all", std::uint64_t{0});
  if (m.contains("filter") && m["filter"].is_object() &&
      hex_to_bytes(m["filter"].value("data", ""), f.filter) && f.filter.size() <= filter_capacity) {
    f.has_filter = true;
    f.filter_type = m["filter"].value("type", 0u);
  }
  return f;
}

}  // namespace

Client& Client::instance() {
  static const bool registered = [] {
    ::pthread_atfork(nullptr, nullptr, reset_after_fork);
    return true;
  }();
  (void)registered;
  Client* client = g_client.load(std::memory_order_acquire);
  if (client != nullptr) return *client;
  // Never freed: threads of this client may run while static destructors do at exit.
  auto* fresh = new Client();
  if (g_client.compare_exchange_strong(client, fresh, std::memory_order_acq_rel)) return *fresh;
  delete fresh;
  return *client;
}

ULONG Client::ensure_connected_locked(std::unique_lock<std::mutex>& lock) {
  const std::string home = broker_home();
  if (fd_ >= 0 && home == home_) return ERROR_SUCCESS;
  if (fd_ >= 0) {
    // ETWRT_HOME changed (tests do this): leave the old broker; its reader will notice.
    ::shutdown(fd_, SHUT_RDWR);
    fd_ = -1;
  }
  std::string error;
  const int dir_fd = open_private_dir(home, error);
  if (dir_fd < 0) {
    std::fprintf(stderr, "etwrt: %s\n", error.c_str());
    return ERROR_ACCESS_DENIED;
  }
  lock.unlock();
  // Connect, starting the broker when nobody listens; retry with backoff for about 5 s, since
  // a starting broker needs a moment and racing starters leave only one of them running.
  bool refused = false;
  int fd = connect_to(dir_fd, home, error, refused);
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  auto next_spawn = std::chrono::steady_clock::now();
  auto delay = 5ms;
  while (fd < 0 && !refused && std::chrono::steady_clock::now() < deadline) {
    if (std::chrono::steady_clock::now() >= next_spawn) {
      spawn_broker(home, dir_fd);
      next_spawn = std::chrono::steady_clock::now() + 1s;
    }
    std::this_thread::sleep_for(delay);
    delay = std::min(delay * 2, std::chrono::milliseconds(200));
    fd = connect_to(dir_fd, home, error, refused);
  }
  ::close(dir_fd);
  lock.lock();
  if (refused) {
    std::fprintf(stderr, "etwrt: %s\n", error.c_str());
    return ERROR_ACCESS_DENIED;
  }
  if (fd < 0) {
    std::fprintf(stderr, "etwrt: cannot reach etwrt-broker in %s (its log: %s/%s)\n", home.c_str(),
                 home.c_str(), kLogName);
    return ERROR_NOT_SUPPORTED;
  }
  if (fd_ >= 0) {
    // Another thread connected meanwhile; keep its connection.
    ::close(fd);
    return ERROR_SUCCESS;
  }
  fd_ = fd;
  home_ = home;
  const std::uint64_t generation = ++generation_;
  {
    std::lock_guard send_lock(send_mu_);
    open_generations_.insert(generation);
  }
  std::thread([this, fd, generation] { reader_loop(fd, generation); }).detach();
  if (!callback_thread_started_) {
    callback_thread_started_ = true;
    std::thread([this] { callback_loop(); }).detach();
  }
  return ERROR_SUCCESS;
}

bool Client::send(const json& message) {
  int fd;
  std::uint64_t generation;
  {
    std::lock_guard lock(mu_);
    fd = fd_;
    generation = generation_;
  }
  if (fd < 0) return false;
  return write_frame(fd, generation, message.dump());
}

bool Client::write_frame(int fd, std::uint64_t generation, const std::string& body) {
  std::lock_guard lock(send_mu_);
  if (!open_generations_.contains(generation)) return false;
  return send_frame_body(fd, body);
}

ClientReply Client::call(json request, std::chrono::milliseconds timeout,
                         std::function<void(const json&)> on_reply) {
  // ETWRT_DENY_CONTROL: refused as the kernel would refuse it, after the entry point's own
  // argument checks and before anything reaches the broker.
  if (needs_control_right(request) && control_denied()) return {ERROR_ACCESS_DENIED, {}};
  // A broker that was just exiting on idle when we connected drops the request unanswered;
  // one retry on a fresh connection (a fresh broker) covers that. A broker that died with
  // state took the state with it, so repeating the request is what a new caller would do.
  ClientReply reply = call_once(request, timeout, on_reply);
  if (reply.status == kConnectionLost) reply = call_once(request, timeout, on_reply);
  if (reply.status == kConnectionLost) reply.status = ERROR_NOT_SUPPORTED;
  return reply;
}

ClientReply Client::call_once(json request, std::chrono::milliseconds timeout,
                              const std::function<void(const json&)>& on_reply) {
  std::unique_lock lock(mu_);
  if (const ULONG status = ensure_connected_locked(lock); status != ERROR_SUCCESS) {
    return {status, {}};
  }
  const std::uint64_t id = next_id_++;
  request["id"] = id;
  std::string body;
  try {
    body = request.dump();
  } catch (const json::exception& e) {  // A caller's string that is not UTF-8 (a session name).
    std::fprintf(stderr, "etwrt: a request that cannot be sent: %s\n", e.what());
    return {ERROR_INVALID_PARAMETER, {}};
  }
  auto pending = std::make_shared<Pending>();
  pending->on_reply = on_reply;
  pending_[id] = pending;
  const int fd = fd_;
  const std::uint64_t generation = generation_;
  lock.unlock();
  const bool sent = write_frame(fd, generation, body);
  lock.lock();
  if (!sent) {
    pending_.erase(id);
    // The reader sees the broken socket too; let it do the bookkeeping before a retry.
    replies_cv_.wait_for(lock, 2s, [&] { return fd_ != fd || generation_ != generation; });
    return {kConnectionLost, {}};
  }
  if (!replies_cv_.wait_for(lock, timeout, [&] { return pending->done; })) {
    pending_.erase(id);
    return {ERROR_TIMEOUT, {}};
  }
  return pending->reply;
}

void Client::reader_loop(int fd, std::uint64_t generation) {
  FrameReader reader;
  std::deque<int> fds;  // Received with SCM_RIGHTS, claimed in order by the frames naming them.
  char buffer[65536];
  for (;;) {
    const ssize_t n = os::receive_with_fds(fd, buffer, sizeof buffer, fds);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    reader.append(buffer, static_cast<std::size_t>(n));
    bool corrupt = false;
    while (auto message = reader.next(corrupt)) {
      try {
        dispatch(std::move(*message), fds);
      } catch (const std::exception& e) {
        // A frame of the broker that is not as expected: skipped, this thread goes on.
        std::fprintf(stderr, "etwrt: a malformed frame from the broker ignored: %s\n", e.what());
      }
    }
    if (corrupt) {
      std::fprintf(stderr, "etwrt: corrupt frame from the broker; reconnecting\n");
      break;
    }
  }
  for (int leftover : fds) ::close(leftover);
  connection_lost(fd, generation);
}

SessionPool* Client::pool(std::uint64_t pool_id) {
  std::lock_guard lock(pools_mu_);
  auto it = pools_.find(pool_id);
  return it == pools_.end() ? nullptr : it->second;
}

SessionPool* Client::adopt_pool(std::uint64_t pool_id, int fd, std::uint64_t session,
                                std::uint32_t index, std::uint64_t group) {
  std::lock_guard lock(pools_mu_);
  auto it = pools_.find(pool_id);
  if (it != pools_.end()) {
    ::close(fd);
    if (session != 0) it->second->session.store(session, std::memory_order_relaxed);
    return it->second;
  }
  // Another session of the same pool mapped already: its mapping serves this one too.
  SessionPool* same_pool = nullptr;
  for (const auto& [other_id, other] : pools_) {
    if (other->group == group) {
      same_pool = other;
      break;
    }
  }
  SessionPool* mapped = nullptr;
  try {
    mapped = new SessionPool(
        pool_id, same_pool ? same_pool->pool.alias() : dataplane::Pool::attach(fd), index, group);
  } catch (const dataplane::Error& e) {
    std::fprintf(stderr, "etwrt: pool from the broker refused: %s\n", e.what());
  }
  ::close(fd);  // attach() dups it.
  if (mapped != nullptr) {
    mapped->session.store(session, std::memory_order_relaxed);
    if (same_pool != nullptr) mapped->canonical = same_pool->canonical;
    pools_[pool_id] = mapped;
  }
  return mapped;
}

void Client::dispatch(json message, std::deque<int>& fds) {
  if (!message.is_object()) return;
  const auto op_field = message.find("op");
  const std::string op =
      op_field != message.end() && op_field->is_string() ? op_field->get<std::string>() : "";
  // A frame that carries a descriptor: it arrived with the frame's first bytes.
  const bool carries_fd =
      op == "pool" || (message.contains("fd") && message["fd"].is_boolean() && message["fd"]);
  int passed = -1;
  if (carries_fd) {
    if (fds.empty()) {
      std::fprintf(stderr, "etwrt: a %s frame without its descriptor\n", op.c_str());
    } else {
      passed = fds.front();
      fds.pop_front();
    }
  }
  if (op == "pool") {
    if (passed >= 0) {
      const std::uint64_t pool_id = message.value("pool", std::uint64_t{0});
      adopt_pool(pool_id, passed, message.value("session", std::uint64_t{0}),
                 message.value("index", std::uint32_t{0}), message.value("group", pool_id));
    }
    return;
  }
  if (op == "stopped") {
    if (SessionPool* p = pool(message.value("pool", std::uint64_t{0}))) {
      p->stopped.store(true, std::memory_order_release);
      p->pool.wake_reader(p->index);  // A consumer's hub may sleep on the pool's futex.
    }
    return;
  }
  if (carries_fd) message["fd"] = passed;  // The caller owns it (or -1).
  if (op == "notify") {
    const auto token = message.at("token").get<std::uint64_t>();
    std::lock_guard lock(mu_);
    auto it = registrations_.find(token);
    // The state EventEnabled reads changes before the callback runs.
    if (it != registrations_.end()) publish_sessions(*it->second, message.at("sessions"));
    queue_.push_back({token, message});
    queue_cv_.notify_one();
    return;
  }
  if (!message.contains("id") || !message["id"].is_number_unsigned()) return;
  std::shared_ptr<Pending> pending;
  {
    std::lock_guard lock(mu_);
    auto it = pending_.find(message["id"].get<std::uint64_t>());
    if (it == pending_.end()) {  // A caller that gave up (timeout).
      if (carries_fd && passed >= 0) ::close(passed);
      return;
    }
    pending = it->second;
    pending_.erase(it);
  }
  ULONG status = ERROR_SUCCESS;
  if (pending->on_reply) {
    try {
      pending->on_reply(message);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "etwrt: a malformed reply from the broker: %s\n", e.what());
      status = kBadReply;
    }
  }
  std::lock_guard lock(mu_);
  pending->reply.status = status;
  pending->reply.body = message;
  pending->done = true;
  replies_cv_.notify_all();
}

void Client::connection_lost(int fd, std::uint64_t generation) {
  {
    std::lock_guard send_lock(send_mu_);
    open_generations_.erase(generation);
    ::close(fd);
  }
  std::unique_lock lock(mu_);
  if (generation != generation_) return;  // Superseded already (ETWRT_HOME changed).
  fd_ = -1;
  // Requests in flight on this connection get no reply.
  for (auto& [id, pending] : pending_) {
    pending->reply.status = kConnectionLost;
    pending->done = true;
  }
  pending_.clear();
  replies_cv_.notify_all();
  // The broker's sessions are gone with it: nothing enables our providers any more, and the
  // consumers of its pools drain what is committed there and return.
  for (auto& [token, registration] : registrations_) registration->table.publish(nullptr, 0);
  {
    std::lock_guard pools_lock(pools_mu_);
    for (auto& [id, p] : pools_) {
      if (p->stopped.load(std::memory_order_acquire)) continue;
      p->broker_lost.store(true, std::memory_order_release);
      p->stopped.store(true, std::memory_order_release);
      p->pool.wake_reader(p->index);
    }
  }
  if (registrations_.empty() || reattaching_) return;
  reattaching_ = true;
  lock.unlock();
  reattach();
}

// A provider attaches when the broker appears: reconnect with backoff and register again.
void Client::reattach() {
  auto delay = 50ms;
  for (;;) {
    std::this_thread::sleep_for(delay);
    delay = std::min(delay * 2, std::chrono::milliseconds(2000));
    std::vector<Registration*> registrations;
    {
      std::unique_lock lock(mu_);
      if (registrations_.empty()) break;
      if (ensure_connected_locked(lock) != ERROR_SUCCESS) continue;
      for (auto& [token, r] : registrations_) registrations.push_back(r);
    }
    bool ok = true;
    for (Registration* r : registrations) {
      const std::uint64_t token = r->handle;
      json request = {{"op", "register"}, {"token", token}, {"guid", guid_to_wire(r->guid)}};
      ClientReply reply = call(request, 30s, [this, token](const json& body) {
        std::lock_guard lock(mu_);
        auto it = registrations_.find(token);
        if (it == registrations_.end()) return;
        publish_sessions(*it->second, body.value("sessions", json::array()));
        if (body.value("is_enabled", 0u) != 0) {
          // Enabled already: the provider learns it as a pre-enabled registration would.
          json notice = {{"op", "notify"},
                         {"token", token},
                         {"source", guid_to_wire(GUID_NULL)},
                         {"is_enabled", body["is_enabled"]},
                         {"level", body["level"]},
                         {"any", body["any"]},
                         {"all", body["all"]},
                         {"filter", nullptr},
                         {"wait", 0}};
          queue_.push_back({token, notice});
          queue_cv_.notify_one();
        }
      });
      if (reply.status != ERROR_SUCCESS) {
        ok = false;
        break;
      }
      if (const auto traits = traits_of(*r)) call(*traits, 30s);
    }
    if (ok) break;
  }
  std::lock_guard lock(mu_);
  reattaching_ = false;
}

void Client::set_traits(Registration& registration, nlohmann::json request) {
  std::lock_guard lock(mu_);
  registration.traits = std::move(request);
}

std::optional<nlohmann::json> Client::traits_of(Registration& registration) {
  std::lock_guard lock(mu_);
  return registration.traits;
}

bool Client::add_registration(Registration* registration) {
  std::lock_guard lock(mu_);
  registration->handle = g_registration_handles.add(registration);
  if (registration->handle == 0) return false;
  registrations_[registration->handle] = registration;
  return true;
}

bool Client::remove_registration(Registration* registration) {
  const std::uint64_t token = registration->handle;
  std::unique_lock lock(mu_);
  if (registrations_.erase(token) == 0) return false;
  g_registration_handles.remove(token);
  if (std::this_thread::get_id() != callback_thread_id_) {
    idle_cv_.wait(lock, [&] { return running_token_ != token; });
  }
  return true;
}

void Client::publish_sessions(Registration& registration, const json& sessions) {
  std::array<SessionFilter, kMaxSessionsPerProvider> filters{};
  std::size_t count = 0;
  for (const json& s : sessions) {
    if (count == filters.size()) break;
    filters[count].level = s.at(0).get<std::uint8_t>();
    filters[count].match_any = s.at(1).get<std::uint64_t>();
    filters[count].match_all = s.at(2).get<std::uint64_t>();
    filters[count].enable_property = s.at(3).get<std::uint32_t>();
    if (s.size() > 5) {
      filters[count].sink = pool(s.at(4).get<std::uint64_t>());
      filters[count].slot = s.at(5).get<std::uint8_t>();
    }
    if (s.size() > 6) {
      // System filters: a PID list without this process keeps the session's pool from this
      // process's writes; an event ID filter goes with the session into the table.
      std::shared_ptr<SystemFilter> system =
          parse_system_filters(s.at(6), static_cast<std::uint32_t>(::getpid()));
      if (system && system->process_excluded) filters[count].sink = nullptr;
      if (system && system->has_ids) {
        filters[count].id_filter = system.get();
        registration.system_filters.push_back(std::move(system));
      }
    }
    ++count;
  }
#if defined(ETWRT_MUTANTS)
  // Mutant: every session filters with the provider-side aggregate instead of its own filter.
  if (etwrt::mutant::active("aggregate-filter") && count > 0) {
    SessionFilter agg = filters[0];
    for (std::size_t i = 1; i < count; ++i) {
      agg.level = std::max(agg.level, filters[i].level);
      agg.match_any |= filters[i].match_any;
      agg.match_all &= filters[i].match_all;
    }
    for (std::size_t i = 0; i < count; ++i) {
      filters[i].level = agg.level;
      filters[i].match_any = agg.match_any;
      filters[i].match_all = agg.match_all;
    }
  }
#endif
  registration.table.publish(filters.data(), count);
}

void Client::invoke(const Registration& registration, const GUID& source, ULONG is_enabled,
                    UCHAR level, std::uint64_t any, std::uint64_t all,
                    PEVENT_FILTER_DESCRIPTOR filter) {
  if (registration.callback == nullptr) return;
#if defined(ETWRT_MUTANTS)
  // Mutant: the CallbackContext given to EventRegister is not passed on.
  if (etwrt::mutant::active("context-dropped")) {
    registration.callback(&source, is_enabled, level, any, all, filter, nullptr);
    return;
  }
#endif
  if (observe::on()) [[unlikely]] {
    const observe::CallbackScope scope(registration, is_enabled, level, any, all,
                                       filter != nullptr);
    registration.callback(&source, is_enabled, level, any, all, filter, registration.context);
    return;
  }
  registration.callback(&source, is_enabled, level, any, all, filter, registration.context);
}

void Client::callback_loop() {
  // FilterData points here during a callback; afterwards the bytes are poisoned, so a provider
  // that kept the pointer sees garbage (rule CB-FILTER-COPY). On the heap, not thread-local:
  // the library's thread-locals are initial-exec, so they must stay small.
  auto filter_storage = std::make_unique<std::array<std::uint8_t, 16 * 1024>>();
  std::array<std::uint8_t, 16 * 1024>& filter_bytes = *filter_storage;
  EVENT_FILTER_DESCRIPTOR filter_descriptor{};
  std::unique_lock lock(mu_);
  callback_thread_id_ = std::this_thread::get_id();
  for (;;) {
    queue_cv_.wait(lock, [&] { return !queue_.empty(); });
    Notification item = std::move(queue_.front());
    queue_.pop_front();
    auto it = registrations_.find(item.token);
    Registration* registration = it == registrations_.end() ? nullptr : it->second;
    if (registration != nullptr) running_token_ = item.token;
    lock.unlock();
    std::optional<NotificationFields> fields;
    if (registration != nullptr) {
      try {
        fields = read_notification(item.message, filter_bytes.size());
      } catch (const std::exception& e) {
        std::fprintf(stderr, "etwrt: a malformed notification from the broker: %s\n", e.what());
      }
    }
    if (fields) {
      PEVENT_FILTER_DESCRIPTOR filter = nullptr;
      if (fields->has_filter) {
        std::memcpy(filter_bytes.data(), fields->filter.data(), fields->filter.size());
        filter_descriptor.Ptr = reinterpret_cast<ULONGLONG>(filter_bytes.data());
        filter_descriptor.Size = static_cast<ULONG>(fields->filter.size());
        filter_descriptor.Type = fields->filter_type;
        filter = &filter_descriptor;
      }
      invoke(*registration, fields->source, fields->is_enabled, fields->level, fields->any,
             fields->all, filter);
      if (filter != nullptr) {
        std::memset(filter_bytes.data(), 0xdd, fields->filter.size());
        std::memset(&filter_descriptor, 0xdd, sizeof filter_descriptor);
      }
    }
    const json& wait_field = item.message.contains("wait") ? item.message["wait"] : json();
    const auto wait = wait_field.is_number_unsigned() ? wait_field.get<std::uint64_t>() : 0;
    if (wait != 0) send({{"op", "ack"}, {"wait", wait}});
    lock.lock();
    running_token_ = 0;
    idle_cv_.notify_all();
  }
}

}  // namespace etwrt
