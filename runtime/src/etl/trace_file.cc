// etwrt: parsing a trace file (trace_file.h).
#include "trace_file.h"

#include "xpress.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>

namespace etwrt::etl {
namespace {

constexpr std::uint16_t kFlagProcIndex = 0x0020;   // ETW_BUFFER_FLAG_PROC_INDEX
constexpr std::uint16_t kFlagCompressed = 0x0040;  // ETW_BUFFER_FLAG_COMPRESSED
constexpr std::uint32_t kPadding = 0xFFFFFFFF;
constexpr std::uint32_t kTraceHeaderFlag = 0x80;  // TRACE_HEADER_FLAG, the marker's top byte
constexpr std::uint32_t kEventTraceFlag = 0x40;   // TRACE_HEADER_EVENT_TRACE
constexpr std::size_t kLogfileHeader64 = 0x118;   // sizeof(TRACE_LOGFILE_HEADER), x64
constexpr std::size_t kLogfileHeader32 = 0x110;   // the same with 4-byte pointers

template <typename T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

std::string at(std::size_t offset, std::string_view what) {
  return "offset " + std::to_string(offset) + ": " + std::string(what);
}

ParseStatus fail(ULONG status, std::size_t offset, std::string_view what) {
  return {status, at(offset, what)};
}

// What indexing a record needs of its header type (the marker's third byte): whether this
// reader delivers it, where its size is (SYSTEM, compact and PERFINFO headers keep it in the
// second ULONG, the others first), its fixed header's size and where its stamp is. A table,
// so that a record costs one lookup rather than three switches.
struct KindLayout {
  bool known = false;
  std::uint8_t size_at = 0;
  std::uint8_t fixed = 0;
  std::uint8_t stamp_at = 0;
};

struct KindLayouts {
  KindLayout by_type[256];
  constexpr KindLayouts() : by_type() {
    constexpr Kind kinds[] = {Kind::system32, Kind::system64,   Kind::compact32,  Kind::compact64,
                              Kind::full32,   Kind::instance32, Kind::perfinfo32, Kind::perfinfo64,
                              Kind::event32,  Kind::event64,    Kind::full64,     Kind::instance64};
    for (const Kind k : kinds) {
      const bool second = k == Kind::system32 || k == Kind::system64 || k == Kind::compact32 ||
                          k == Kind::compact64 || k == Kind::perfinfo32 || k == Kind::perfinfo64;
      const bool perfinfo = k == Kind::perfinfo32 || k == Kind::perfinfo64;
      by_type[static_cast<std::uint8_t>(k)] = {true, static_cast<std::uint8_t>(second ? 4 : 0),
                                               static_cast<std::uint8_t>(fixed_header_size(k)),
                                               static_cast<std::uint8_t>(perfinfo ? 8 : 16)};
    }
  }
};
constexpr KindLayouts kLayouts;

// The WMI_BUFFER_HEADER fields the reader uses.
struct BufferHeader {
  std::uint32_t size;     // BufferSize: the buffer's bytes in the file (compressed or not).
  std::uint32_t offset;   // Offset: where its records end, counted from the buffer's start.
  std::uint16_t context;  // ClientContext's ProcessorNumber and Alignment (ProcessorIndex).
  std::uint16_t logger_id;
  std::uint16_t flags;
  std::int64_t sequence;  // SequenceNumber: the logger's count of the buffers it wrote.
};

BufferHeader read_buffer_header(const std::byte* p) {
  return {load<std::uint32_t>(p),        load<std::uint32_t>(p + 0x30),
          load<std::uint16_t>(p + 0x28), load<std::uint16_t>(p + 0x2A),
          load<std::uint16_t>(p + 0x34), load<std::int64_t>(p + 0x18)};
}

// Reads the header of the buffer at `pos` and checks that it fits the file and that its Offset
// is inside it (a compressed buffer's Offset within `max_records_end`, the logger's BufferSize).
ParseStatus check_buffer(std::span<const std::byte> file, std::size_t pos,
                         std::size_t max_records_end, BufferHeader& h) {
  if (file.size() - pos < kBufferHeaderSize)
    return fail(ERROR_FILE_CORRUPT, pos, "truncated buffer header");
  h = read_buffer_header(file.data() + pos);
  if (h.size < kBufferHeaderSize || h.size > file.size() - pos) {
    return fail(ERROR_FILE_CORRUPT, pos,
                "BufferSize " + std::to_string(h.size) + " does not fit the file");
  }
  const std::size_t limit = (h.flags & kFlagCompressed) != 0 ? max_records_end : h.size;
  if (h.offset < kBufferHeaderSize || h.offset > limit) {
    return fail(ERROR_FILE_CORRUPT, pos,
                "Offset " + std::to_string(h.offset) + " outside the buffer");
  }
  return {};
}

// Copies (or decompresses) the buffer at `pos`, checked, to `out`: its header, then its records
// up to Offset (h.offset bytes).
ParseStatus copy_buffer(std::span<const std::byte> file, std::size_t pos, const BufferHeader& h,
                        std::byte* out) {
  if ((h.flags & kFlagCompressed) == 0) {
    std::memcpy(out, file.data() + pos, h.offset);
    return {};
  }
  std::memcpy(out, file.data() + pos, kBufferHeaderSize);
  const std::span<std::byte> records(out + kBufferHeaderSize, h.offset - kBufferHeaderSize);
  const std::ptrdiff_t n = xpress_lz77_decompress(
      file.subspan(pos + kBufferHeaderSize, h.size - kBufferHeaderSize), records);
  if (n != static_cast<std::ptrdiff_t>(records.size())) {
    return fail(ERROR_FILE_CORRUPT, pos, "compressed buffer does not decompress to its Offset");
  }
  return {};
}

// The two above, appending to `arena`.
ParseStatus load_buffer(std::span<const std::byte> file, std::size_t pos,
                        std::size_t max_records_end, BufferHeader& h, Arena& arena) {
  if (ParseStatus s = check_buffer(file, pos, max_records_end, h); !s.ok()) return s;
  const std::size_t base = arena.size();
  arena.resize(base + h.offset);
  ParseStatus s = copy_buffer(file, pos, h, arena.data() + base);
  if (!s.ok()) arena.resize(base);
  return s;
}

// Walks the records of the buffer at `base` in `arena` (its Offset `end`), appending them.
ParseStatus index_records(const Arena& arena, std::size_t base, std::size_t end,
                          std::uint32_t buffer, std::size_t file_pos,
                          std::vector<RecordRef>& records, std::uint32_t& count) {
  std::size_t pos = kBufferHeaderSize;
  count = 0;
  const std::byte* b = arena.data() + base;
  while (end - pos >= 4) {
    const auto marker = load<std::uint32_t>(b + pos);
    if (marker == kPadding) break;
    const std::uint32_t type = (marker >> 16) & 0xFF;
    const std::uint32_t top = marker >> 24;
    const KindLayout layout = kLayouts.by_type[type];
    if ((top & kTraceHeaderFlag) == 0 || (top & kEventTraceFlag) == 0 || !layout.known) {
      return fail(ERROR_NOT_SUPPORTED, file_pos + pos,
                  "record of an unsupported kind (marker " + std::to_string(marker) + ")");
    }
    if (end - pos < layout.size_at + 4u)
      return fail(ERROR_FILE_CORRUPT, file_pos + pos, "truncated record");
    const std::size_t size = load<std::uint16_t>(b + pos + layout.size_at);
    if (size < layout.fixed || size > end - pos) {
      return fail(ERROR_FILE_CORRUPT, file_pos + pos,
                  "record size " + std::to_string(size) + " does not fit its buffer");
    }
    records.push_back({load<std::int64_t>(b + pos + layout.stamp_at),
                       static_cast<std::uint32_t>(base + pos), buffer,
                       static_cast<std::uint16_t>(size), static_cast<Kind>(type)});
    ++count;
    pos += (size + 7) & ~std::size_t{7};
  }
  return {};
}

// Reads a NUL-terminated UTF-16 string from `p` (at most `units`), advancing past its NUL.
std::u16string read_name(const std::byte*& p, std::size_t& units) {
  std::u16string s;
  while (units > 0) {
    const auto c = load<char16_t>(p);
    p += 2;
    --units;
    if (c == 0) break;
    s.push_back(c);
  }
  return s;
}

// The TRACE_LOGFILE_HEADER of the header event's payload (32- or 64-bit layout) into `out`.
void read_logfile_header(const std::byte* p, std::size_t size, bool wide, TraceFile& out) {
  TRACE_LOGFILE_HEADER& h = out.header;
  std::memcpy(&h, p, offsetof(TRACE_LOGFILE_HEADER, LoggerName));  // Same in both layouts.
  const std::size_t shift = wide ? 0 : 8;  // Two 4-byte pointers instead of 8-byte ones.
  std::memcpy(&h.TimeZone, p + offsetof(TRACE_LOGFILE_HEADER, TimeZone) - shift, sizeof h.TimeZone);
  const std::size_t tail = offsetof(TRACE_LOGFILE_HEADER, BootTime);
  std::memcpy(&h.BootTime, p + tail - shift, sizeof h - tail);
  h.LoggerName = nullptr;
  h.LogFileName = nullptr;
  const std::size_t fixed = wide ? kLogfileHeader64 : kLogfileHeader32;
  const std::byte* names = p + fixed;
  std::size_t units = (size - fixed) / 2;
  out.logger_name = read_name(names, units);
  out.log_file_name = read_name(names, units);
}

// Where each buffer is in the file and where its bytes go in the arena, from the headers alone,
// up to the first one that does not check (its place then ends the list: it is where a
// sequential parse stops with that buffer's status).
struct Place {
  std::size_t pos;   // in the file
  std::size_t base;  // in the arena
  BufferHeader header;
};

struct Layout {
  std::vector<Place> places;
  std::size_t arena_bytes = 0;
  std::size_t bad_pos = SIZE_MAX;  // the first buffer that does not check, if any
};

Layout lay_out(std::span<const std::byte> file, std::size_t max_records_end) {
  Layout out;
  for (std::size_t pos = 0; pos < file.size();) {
    BufferHeader h{};
    if (!check_buffer(file, pos, max_records_end, h).ok()) {
      out.bad_pos = pos;
      break;
    }
    out.places.push_back({pos, out.arena_bytes, h});
    out.arena_bytes += h.offset;
    pos += h.size;
  }
  return out;
}

// What loading buffers [first, last) gave: their records in order, and the first failure.
struct Loaded {
  std::vector<RecordRef> records;
  std::size_t failed = SIZE_MAX;  // index of the first buffer that failed
  ParseStatus status;
};

void load_range(std::span<const std::byte> file, const Layout& layout, std::size_t first,
                std::size_t last, Arena& arena, std::vector<BufferInfo>& buffers, Loaded& out) {
  std::size_t i = first;
  try {  // (in a thread of its own, an exception would end the process)
    out.records.reserve((layout.places[last - 1].base - layout.places[first].base) / 64 + 16);
    for (; i < last; ++i) {
      const Place& p = layout.places[i];
      const BufferHeader& h = p.header;
      std::uint32_t count = 0;
      ParseStatus s = copy_buffer(file, p.pos, h, arena.data() + p.base);
      if (s.ok()) {
        s = index_records(arena, p.base, h.offset, static_cast<std::uint32_t>(i), p.pos,
                          out.records, count);
      }
      if (!s.ok()) {
        out.failed = i;
        out.status = std::move(s);
        return;
      }
      const bool proc_index = (h.flags & kFlagProcIndex) != 0;
      buffers[i] = {static_cast<std::uint16_t>(proc_index ? h.context & 0x7FF : h.context & 0xFF),
                    h.logger_id, proc_index, count, h.sequence};
    }
  } catch (const std::bad_alloc&) {
    out.failed = i;
    out.status = fail(ERROR_NOT_ENOUGH_MEMORY, layout.places[i].pos, "no memory for its records");
  }
}

// How many threads decompress and index: each buffer is compressed on its own, so they split
// the buffers; a small file is not worth a thread.
std::size_t loaders(std::size_t buffers) {
  constexpr std::size_t kMostThreads = 4;
  constexpr std::size_t kBuffersPerThread = 64;
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  return std::clamp<std::size_t>(buffers / kBuffersPerThread, 1, std::min(cores, kMostThreads));
}

}  // namespace

ParseStatus parse_header(std::span<const std::byte> file, TraceFile& out) {
  Arena arena;
  BufferHeader h{};
  if (ParseStatus s = load_buffer(file, 0, 0, h, arena); !s.ok()) {
    return {ERROR_BAD_FORMAT, "not a trace file: " + s.message};
  }
  std::vector<RecordRef> records;
  std::uint32_t count = 0;
  if (ParseStatus s = index_records(arena, 0, h.offset, 0, 0, records, count);
      !s.ok() || records.empty()) {
    return {ERROR_BAD_FORMAT, "not a trace file: no log-file header event in the first buffer"};
  }
  const RecordRef& r = records.front();
  const std::byte* p = arena.data() + r.offset;
  const bool wide = r.kind == Kind::system64;
  const std::size_t payload = r.size - fixed_header_size(r.kind);
  if ((r.kind != Kind::system32 && !wide) || load<std::uint16_t>(p + 6) != 0 ||
      payload < (wide ? kLogfileHeader64 : kLogfileHeader32)) {
    return {ERROR_BAD_FORMAT, "not a trace file: the first record is no log-file header event"};
  }
  read_logfile_header(p + fixed_header_size(r.kind), payload, wide, out);
  out.header_raw_time = r.raw_time;
  return {};
}

ParseStatus parse_records(std::span<const std::byte> file, TraceFile& out, std::size_t max_arena) {
  // A compressed buffer decompresses to at most the session's buffer size, itself at most
  // MAX_ETW_BUFFER_SIZE (16 MB, ntwmi.h).
  const std::size_t max_end = std::min<std::size_t>(out.header.BufferSize, kMaxBufferBytes);
  const Layout layout = lay_out(file, max_end);
  if (layout.arena_bytes > std::min(max_arena, kMaxArenaBytes)) {
    return fail(ERROR_NOT_ENOUGH_MEMORY, 0,
                "the buffers hold " + std::to_string(layout.arena_bytes) +
                    " bytes, over the reader's " + std::to_string(max_arena));
  }
  const std::size_t n = layout.places.size();
  Arena arena;
  arena.resize(layout.arena_bytes);  // (not zeroed) each buffer fills its own part
  std::vector<BufferInfo> buffers(n);
  const std::size_t threads = loaders(n);
  std::vector<Loaded> parts(threads);
  std::vector<std::thread> helpers;
  helpers.reserve(threads);  // (growing it while threads run could throw past them)
  // Part k takes buffers [n * k / threads, n * (k + 1) / threads); part 0 is this thread's. A
  // thread that cannot be started leaves its part to this one.
  const auto bounds = [&](std::size_t k) {
    return std::pair(n * k / threads, n * (k + 1) / threads);
  };
  std::vector<bool> inline_part(threads, false);
  for (std::size_t k = 1; k < threads; ++k) {
    const auto [first, last] = bounds(k);
    try {
      helpers.emplace_back(
          [&, first, last, k] { load_range(file, layout, first, last, arena, buffers, parts[k]); });
    } catch (const std::system_error&) {
      inline_part[k] = true;
    }
  }
  for (std::size_t k = 0; k < threads; ++k) {
    const auto [first, last] = bounds(k);
    if ((k == 0 || inline_part[k]) && first < last) {
      load_range(file, layout, first, last, arena, buffers, parts[k]);
    }
  }
  for (std::thread& t : helpers) t.join();
  // The first failure in file order, as a parse buffer by buffer would meet it.
  for (Loaded& part : parts) {
    if (part.failed != SIZE_MAX) return std::move(part.status);
  }
  if (layout.bad_pos != SIZE_MAX) {
    BufferHeader h{};
    return check_buffer(file, layout.bad_pos, max_end, h);
  }
  std::vector<RecordRef> records;
  std::size_t total = 0;
  for (const Loaded& part : parts) total += part.records.size();
  if (total == 0) return fail(ERROR_BAD_FORMAT, 0, "no records");
  records.reserve(total);
  for (const Loaded& part : parts) {
    records.insert(records.end(), part.records.begin(), part.records.end());
  }
  out.arena = std::move(arena);
  out.buffers = std::move(buffers);
  out.records = std::move(records);
  out.header_record = 0;
  return {};
}

}  // namespace etwrt::etl
