// An event as a write step gives it, and a consumer as a consume step gives it
// (data_path_ops.h), apart from the ops: the oracle's model, lint and other families read
// events and consumers without depending on the family's list of ops.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace etwh {

// An EVENT_DATA_DESCRIPTOR with a Type (EVENT_DATA_DESCRIPTOR page), written after the payload.
struct TypedData {
  std::uint8_t type = 0;  // 1 event metadata (TraceLogging), 2 provider metadata (traits)
  std::vector<std::uint8_t> data;
};

// One entry of a write step's event set: a descriptor, written `count` times in a row.
struct EventDef {
  std::uint16_t id = 0;
  std::uint8_t version = 0;
  std::uint8_t channel = 0;
  std::uint8_t level = 0;
  std::uint8_t opcode = 0;
  std::uint16_t task = 0;
  std::uint64_t keyword = 0;
  std::uint32_t count = 1;
  std::vector<std::uint8_t> payload;  // after the 8-byte sequence number the driver prepends
  std::vector<TypedData> typed;       // descriptors with a Type, after the payload's
};

// A realtime consumer `consumer` of `session` in `agent`, as consume gives it and as the oracle's
// expectation of what it receives keeps it.
struct ConsumerDef {
  std::string consumer;
  std::string session;
  std::string agent;
  bool event_record_mode = true;  // "event_record" (EVENT_RECORD) or "event_trace" (classic)
  std::uint64_t context = 0;      // EVENT_TRACE_LOGFILE.Context
  std::uint32_t delay_us = 0;     // the consumer's callback spins this long per record
  // OpenTrace's EVENT_TRACE_LOGFILE is overwritten (decoy callbacks, another session's name)
  // after OpenTrace returns and before ProcessTrace (CON-LOGFILE-COPY): no decoy callback may
  // be called.
  bool overwrite_logfile = false;
};

}  // namespace etwh
