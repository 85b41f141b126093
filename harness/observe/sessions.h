// The observer's sessions (`etwh observe` is the controller and the consumer): up to eight
// realtime sessions, each with a consumer thread that counts what it receives, so that every
// event is accounted for (delivered + lost, per session, when the sessions stop).
#pragma once

#include "harness/observe/schedule.h"

#include <windows.h>
#include <evntcons.h>
#include <evntrace.h>

#include <nlohmann/json.hpp>

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace etwh::observe {

// One session's account once it stopped.
struct SessionAccount {
  std::size_t index = 0;  // in the schedule's actions
  std::string name;
  TRACEHANDLE handle = 0;          // what StartTrace gave (the observation names sessions by it)
  std::uint64_t delivered = 0;     // provider events its consumer received
  std::uint64_t lost = 0;          // EventsLost as ControlTrace(STOP) said
  std::uint64_t buffers_lost = 0;  // RealTimeBuffersLost (their events are not counted)
  ULONG stop_status = ERROR_SUCCESS;
  std::map<std::uint16_t, std::uint64_t> delivered_ids;  // events received, by event ID
  // The first event of each kind it received, as TDH decoded it (judge.h's DecodedKinds).
  std::map<std::string, nlohmann::json> decoded;
};

class Sessions {
 public:
  explicit Sessions(std::string prefix) : prefix_(std::move(prefix)) {}
  ~Sessions();
  Sessions(const Sessions&) = delete;
  Sessions& operator=(const Sessions&) = delete;

  // Carries out one action on `provider` (starting the session on its first use); returns the
  // status of the platform call (a failure is a harness fault: the observer's own calls).
  ULONG apply(const Action& action, const GUID& provider);
  // Stops every session and joins its consumer.
  std::vector<SessionAccount> stop_all();

 private:
  struct Session {
    std::string name;
    TRACEHANDLE handle = 0;
    TRACEHANDLE trace = INVALID_PROCESSTRACE_HANDLE;
    EVENT_TRACE_LOGFILEA logfile{};
    std::atomic<std::uint64_t> delivered{0};
    std::map<std::uint16_t, std::uint64_t> ids;     // the consumer thread's alone until joined
    std::map<std::string, nlohmann::json> decoded;  // likewise
    std::thread consumer;
  };
  ULONG start(std::size_t index);
  static void WINAPI on_record(PEVENT_RECORD record);

  std::string prefix_;
  std::array<std::unique_ptr<Session>, kMaxSessions> sessions_;
};

}  // namespace etwh::observe
