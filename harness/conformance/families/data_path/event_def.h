// An event as a write step gives it (data_path_ops.h), apart from the ops: the oracle's model,
// lint and other families read events without depending on the family's list of ops.
#pragma once

#include <cstdint>
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

}  // namespace etwh
