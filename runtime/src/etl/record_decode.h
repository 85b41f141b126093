// etwrt: a trace file's record as the EVENT_RECORD a consumer's callback gets (the conversions
// Windows' reader makes: EVENT_HEADER records as they are, with their extended items; classic,
// instance, system and PERFINFO records with EVENT_HEADER_FLAG_CLASSIC_HEADER, the classic GUID
// (or the kernel event class of the hook's group) as ProviderId and the type as Opcode).
#pragma once

#include "trace_file.h"

#include <windows.h>
#include <evntcons.h>

#include <cstdint>

namespace etwrt::etl {

// EVENT_HEADER_EXT_TYPE_INSTANCE_INFO's data (EVENT_EXTENDED_ITEM_INSTANCE).
struct InstanceItem {
  ULONG InstanceId;
  ULONG ParentInstanceId;
  GUID ParentGuid;
};

// One decoded record; its pointers point into the TraceFile's arena or into this object.
struct Decoded {
  static constexpr unsigned kMaxItems = 64;
  EVENT_RECORD record;
  InstanceItem instance;
  EVENT_HEADER_EXTENDED_DATA_ITEM items[kMaxItems];
};

// Fills `out` from `r` (TimeStamp left in the file's clock). False when the record's extended
// items do not fit it (the file is corrupt).
bool decode_record(const TraceFile& file, const RecordRef& r, Decoded& out);

// The kernel event class of a system or PERFINFO hook's group (ntwmi.h's
// EVENT_TRACE_GROUP_*, HookId >> 8), as the MOF class pages name them; SystemTraceControlGuid
// for a group without a published class.
const GUID& kernel_group_guid(unsigned group);

}  // namespace etwrt::etl
