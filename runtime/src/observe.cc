// etwrt observation: see observe.h; the record format is in docs/etwrt/use.md ("Observation").
#include "observe.h"

#include "client.h"
#include "etwrt/observation.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <string>
#include <unistd.h>

namespace etwrt::observe {

__attribute__((visibility("hidden"))) bool g_on = false;

namespace {

int g_fd = -1;
std::atomic<std::uint64_t> g_seq{0};
std::atomic<std::uint64_t> g_dropped{0};

// The registration whose callback this thread is running (0: none).
__attribute__((tls_model("initial-exec"))) thread_local REGHANDLE t_in_callback = 0;

std::int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// One record: `{"seq":N,"dropped":D,"kind":"KIND",` + fields + `}` in one message. A message
// the socket cannot take now (full, closed) is counted, never waited for.
__attribute__((format(printf, 2, 3))) void emit(const char* kind, const char* fields, ...) {
  char body[448];
  va_list args;
  va_start(args, fields);
  const int body_length = std::vsnprintf(body, sizeof body, fields, args);
  va_end(args);
  char record[576];
  const std::uint64_t seq = g_seq.fetch_add(1, std::memory_order_relaxed) + 1;
  const int length =
      std::snprintf(record, sizeof record, "{\"seq\":%llu,\"dropped\":%llu,\"kind\":\"%s\"%s%s}\n",
                    static_cast<unsigned long long>(seq),
                    static_cast<unsigned long long>(g_dropped.load(std::memory_order_relaxed)),
                    kind, body_length > 0 ? "," : "", body_length > 0 ? body : "");
  if (body_length < 0 || length < 0 || static_cast<std::size_t>(length) >= sizeof record ||
      ::send(g_fd, record, static_cast<std::size_t>(length), MSG_DONTWAIT | MSG_NOSIGNAL) !=
          length) {
    g_dropped.fetch_add(1, std::memory_order_relaxed);
  }
}

unsigned long long u64(std::uint64_t v) { return static_cast<unsigned long long>(v); }

bool wanted_now(REGHANDLE handle, UCHAR level, ULONGLONG keyword) {
  const Registration* registration = g_registration_handles.find(handle);
  return registration != nullptr && registration->table.accepts(level, keyword);
}

// `path` as a socket address at any depth: itself when sun_path holds it, else its last
// component under /proc/self/fd/N, N an O_PATH descriptor of its folder (set in `dir_fd`, for
// the caller to close after connecting). False with errno set when even that does not fit.
bool channel_address(const char* path, sockaddr_un& address, int& dir_fd) {
  address.sun_family = AF_UNIX;
  std::size_t length = std::strlen(path);
  if (length < sizeof address.sun_path) {
    std::memcpy(address.sun_path, path, length + 1);
    return true;
  }
  const char* slash = std::strrchr(path, '/');
  if (slash == nullptr) {
    errno = ENAMETOOLONG;
    return false;
  }
  const std::string folder = slash == path ? "/" : std::string(path, slash);
  dir_fd = ::open(folder.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return false;
  const int n = std::snprintf(address.sun_path, sizeof address.sun_path, "/proc/self/fd/%d/%s",
                              dir_fd, slash + 1);
  if (n < 0 || static_cast<std::size_t>(n) >= sizeof address.sun_path) {
    errno = ENAMETOOLONG;
    return false;
  }
  return true;
}

// A connected SOCK_SEQPACKET socket to `path`, or -1 with errno set.
int connect_channel(const char* path) {
  sockaddr_un address{};
  int dir_fd = -1;
  int fd = -1;
  if (channel_address(path, address, dir_fd)) {
    fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd >= 0 &&
        ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  const int error = errno;
  if (dir_fd >= 0) ::close(dir_fd);
  errno = error;
  return fd;
}

// The channel opened before main: the variable goes (a child the program starts does not
// report into it) and the socket does not cross exec.
__attribute__((constructor)) void start_observing() {
  const char* path = std::getenv("ETWRT_OBSERVE_SOCKET");
  if (path == nullptr || *path == '\0') return;
  const int fd = connect_channel(path);
  if (fd < 0) {
    std::fprintf(stderr, "etwrt: ETWRT_OBSERVE_SOCKET=%s cannot be reached (%s); not observing\n",
                 path, std::strerror(errno));
    return;
  }
  ::unsetenv("ETWRT_OBSERVE_SOCKET");
  g_fd = fd;
  g_on = true;
  emit("hello", "\"pid\":%ld,\"format\":1", static_cast<long>(::getpid()));
}

// The last record: how many records were dropped in all (if it is dropped too, the observer
// sees no "end" and says the observation is incomplete).
__attribute__((destructor)) void stop_observing() {
  if (g_on) emit("end", "\"total_dropped\":%llu", u64(g_dropped.load()));
}

}  // namespace

extern "C" __attribute__((visibility("default"))) ULONG EtwrtObserveStart(const char* path) {
  if (path == nullptr || *path == '\0') return ERROR_INVALID_PARAMETER;
  if (__atomic_load_n(&g_on, __ATOMIC_ACQUIRE)) return ERROR_BUSY;
  const int fd = connect_channel(path);
  if (fd < 0) return ERROR_FILE_NOT_FOUND;
  // The descriptor number of an earlier channel is kept (dup2 replaces it at once): a thread
  // still sending into the old channel then never writes into an unrelated file.
  if (g_fd >= 0) {
    ::dup2(fd, g_fd);
    ::close(fd);
  } else {
    g_fd = fd;
  }
  g_seq.store(0);
  g_dropped.store(0);
  emit("hello", "\"pid\":%ld,\"format\":1", static_cast<long>(::getpid()));
  // Hooks read the flag without ordering (it costs nothing when off); the observer's own calls
  // that follow (registering, enabling) go through system calls, which order it in practice.
  __atomic_store_n(&g_on, true, __ATOMIC_RELEASE);
  return ERROR_SUCCESS;
}

extern "C" __attribute__((visibility("default"))) ULONG EtwrtObserveStop(void) {
  if (!__atomic_load_n(&g_on, __ATOMIC_ACQUIRE)) return ERROR_NOT_FOUND;
  __atomic_store_n(&g_on, false, __ATOMIC_RELEASE);
  emit("end", "\"total_dropped\":%llu", u64(g_dropped.load()));
  ::shutdown(g_fd, SHUT_RDWR);
  return ERROR_SUCCESS;
}

void registered(REGHANDLE handle, const GUID& g) {
  emit("register", "\"handle\":%llu,\"guid\":\"%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x\"",
       u64(handle), g.Data1, g.Data2, g.Data3, g.Data4[0], g.Data4[1], g.Data4[2], g.Data4[3],
       g.Data4[4], g.Data4[5], g.Data4[6], g.Data4[7]);
}

void unregistered(REGHANDLE handle) { emit("unregister", "\"handle\":%llu", u64(handle)); }

void write(const char* api, REGHANDLE handle, const EVENT_DESCRIPTOR& d, const Delivered& to) {
  char sessions[8 * 21 + 1] = "";
  std::size_t used = 0;
  for (unsigned i = 0; i < to.count && used < sizeof sessions; ++i) {
    const int n = std::snprintf(sessions + used, sizeof sessions - used, "%s%llu",
                                i == 0 ? "" : ",", u64(to.session[i]));
    if (n > 0) used += static_cast<std::size_t>(n);
  }
  emit("write",
       "\"api\":\"%s\",\"handle\":%llu,\"id\":%u,\"version\":%u,\"channel\":%u,\"level\":%u,"
       "\"opcode\":%u,\"task\":%u,\"keyword\":%llu,\"wanted\":%s,\"in_callback\":%s,"
       "\"sessions\":[%s]",
       api, u64(handle), d.Id, d.Version, d.Channel, d.Level, d.Opcode, d.Task, u64(d.Keyword),
       wanted_now(handle, d.Level, d.Keyword) ? "true" : "false",
       t_in_callback != 0 ? "true" : "false", sessions);
}

void enabled_query(const char* api, REGHANDLE handle, UCHAR level, ULONGLONG keyword, bool answer) {
  emit("enabled_query",
       "\"api\":\"%s\",\"handle\":%llu,\"level\":%u,\"keyword\":%llu,\"answer\":%s", api,
       u64(handle), level, u64(keyword), answer ? "true" : "false");
}

void traits(REGHANDLE handle, ULONG size, ULONG status) {
  emit("traits", "\"handle\":%llu,\"size\":%u,\"status\":%u", u64(handle), size, status);
}

void control_call(const char* api) {
  if (t_in_callback == 0) return;
  emit("control_in_callback", "\"api\":\"%s\",\"handle\":%llu", api, u64(t_in_callback));
}

CallbackScope::CallbackScope(const Registration& registration, ULONG is_enabled, UCHAR level,
                             std::uint64_t any, std::uint64_t all, bool has_filter)
    : registration_(registration),
      is_enabled_(is_enabled),
      level_(level),
      any_(any),
      all_(all),
      has_filter_(has_filter),
      start_ns_(now_ns()),
      outer_(t_in_callback) {
  t_in_callback = registration_.handle;
}

CallbackScope::~CallbackScope() {
  const std::int64_t duration = now_ns() - start_ns_;
  t_in_callback = outer_;
  emit("callback",
       "\"handle\":%llu,\"is_enabled\":%u,\"level\":%u,\"any\":%llu,\"all\":%llu,"
       "\"filter\":%s,\"duration_ns\":%lld",
       u64(registration_.handle), is_enabled_, level_, u64(any_), u64(all_),
       has_filter_ ? "true" : "false", static_cast<long long>(duration));
}

}  // namespace etwrt::observe
