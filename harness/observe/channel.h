// The observation channel of `etwh observe`: a SOCK_SEQPACKET socket the observed program's
// libetwrt connects to (ETWRT_OBSERVE_SOCKET), one JSON record per message
// (docs/etwrt/use.md, "Observation"). A reader thread keeps every record, in arrival order.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace etwh::observe {

class Channel {
 public:
  // Listens at `path` (removed again on destruction); throws std::runtime_error.
  explicit Channel(std::filesystem::path path);
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  const std::filesystem::path& path() const { return path_; }

  // Takes the program's connection, waiting at most `timeout`; false when none came.
  bool accept(std::chrono::milliseconds timeout);

  // Waits until more than `seen` records arrived, the channel closed, or `timeout` passed.
  // Returns the number of records now.
  std::size_t wait_beyond(std::size_t seen, std::chrono::milliseconds timeout);
  // A copy of the records [from, end).
  std::vector<nlohmann::json> records(std::size_t from = 0);
  bool closed();
  // Messages that were not a JSON object (counted, reported as a harness fault).
  std::size_t unreadable();

 private:
  void read_loop();

  std::filesystem::path path_;
  int listen_fd_ = -1;
  int fd_ = -1;
  int stop_pipe_[2] = {-1, -1};
  std::thread reader_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<nlohmann::json> records_;
  std::size_t unreadable_ = 0;
  bool closed_ = false;
};

}  // namespace etwh::observe
