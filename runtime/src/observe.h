// etwrt observation (`etwh observe`): when the environment names a channel
// (ETWRT_OBSERVE_SOCKET, the path of a SOCK_SEQPACKET socket the observer listens on), libetwrt
// reports what only the process itself sees: registrations, every EventWrite* with whether a
// session wanted it, every enable callback with its duration, session-control calls made inside a
// callback, EventEnabled calls and traits attempts. One JSON object per message (the format:
// docs/etwrt/use.md, "Observation"). Off by default; off, each hook costs the load of one flag and
// a predicted branch. Reporting never blocks and never aborts: a record the channel cannot take is
// counted as dropped, and every record carries the count so far.
#pragma once

#include <windows.h>
#include <evntprov.h>

#include <cstdint>

namespace etwrt {
struct Registration;
}

namespace etwrt::observe {

// Set once, before main, from ETWRT_OBSERVE_SOCKET; never changes afterwards.
extern bool g_on __attribute__((visibility("hidden")));
inline bool on() { return __builtin_expect(g_on, false); }

void registered(REGHANDLE handle, const GUID& guid);
void unregistered(REGHANDLE handle);
// The sessions (TRACEHANDLEs) an observed write went to: written into their buffers or counted
// lost there, so that the observer can check written = delivered + lost per session.
struct Delivered {
  std::uint64_t session[8];
  unsigned count = 0;
  void add(std::uint64_t s) {
    if (count < 8) session[count++] = s;
  }
};

// An EventWrite* call (`api` its entry point), whether any session accepts it now, and the
// sessions it went to.
void write(const char* api, REGHANDLE handle, const EVENT_DESCRIPTOR& descriptor,
           const Delivered& to);
// EventEnabled / EventProviderEnabled, with what they answered.
void enabled_query(const char* api, REGHANDLE handle, UCHAR level, ULONGLONG keyword, bool answer);
// EventSetInformation(EventProviderSetTraits) and its status.
void traits(REGHANDLE handle, ULONG size, ULONG status);
// A session-control entry point (StartTrace, ControlTrace, EnableTrace*): reported when the
// calling thread is inside an enable callback (seed 000: it can deadlock).
void control_call(const char* api);

// Brackets one enable callback: the end records its arguments and duration.
class CallbackScope {
 public:
  CallbackScope(const Registration& registration, ULONG is_enabled, UCHAR level, std::uint64_t any,
                std::uint64_t all, bool has_filter);
  ~CallbackScope();
  CallbackScope(const CallbackScope&) = delete;
  CallbackScope& operator=(const CallbackScope&) = delete;

 private:
  const Registration& registration_;
  ULONG is_enabled_;
  UCHAR level_;
  std::uint64_t any_, all_;
  bool has_filter_;
  std::int64_t start_ns_;
  REGHANDLE outer_;
};

}  // namespace etwrt::observe
