// etwrt: trace-file records into EVENT_RECORDs (record_decode.h).
#include "record_decode.h"

#include <cstring>

namespace etwrt::etl {
namespace {

template <typename T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

constexpr GUID make_guid(std::uint32_t a, std::uint16_t b, std::uint16_t c, std::uint64_t d) {
  return GUID{a,
              b,
              c,
              {static_cast<std::uint8_t>(d >> 56), static_cast<std::uint8_t>(d >> 48),
               static_cast<std::uint8_t>(d >> 40), static_cast<std::uint8_t>(d >> 32),
               static_cast<std::uint8_t>(d >> 24), static_cast<std::uint8_t>(d >> 16),
               static_cast<std::uint8_t>(d >> 8), static_cast<std::uint8_t>(d)}};
}

// The kernel event classes of the MOF class pages (EventTrace, DiskIo, PageFault, Process,
// FileIo, Thread, TcpIp, Job, UdpIp, Registry, DbgPrint, EventTraceConfig, Pool, PerfInfo, Heap,
// Object, Power, Image, ALPC, SplitIo, ThreadPool, StackWalk, ...), indexed by group.
struct GroupGuid {
  unsigned group;
  GUID guid;
};
constexpr GroupGuid kGroups[] = {
    {0x00, make_guid(0x68fdd900, 0x4a3e, 0x11d1, 0x84f40000f80464e3)},  // EventTrace (header)
    {0x01, make_guid(0x3d6fa8d4, 0xfe05, 0x11d0, 0x9dda00c04fd7ba7c)},  // DiskIo
    {0x02, make_guid(0x3d6fa8d3, 0xfe05, 0x11d0, 0x9dda00c04fd7ba7c)},  // PageFault
    {0x03, make_guid(0x3d6fa8d0, 0xfe05, 0x11d0, 0x9dda00c04fd7ba7c)},  // Process
    {0x04, make_guid(0x90cbdc39, 0x4a3e, 0x11d1, 0x84f40000f80464e3)},  // FileIo
    {0x05, make_guid(0x3d6fa8d1, 0xfe05, 0x11d0, 0x9dda00c04fd7ba7c)},  // Thread
    {0x06, make_guid(0x9a280ac0, 0xc8e0, 0x11d1, 0x84e200c04fb998a2)},  // TcpIp
    {0x07, make_guid(0x3282fc76, 0xfeed, 0x498e, 0x8aa7e70f459d430e)},  // Job
    {0x08, make_guid(0xbf3a50c5, 0xa9c9, 0x4988, 0xa0052df0b7c80f80)},  // UdpIp
    {0x09, make_guid(0xae53722e, 0xc863, 0x11d2, 0x865900c04fa321a1)},  // Registry
    {0x0A, make_guid(0x13976d09, 0xa327, 0x438c, 0x950b7f03192815c7)},  // DbgPrint
    {0x0B, make_guid(0x01853a65, 0x418f, 0x4f36, 0xaefcdc0f1d2fd235)},  // EventTraceConfig
    {0x0E, make_guid(0x0268a8b6, 0x74fd, 0x4302, 0x9dd06e8f1795c0cf)},  // Pool
    {0x0F, make_guid(0xce1dbfb4, 0x137e, 0x4da6, 0x87b03f59aa102cbc)},  // PerfInfo
    {0x10, make_guid(0x222962ab, 0x6180, 0x4b88, 0xa825346b75f2a24a)},  // Heap
    {0x11, make_guid(0x89497f50, 0xeffe, 0x4440, 0x8cf2ce6b1cdcaca7)},  // Object
    {0x12, make_guid(0xe43445e0, 0x0903, 0x48c3, 0xb878ff0fccebdd04)},  // Power
    {0x14, make_guid(0x2cb15d1d, 0x5fc1, 0x11d2, 0xabe100a0c911f518)},  // Image
    {0x17, make_guid(0x3b9c9951, 0x3480, 0x4220, 0x93779c8e5184f5cd)},  // CritSec
    {0x18, make_guid(0xdef2fe46, 0x7bd6, 0x4b80, 0xbd94f57fe20d0ce3)},  // StackWalk
    {0x19, make_guid(0x9aec974b, 0x5b8e, 0x4118, 0x9b923186d8002ce5)},  // UMS
    {0x1A, make_guid(0x45d8cccd, 0x539f, 0x4b72, 0xa8b75c683142609a)},  // ALPC
    {0x1B, make_guid(0xd837ca92, 0x12b9, 0x44a5, 0xad6a3a65b3578aa8)},  // SplitIo
    {0x1C, make_guid(0xc861d0e2, 0xa2c1, 0x4d36, 0x9f9c970bab943a12)},  // ThreadPool
};
constexpr GUID kSystemTraceControl = make_guid(0x9e814aad, 0x3204, 0x11d2, 0x9a82006008a86939);

// kGroups by group: a lookup per system record, not a search.
struct GroupTable {
  const GUID* by_group[256];
  constexpr GroupTable() : by_group() {
    for (const GUID*& g : by_group) g = &kSystemTraceControl;
    for (const GroupGuid& g : kGroups) by_group[g.group] = &g.guid;
  }
};
constexpr GroupTable kGroupTable;

bool is64(Kind k) {
  return k == Kind::system64 || k == Kind::compact64 || k == Kind::perfinfo64 ||
         k == Kind::event64 || k == Kind::full64 || k == Kind::instance64;
}

void set_user_data(EVENT_RECORD& e, const std::byte* p, std::size_t size) {
  e.UserData = const_cast<std::byte*>(p);
  e.UserDataLength = static_cast<USHORT>(size);
}

// EVENT_HEADER records: the header as written, then the extended items (each an 8-byte header
// {Reserved1, ExtType, Linkage, DataSize} and its data, 8-byte aligned, chained by Linkage),
// then the user data.
bool decode_event(const std::byte* p, std::size_t size, Decoded& out) {
  EVENT_RECORD& e = out.record;
  std::memcpy(&e.EventHeader, p, sizeof(EVENT_HEADER));
  e.EventHeader.HeaderType = 0;
  std::size_t pos = sizeof(EVENT_HEADER);
  unsigned n = 0;
  if ((e.EventHeader.Flags & EVENT_HEADER_FLAG_EXTENDED_INFO) != 0) {
    for (bool more = true; more;) {
      if (size - pos < 8 || n == Decoded::kMaxItems) return false;
      const auto type = load<std::uint16_t>(p + pos + 2);
      more = (load<std::uint16_t>(p + pos + 4) & 1) != 0;
      const std::size_t data = load<std::uint16_t>(p + pos + 6);
      const std::size_t step = (8 + data + 7) & ~std::size_t{7};
      if (8 + data > size - pos) return false;
      EVENT_HEADER_EXTENDED_DATA_ITEM& item = out.items[n++];
      item = EVENT_HEADER_EXTENDED_DATA_ITEM{};
      item.ExtType = type;
      item.DataSize = static_cast<USHORT>(data);
      item.DataPtr = reinterpret_cast<ULONGLONG>(p + pos + 8);
      pos += step < size - pos ? step : size - pos;
    }
  }
  e.ExtendedDataCount = static_cast<USHORT>(n);
  e.ExtendedData = n > 0 ? out.items : nullptr;
  set_user_data(e, p + pos, size - pos);
  return true;
}

// Classic EVENT_TRACE_HEADER and EVENT_INSTANCE_GUID_HEADER records.
void decode_classic(const std::byte* p, std::size_t size, bool instance, Decoded& out) {
  EVENT_HEADER& h = out.record.EventHeader;
  h.Flags = EVENT_HEADER_FLAG_CLASSIC_HEADER;
  h.EventDescriptor.Opcode = load<std::uint8_t>(p + 4);
  h.EventDescriptor.Level = load<std::uint8_t>(p + 5);
  h.EventDescriptor.Version = static_cast<UCHAR>(load<std::uint16_t>(p + 6));
  h.ThreadId = load<std::uint32_t>(p + 8);
  h.ProcessId = load<std::uint32_t>(p + 12);
  h.TimeStamp.QuadPart = load<std::int64_t>(p + 16);
  std::memcpy(&h.ProviderId, p + 24, sizeof(GUID));
  h.ProcessorTime = load<std::uint64_t>(p + 40);
  std::size_t fixed = 48;
  if (instance) {
    std::memcpy(&out.instance, p + 48, sizeof out.instance);
    EVENT_HEADER_EXTENDED_DATA_ITEM& item = out.items[0];
    item = EVENT_HEADER_EXTENDED_DATA_ITEM{};
    item.ExtType = EVENT_HEADER_EXT_TYPE_INSTANCE_INFO;
    item.DataSize = sizeof out.instance;
    item.DataPtr = reinterpret_cast<ULONGLONG>(&out.instance);
    out.record.ExtendedDataCount = 1;
    out.record.ExtendedData = out.items;
    h.Flags |= EVENT_HEADER_FLAG_EXTENDED_INFO;
    fixed = 72;
  }
  set_user_data(out.record, p + fixed, size - fixed);
}

// SYSTEM_TRACE_HEADER, its compact form and PERFINFO_TRACE_HEADER: the hook's group names the
// class, its type the Opcode; the header's Version is the event's.
void decode_system(const std::byte* p, std::size_t size, Kind k, Decoded& out) {
  EVENT_HEADER& h = out.record.EventHeader;
  const auto hook = load<std::uint16_t>(p + 6);
  h.Flags = EVENT_HEADER_FLAG_CLASSIC_HEADER;
  h.ProviderId = *kGroupTable.by_group[hook >> 8];
  h.EventDescriptor.Opcode = static_cast<UCHAR>(hook & 0xFF);
  h.EventDescriptor.Version = static_cast<UCHAR>(load<std::uint16_t>(p));
  const bool perfinfo = k == Kind::perfinfo32 || k == Kind::perfinfo64;
  if (perfinfo) {
    h.ThreadId = 0xFFFFFFFF;  // The header has none (etwrt choice: docs/etwrt/conformance.md).
    h.ProcessId = 0xFFFFFFFF;
    h.TimeStamp.QuadPart = load<std::int64_t>(p + 8);
  } else {
    h.ThreadId = load<std::uint32_t>(p + 8);
    h.ProcessId = load<std::uint32_t>(p + 12);
    h.TimeStamp.QuadPart = load<std::int64_t>(p + 16);
  }
  const bool full = k == Kind::system32 || k == Kind::system64;
  if (full) {
    h.KernelTime = load<std::uint32_t>(p + 24);
    h.UserTime = load<std::uint32_t>(p + 28);
  } else {
    h.Flags |= EVENT_HEADER_FLAG_NO_CPUTIME;
  }
  const std::size_t fixed = fixed_header_size(k);
  set_user_data(out.record, p + fixed, size - fixed);
}

}  // namespace

const GUID& kernel_group_guid(unsigned group) {
  return group < 256 ? *kGroupTable.by_group[group] : kSystemTraceControl;
}

bool decode_record(const TraceFile& file, const RecordRef& r, Decoded& out) {
  const std::byte* p = file.arena.data() + r.offset;
  EVENT_RECORD& e = out.record;
  // An EVENT_HEADER record's header is copied whole; the other kinds set some of its fields.
  if (r.kind != Kind::event32 && r.kind != Kind::event64) e.EventHeader = EVENT_HEADER{};
  e.ExtendedDataCount = 0;
  e.ExtendedData = nullptr;
  e.UserContext = nullptr;
  switch (r.kind) {
    case Kind::event32:
    case Kind::event64:
      if (!decode_event(p, r.size, out)) return false;
      break;
    case Kind::full32:
    case Kind::full64: decode_classic(p, r.size, false, out); break;
    case Kind::instance32:
    case Kind::instance64: decode_classic(p, r.size, true, out); break;
    default: decode_system(p, r.size, r.kind, out); break;
  }
  e.EventHeader.Size = static_cast<USHORT>(r.size);
  e.EventHeader.Flags |=
      is64(r.kind) ? EVENT_HEADER_FLAG_64_BIT_HEADER : EVENT_HEADER_FLAG_32_BIT_HEADER;
  const BufferInfo& b = file.buffers[r.buffer];
  e.BufferContext.ProcessorIndex = b.processor;
  e.BufferContext.LoggerId = b.logger_id;
  if (b.processor_index) e.EventHeader.Flags |= EVENT_HEADER_FLAG_PROCESSOR_INDEX;
  return true;
}

}  // namespace etwrt::etl
