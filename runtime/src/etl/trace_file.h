// etwrt: a trace file (.etl) in Windows' own format, read from documented facts: the per-buffer
// WMI_BUFFER_HEADER (0x48 bytes; Offset ends the records; ETW_BUFFER_FLAG_COMPRESSED buffers
// hold MS-XCA plain LZ77 data after the header, BufferSize their size on disk), records 8-byte
// aligned and told apart by the header type in their marker (EVENT_HEADER, classic
// EVENT_TRACE_HEADER, instance, SYSTEM_TRACE_HEADER, compact, PERFINFO, each 32- or 64-bit),
// 0xFF padding, and the log-file header event (TRACE_LOGFILE_HEADER then two UTF-16 names).
// Parsing never trusts the bytes: every size is checked against its buffer and the file.
#pragma once

#include <windows.h>
#include <evntrace.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace etwrt::etl {

inline constexpr std::size_t kBufferHeaderSize = 0x48;

// The header types of ntwmi.h (TRACE_HEADER_TYPE_*), the marker's third byte.
enum class Kind : std::uint8_t {
  system32 = 1,
  system64 = 2,
  compact32 = 3,
  compact64 = 4,
  full32 = 10,
  instance32 = 11,
  perfinfo32 = 16,
  perfinfo64 = 17,
  event32 = 18,
  event64 = 19,
  full64 = 20,
  instance64 = 21,
};

// Leaves the bytes of a resized arena uninitialised: each is written by the copy or the
// decompression that follows, and zeroing the whole arena first cost as much as a tenth of a read.
template <typename T>
struct UninitAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = UninitAllocator<U>;
  };
  UninitAllocator() = default;
  template <typename U>
  UninitAllocator(const UninitAllocator<U>&) {}
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
using Arena = std::vector<std::byte, UninitAllocator<std::byte>>;

// One record of the file: where its bytes are in TraceFile::arena, its raw stamp (the file's
// clock) and the buffer it came from. 24 bytes: the merge and the delivery stream through
// one per record (the arena is at most kMaxArenaBytes, a record's size a 16-bit field).
struct RecordRef {
  std::int64_t raw_time;
  std::uint32_t offset;
  std::uint32_t buffer;
  std::uint16_t size;
  Kind kind;
};
static_assert(sizeof(RecordRef) == 24);

// Records as the reader keeps them: sized without being zeroed first, since each is written.
using Records = std::vector<RecordRef, UninitAllocator<RecordRef>>;

struct BufferInfo {
  std::uint16_t processor;  // ProcessorIndex (ETW_BUFFER_FLAG_PROC_INDEX) or ProcessorNumber.
  std::uint16_t logger_id;
  bool processor_index;  // The buffer carries ETW_BUFFER_FLAG_PROC_INDEX.
  std::uint32_t records;
  std::int64_t sequence;  // SequenceNumber (0 where the logger left it so).
};

// What a file holds once parsed: the log-file header and every record, in file order.
struct TraceFile {
  TRACE_LOGFILE_HEADER header{};  // x64 layout; LoggerName and LogFileName point nowhere.
  std::u16string logger_name;
  std::u16string log_file_name;
  std::int64_t header_raw_time = 0;  // The header event's stamp: the clock's StartTime.
  std::uint32_t header_record = 0;   // Index of the header event in `records`.
  Arena arena;                       // Every buffer's header and records, decompressed.
  std::vector<BufferInfo> buffers;
  std::vector<RecordRef> records;
};

// A parse's outcome: ERROR_SUCCESS, or the status and a message naming the byte offset.
struct ParseStatus {
  ULONG status = ERROR_SUCCESS;
  std::string message;
  bool ok() const { return status == ERROR_SUCCESS; }
};

// Reads the header buffer (the file's first) and its log-file header event into `out.header`
// and the names. ERROR_BAD_FORMAT when the file does not start with one.
ParseStatus parse_header(std::span<const std::byte> file, TraceFile& out);

inline constexpr std::size_t kMaxBufferBytes = 16 << 20;  // MAX_ETW_BUFFER_SIZE (ntwmi.h)
inline constexpr std::size_t kMaxArenaBytes = std::size_t{1} << 30;  // RecordRef's offset fits.

// Reads every buffer (the header's included) into `out.arena`, `out.buffers` and `out.records`,
// after parse_header. ERROR_FILE_CORRUPT for a buffer or record whose sizes lie, a truncated
// buffer or a compressed one that does not decompress; ERROR_NOT_SUPPORTED for a record of a
// kind this reader does not deliver (WPP messages); ERROR_NOT_ENOUGH_MEMORY when the buffers
// would hold more than `max_arena` bytes decompressed (a few compressed bytes may claim 16 MB
// each). Nothing is kept on failure.
ParseStatus parse_records(std::span<const std::byte> file, TraceFile& out,
                          std::size_t max_arena = kMaxArenaBytes);

// The record's fixed header size for its kind (SYSTEM_TRACE_HEADER 32, compact 24, PERFINFO 16,
// EVENT_TRACE_HEADER 48, EVENT_INSTANCE_GUID_HEADER 72, EVENT_HEADER 80).
constexpr std::size_t fixed_header_size(Kind kind) {
  switch (kind) {
    case Kind::system32:
    case Kind::system64: return 32;
    case Kind::compact32:
    case Kind::compact64: return 24;
    case Kind::perfinfo32:
    case Kind::perfinfo64: return 16;
    case Kind::full32:
    case Kind::full64: return 48;
    case Kind::instance32:
    case Kind::instance64: return 72;
    case Kind::event32:
    case Kind::event64: return 80;
  }
  return 80;
}

}  // namespace etwrt::etl
