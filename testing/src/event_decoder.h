// The capture's decoder: what decode_record gives (TDH's view of each event: name, top-level
// fields as text), at a price a capture of 100,000 events can pay. TdhGetEventInformation runs
// once per kind of event (a TraceLogging event's metadata, or a manifest event's descriptor),
// and the payload of an event whose fields all have a fixed size or are NUL-terminated strings
// is read in place, in the schema's order, with the text decode_event would show. Any other
// event (structs, arrays, lengths from another field, a payload shorter than its schema) goes
// through TDH's per-property calls, as decode_record does.
#pragma once

#include "etwh/testing/capture.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace etwh::testing {

class EventDecoder {
 public:
  // Sets e.name, e.fields and e.decode_status from `record` (its header fields are the
  // caller's). Schemas are cached for the decoder's life: one capture, whose manifest stays
  // loaded meanwhile.
  void decode(const EVENT_RECORD& record, Event& e);

 private:
  struct Property {
    std::string name;
    USHORT in_type = 0;
  };
  struct Schema {
    ULONG status = 0;  // TdhGetEventInformation's
    std::string name;
    std::vector<Property> properties;
    bool in_place = false;  // every property read by read_in_place
  };

  const Schema& schema_of(const EVENT_RECORD& record);
  static bool read_in_place(const Schema& schema, const EVENT_RECORD& record, Event& e);

  std::unordered_map<std::string, Schema> schemas_;
  std::string key_;  // reused: no allocation per event to look a schema up
};

// Fills e.name, e.fields and e.decode_status through TDH's calls for each property
// (agent::decode_event): decode_record's way.
void decode_through_tdh(const EVENT_RECORD& record, Event& e);

}  // namespace etwh::testing
