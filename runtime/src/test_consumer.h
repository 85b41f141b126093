// Test support: a realtime EVENT_RECORD consumer of one session. open_realtime() opens it
// (OpenTraceA) for a callback, open_file() a trace file; ThreadConsumer runs ProcessTrace on a
// thread of its own and keeps what the test's `read` makes of each record it wants.
#pragma once

#include <windows.h>
#include <evntrace.h>
#include <evntcons.h>

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace etwrt::testing {

// OpenTraceA of the realtime session `name` (kept alive by the caller, as `logfile`), delivering
// EVENT_RECORDs to `callback` with `context` as UserContext; `extra_mode` adds mode bits.
inline TRACEHANDLE open_realtime(EVENT_TRACE_LOGFILEA& logfile, std::string& name,
                                 PEVENT_RECORD_CALLBACK callback, void* context,
                                 ULONG extra_mode = 0) {
  logfile.LoggerName = name.data();
  logfile.ProcessTraceMode =
      PROCESS_TRACE_MODE_REAL_TIME | PROCESS_TRACE_MODE_EVENT_RECORD | extra_mode;
  logfile.EventRecordCallback = callback;
  logfile.Context = context;
  return OpenTraceA(&logfile);
}

// OpenTraceA of the trace file `name` (kept alive by the caller, as `logfile`), delivering
// EVENT_RECORDs to `callback` with `context` as UserContext.
inline TRACEHANDLE open_file(EVENT_TRACE_LOGFILEA& logfile, std::string& name,
                             PEVENT_RECORD_CALLBACK callback, void* context) {
  logfile.LogFileName = name.data();
  logfile.ProcessTraceMode = PROCESS_TRACE_MODE_EVENT_RECORD;
  logfile.EventRecordCallback = callback;
  logfile.Context = context;
  return OpenTraceA(&logfile);
}

// `Seen` is what the test keeps of an event; `read` makes it inside the callback, or returns
// nothing for a record the test skips.
template <typename Seen>
class ThreadConsumer {
 public:
  using Read = std::optional<Seen> (*)(PEVENT_RECORD);

  ThreadConsumer(const std::string& session, Read read, ULONG extra_mode = 0)
      : name_(session), read_(read) {
    handle_ = open_realtime(logfile_, name_, &ThreadConsumer::on_event, this, extra_mode);
    EXPECT_NE(handle_, INVALID_PROCESSTRACE_HANDLE);
    thread_ = std::thread([this] { ProcessTrace(&handle_, 1, nullptr, nullptr); });
  }
  ~ThreadConsumer() {
    if (thread_.joinable()) thread_.join();
    CloseTrace(handle_);
  }
  ThreadConsumer(const ThreadConsumer&) = delete;
  ThreadConsumer& operator=(const ThreadConsumer&) = delete;

  void join() { thread_.join(); }
  std::vector<Seen> events() {
    std::lock_guard lock(mu_);
    return seen_;
  }
  // What arrived once there are `n` (or after 20 s: the test then sees fewer).
  std::vector<Seen> wait_for(std::size_t n) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(20), [&] { return seen_.size() >= n; });
    return seen_;
  }

 private:
  static void WINAPI on_event(PEVENT_RECORD r) {
    auto* self = static_cast<ThreadConsumer*>(r->UserContext);
    std::optional<Seen> seen = self->read_(r);
    if (!seen) return;
    std::lock_guard lock(self->mu_);
    self->seen_.push_back(std::move(*seen));
    self->cv_.notify_all();
  }

  std::string name_;
  Read read_;
  EVENT_TRACE_LOGFILEA logfile_{};
  TRACEHANDLE handle_ = INVALID_PROCESSTRACE_HANDLE;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Seen> seen_;
};

}  // namespace etwrt::testing
