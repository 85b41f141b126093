// A recorded trace (.etl) as `etwh judge` judges it: what ProcessTrace delivered from one file,
// summed up per event kind, with the first event of each kind decoded and the TraceLogging
// metadata and traits blobs the events carried. Plain data: read_trace (trace_reader.h) fills
// it through the Win32 API, judge_trace (trace_judge.h) judges it without a platform.
#pragma once

#include "harness/model/result.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace etwh::recorded {

// A record's position in its file: 1 is the first record ProcessTrace delivered (the log-file
// header event), as `etwh judge` reports it ("FILE:N").
using RecordNumber = std::uint64_t;

inline constexpr std::uint32_t kNoBlob = 0xFFFFFFFF;

// One distinct kind of event: a provider, a descriptor, classic or not, and the TraceLogging
// metadata it carried (a kind per metadata block, so that two layouts of one Id stay apart).
struct EventKind {
  std::string provider;  // GUID, 8-4-4-4-12 lower case
  std::uint16_t id = 0;
  std::uint8_t version = 0, channel = 0, level = 0, opcode = 0;
  std::uint16_t task = 0;
  std::uint64_t keyword = 0;
  bool classic = false;              // EVENT_HEADER_FLAG_CLASSIC_HEADER
  std::uint32_t metadata = kNoBlob;  // index in RecordedTrace::metadata (EVENT_SCHEMA_TL)
  std::uint32_t traits = kNoBlob;    // index in RecordedTrace::traits (PROV_TRAITS)
  std::uint64_t count = 0;
  RecordNumber first = 0;
  std::uint32_t first_payload_size = 0;
  // The first event of the kind as TDH decoded it; `decode_status` is TDH's when it could not.
  std::optional<DecodedEvent> decoded;
  std::uint32_t decode_status = 0;
};

// An extended item's bytes, kept once per distinct content.
struct Blob {
  std::vector<std::uint8_t> bytes;
  RecordNumber first = 0;
};

// What TdhGetEventInformation or the traits blob says a provider is called.
struct ProviderName {
  std::string provider;  // GUID as in EventKind
  std::string name;
};

struct RecordedTrace {
  std::string file;
  // OpenTrace's failure (ERROR_*), or ProcessTrace's status; 0 when the file played through.
  std::uint32_t open_status = 0, process_status = 0;
  // TRACE_LOGFILE_HEADER, as OpenTrace filled it.
  std::uint32_t events_lost = 0, buffers_lost = 0, buffers_written = 0, pointer_size = 0;
  std::uint32_t log_file_mode = 0;
  std::int64_t start_time = 0, end_time = 0;  // FILETIME
  std::uint64_t records = 0;                  // every record delivered, the header event included
  // The first record: whether it is the log-file header event (EventTraceGuid, Opcode 0).
  bool first_is_header = false;
  std::string first_record;  // the first record's provider and opcode, described
  // Delivery order: records whose TimeStamp is below the one before them.
  std::uint64_t inversions = 0;
  RecordNumber first_inversion = 0;
  std::int64_t inversion_before = 0, inversion_after = 0;
  // Records stamped before the header's StartTime.
  std::uint64_t before_start = 0;
  RecordNumber first_before_start = 0;
  std::int64_t first_before_start_stamp = 0;
  std::vector<EventKind> kinds;  // in order of first appearance
  std::vector<Blob> metadata, traits;
  std::vector<ProviderName> names;
  double read_seconds = 0;
};

}  // namespace etwh::recorded
