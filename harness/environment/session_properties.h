// The EVENT_TRACE_PROPERTIES buffer etwh starts and controls its sessions with (stress, observe,
// etwh::testing's capture), and how ControlTrace's status reads.
#pragma once

#include <windows.h>
#include <evntrace.h>

#include <vector>

namespace etwh {

// EVENT_TRACE_PROPERTIES followed by room for the logger name and the (empty) log file name
// ControlTrace writes after it.
class Properties {
 public:
  Properties() : bytes_(sizeof(EVENT_TRACE_PROPERTIES) + 2 * 1025) {
    get()->Wnode.BufferSize = static_cast<ULONG>(bytes_.size());
    get()->Wnode.Flags = WNODE_FLAG_TRACED_GUID;
    get()->LoggerNameOffset = sizeof(EVENT_TRACE_PROPERTIES);
  }
  EVENT_TRACE_PROPERTIES* get() { return reinterpret_cast<EVENT_TRACE_PROPERTIES*>(bytes_.data()); }
  std::size_t size() const { return bytes_.size(); }

 private:
  std::vector<unsigned char> bytes_;  // vector<unsigned char> from new: aligned for the struct
};

// Whether ControlTrace did its work: ERROR_MORE_DATA says only that the names did not fit (the
// ControlTrace page: the session is stopped all the same, the statistics are filled).
inline bool control_done(ULONG status) {
  return status == ERROR_SUCCESS || status == ERROR_MORE_DATA;
}

}  // namespace etwh
