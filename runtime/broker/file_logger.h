// The logger of a file session: in Windows the kernel's logger thread writes the session's
// buffers to its file; in etwrt a thread of the broker does (docs/etwrt/internals.md,
// "Trace files (writing)"). It holds the session's dataplane::Reader, turns each record into the
// .etl layout (etl_file.h) and, for a session that is realtime too, feeds its realtime consumers
// through the pool's relay slots (a consumer process cannot hold the reader then).
#pragma once

#include "etl_file.h"

#include <etwrt/dataplane.h>

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace etwrt::broker {

class FileLogger final : dataplane::RecordSink {
 public:
  // Creates the file and starts the thread on `session` of `pool`. nullptr when the file
  // cannot be made or the session already has a reader, with StartTrace's status and a reason.
  static std::unique_ptr<FileLogger> start(std::shared_ptr<dataplane::Pool> pool,
                                           std::uint32_t session, const EtlSettings& settings,
                                           std::uint32_t flush_timer_s, bool realtime,
                                           ULONG& status, std::string& reason);
  ~FileLogger();  // stops (as stop()) if still running
  FileLogger(const FileLogger&) = delete;
  FileLogger& operator=(const FileLogger&) = delete;

  // ControlTrace(FLUSH): returns once every record committed before the call is in the file.
  void flush();
  // ControlTrace(UPDATE) with a new LogFileName: every record committed before the call goes
  // to the current file, then the session logs to `name` (EtlFile::switch_to). False, nothing
  // changed, with StartTrace's status and a reason when the new file cannot be made.
  bool switch_file(const std::string& name, ULONG& status, std::string& reason);
  // ControlTrace(STOP): drains the session, writes the last buffers and the final header,
  // ends the realtime feed. Idempotent.
  void stop();
  EtlCounts counts() const { return file_->counts(); }
  // What QUERY/STOP report as EventsLost and LogBuffersLost: the pool's and the file's.
  std::uint64_t events_lost() const;

 private:
  FileLogger() = default;
  void run();
  std::size_t poll(bool flush);
  // A file-only session's records go from the pool to the file as the reader validated them
  // (poll(*this)); with a feeder they are decoded (RecordView), for the realtime consumers too.
  void record(const dataplane::StoredRecord& r) override { file_->add(r); }
  void loss(const dataplane::LossReport&) override {}  // in the pool's counters already
  std::size_t drain();

  std::shared_ptr<dataplane::Pool> pool_;
  std::uint32_t session_ = 0;
  std::unique_ptr<EtlFile> file_;
  std::unique_ptr<dataplane::Reader> reader_;
  std::unique_ptr<dataplane::RelayFeeder> feeder_;  // realtime and file at once
  std::uint64_t flush_timer_ns_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool stopped_ = false;
  std::uint64_t flush_requested_ = 0;  // FLUSH calls made
  std::uint64_t flush_done_ = 0;       // FLUSH calls served
  // The one switch_file call being served (callers are the broker's one thread): asked until
  // the thread has done it, then its status and reason.
  struct Switch {
    bool asked = false;
    std::string name;
    ULONG status = ERROR_SUCCESS;
    std::string reason;
  } switch_;
  std::thread thread_;
};

}  // namespace etwrt::broker
