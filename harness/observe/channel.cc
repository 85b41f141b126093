#include "harness/observe/channel.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace etwh::observe {

namespace {

// `path` as a socket address at any depth: itself when sun_path holds it, else its file name
// under /proc/self/fd/N, N an O_PATH descriptor of its folder (kept open in `folder` until the
// socket is bound). libetwrt reaches it the same way (runtime/src/observe.cc).
sockaddr_un address_of(const std::filesystem::path& path, int& folder) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::string text = path.string();
  if (text.size() >= sizeof address.sun_path) {
    folder = ::open(path.parent_path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (folder < 0) {
      throw std::runtime_error("cannot listen at " + path.string() + ": " + std::strerror(errno));
    }
    text = "/proc/self/fd/" + std::to_string(folder) + "/" + path.filename().string();
  }
  if (text.size() >= sizeof address.sun_path) {
    throw std::runtime_error("cannot listen at " + path.string() + ": its file name is too long");
  }
  std::memcpy(address.sun_path, text.c_str(), text.size() + 1);
  return address;
}

}  // namespace

Channel::Channel(std::filesystem::path path) : path_(std::move(path)) {
  int folder = -1;
  const sockaddr_un address = address_of(path_, folder);
  listen_fd_ = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  const bool listening =
      listen_fd_ >= 0 && ::pipe2(stop_pipe_, O_CLOEXEC) == 0 &&
      ::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0 &&
      ::listen(listen_fd_, 1) == 0;
  const std::string reason = std::strerror(errno);
  if (folder >= 0) ::close(folder);
  if (!listening) {
    for (int fd : {listen_fd_, stop_pipe_[0], stop_pipe_[1]}) {
      if (fd >= 0) ::close(fd);
    }
    throw std::runtime_error("cannot listen at " + path_.string() + ": " + reason);
  }
}

Channel::~Channel() {
  if (reader_.joinable()) {
    (void)!::write(stop_pipe_[1], "x", 1);
    reader_.join();
  }
  for (int fd : {listen_fd_, fd_, stop_pipe_[0], stop_pipe_[1]}) {
    if (fd >= 0) ::close(fd);
  }
  std::error_code ec;
  std::filesystem::remove(path_, ec);
}

bool Channel::accept(std::chrono::milliseconds timeout) {
  pollfd p{listen_fd_, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) != 1) return false;
  fd_ = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd_ < 0) return false;
  // A large receive buffer: the program never waits for us, so what we do not take is dropped.
  const int size = 4 << 20;
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  reader_ = std::thread([this] { read_loop(); });
  return true;
}

void Channel::read_loop() {
  std::vector<char> buffer(4096);
  for (;;) {
    pollfd p[2] = {{fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
    if (::poll(p, 2, -1) < 0 && errno == EINTR) continue;
    if ((p[0].revents & (POLLIN | POLLHUP | POLLERR)) == 0) {
      if (p[1].revents != 0) break;
      continue;
    }
    const ssize_t n = ::recv(fd_, buffer.data(), buffer.size(), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    nlohmann::json record =
        nlohmann::json::parse(buffer.begin(), buffer.begin() + n, nullptr, false);
    std::lock_guard lock(mu_);
    if (record.is_object()) {
      records_.push_back(std::move(record));
    } else {
      ++unreadable_;
    }
    cv_.notify_all();
  }
  std::lock_guard lock(mu_);
  closed_ = true;
  cv_.notify_all();
}

std::size_t Channel::wait_beyond(std::size_t seen, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return records_.size() > seen || closed_; });
  return records_.size();
}

std::vector<nlohmann::json> Channel::records(std::size_t from) {
  std::lock_guard lock(mu_);
  if (from >= records_.size()) return {};
  return {records_.begin() + static_cast<std::ptrdiff_t>(from), records_.end()};
}

bool Channel::closed() {
  std::lock_guard lock(mu_);
  return closed_;
}

std::size_t Channel::unreadable() {
  std::lock_guard lock(mu_);
  return unreadable_;
}

}  // namespace etwh::observe
