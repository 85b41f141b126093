#include "etl_file.h"

#if defined(ETWRT_MUTANTS)
#include "etwrt_mutant.h"
#endif

#include <evntrace.h>

#include "etl/xpress_encode.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace etwrt::broker {
namespace {

// Facts of the on-disk format (phnt's ntwmi.h, checked against the files of
// ../shared/etl-corpus, which Windows wrote).
constexpr std::uint8_t kTypeSystem64 = 0x02;       // TRACE_HEADER_TYPE_SYSTEM64
constexpr std::uint8_t kTypeEventHeader64 = 0x13;  // TRACE_HEADER_TYPE_EVENT_HEADER64
constexpr std::uint8_t kTypeFullHeader64 = 0x14;   // TRACE_HEADER_TYPE_FULL_HEADER64
constexpr std::uint8_t kMarkerFlags = 0xC0;        // TRACE_HEADER_FLAG | TRACE_HEADER_EVENT_TRACE
constexpr std::uint16_t kBufferFlagFlushMarker = 0x0001;  // ETW_BUFFER_FLAG_FLUSH_MARKER
constexpr std::uint16_t kBufferFlagProcIndex = 0x0020;    // ETW_BUFFER_FLAG_PROC_INDEX
constexpr std::uint16_t kBufferTypeGeneric = 0;           // ETW_BUFFER_TYPE_GENERIC
constexpr std::uint16_t kBufferTypeHeader = 4;            // ETW_BUFFER_TYPE_HEADER
constexpr std::uint32_t kBufferStateFlush = 3;            // EtwBufferStateFlush
constexpr std::uint16_t kExtLinkage = 1;                  // another extended item follows
// What the header claims to be: Windows 10 (build 19041), file layout 1.5 (uncompressed).
constexpr std::uint8_t kVersion[4] = {10, 0, 1, 5};
// A compressed file says layout 2.0, as Windows' compressed files do (../shared/etl-corpus).
constexpr std::uint8_t kVersionCompressed[4] = {10, 0, 2, 0};
constexpr std::uint32_t kProviderVersion = 19041;
constexpr std::uint32_t kTimerResolution = 156250;  // 15.625 ms, in 100 ns, as Windows writes
constexpr std::uint32_t kCpuSpeedMHz = 1000;        // the cycle clock's unit (consumer_delivery)
constexpr std::int64_t kPerfFreq = 10'000'000;      // QPC: the monotonic clock at 10 MHz
constexpr std::int64_t kUnixEpochAsFileTime = 116444736000000000LL;
constexpr char16_t kZoneName[] = u"Coordinated Universal Time";
// Uncompressed buffers are written this many bytes at a time (whole buffers, at least one): one
// system call per megabyte, and device requests large enough for O_DIRECT to reach the disk's
// sequential rate (etl_output.h).
constexpr std::uint32_t kStageBytes = 1024 * 1024;

template <typename T>
void put(std::byte* at, std::size_t offset, T value) {
  std::memcpy(at + offset, &value, sizeof value);
}

std::uint32_t align8(std::uint32_t n) { return (n + 7u) & ~7u; }

// UTF-8 to UTF-16 (the names are valid UTF-8: the library checked them), with the NUL.
std::u16string utf16(const std::string& s) {
  std::u16string out;
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::uint32_t cp = c;
    int extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
    if (extra > 0) cp = c & (0x3F >> extra);
    for (int k = 1; k <= extra && i + k < s.size(); ++k) {
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    }
    i += static_cast<std::size_t>(extra) + 1;
    if (cp >= 0x10000) {
      cp -= 0x10000;
      out.push_back(static_cast<char16_t>(0xD800 + (cp >> 10)));
      out.push_back(static_cast<char16_t>(0xDC00 + (cp & 0x3FF)));
    } else {
      out.push_back(static_cast<char16_t>(cp));
    }
  }
  out.push_back(u'\0');
  return out;
}

std::int64_t boot_file_time() {
  timespec real{}, boot{};
  ::clock_gettime(CLOCK_REALTIME, &real);
  ::clock_gettime(CLOCK_BOOTTIME, &boot);
  const std::int64_t real_ns = real.tv_sec * 1'000'000'000LL + real.tv_nsec;
  const std::int64_t boot_ns = boot.tv_sec * 1'000'000'000LL + boot.tv_nsec;
  return kUnixEpochAsFileTime + (real_ns - boot_ns) / 100;
}

std::int64_t file_time_now() {
  timespec real{};
  ::clock_gettime(CLOCK_REALTIME, &real);
  return kUnixEpochAsFileTime + real.tv_sec * 10'000'000LL + real.tv_nsec / 100;
}

}  // namespace

EtlFile::EtlFile(const EtlSettings& settings) : settings_(settings) {
  // Circular and appended files place buffers by index (BufferSize each): they are written
  // uncompressed (docs/etwrt/internals.md, "Trace files (writing)").
  const std::uint32_t by_index = EVENT_TRACE_FILE_MODE_CIRCULAR | EVENT_TRACE_FILE_MODE_APPEND;
  compressed_ = (settings.log_file_mode & EVENT_TRACE_COMPRESSED_MODE) != 0 &&
                (settings.log_file_mode & by_index) == 0;
  const std::uint32_t bs = settings.buffer_bytes;
  stage_capacity_ = std::max<std::uint32_t>(1, kStageBytes / bs);
  stage_bytes_ = std::size_t{stage_capacity_} * bs;
  if (compressed_) {  // compressed buffers one after the other, with room for the largest
    stage_bytes_ = std::max(stage_bytes_, kBufferHeaderBytes + etl::xpress_lz77_bound(bs));
    for (AlignedBytes& stage : stages_) stage = aligned_bytes(stage_bytes_);
  }
  head_ = aligned_bytes(bs);
}

EtlFile::~EtlFile() {
  if (in_flight_.active) writer_.wait();  // (finish() waited already) not on a closed descriptor
  if (fd_ >= 0) ::close(fd_);
}

std::unique_ptr<EtlFile> EtlFile::open(const EtlSettings& settings, ULONG& status,
                                       std::string& reason) {
  std::unique_ptr<EtlFile> file(new EtlFile(settings));
  if (!file->open_file(1, status, reason)) return nullptr;
  file->fill_of(0);
  status = ERROR_SUCCESS;
  return file;
}

std::int64_t EtlFile::file_clock(std::uint64_t ns) const {
  switch (settings_.clock) {
    case 2:  // system time: FILETIME
      return kUnixEpochAsFileTime +
             (static_cast<std::int64_t>(ns) + settings_.realtime_offset_ns) / 100;
    case 3:  // CPU cycles: the monotonic clock at 1000 MHz
      return static_cast<std::int64_t>(ns);
    default:  // QPC: the monotonic clock at 10 MHz
      return static_cast<std::int64_t>(ns / 100);
  }
}

std::uint64_t EtlFile::maximum_bytes() const {
  const std::uint64_t unit =
      (settings_.log_file_mode & EVENT_TRACE_USE_KBYTES_FOR_SIZE) != 0 ? 1024 : 1024 * 1024;
  return settings_.maximum_file_size * unit;
}

std::uint64_t EtlFile::capacity_buffers() const {
  if (settings_.maximum_file_size == 0) return 0;
  return std::max<std::uint64_t>(2, maximum_bytes() / settings_.buffer_bytes);
}

// The header buffer: the log-file header event (SYSTEM_TRACE_HEADER, TRACE_LOGFILE_HEADER,
// LoggerName, LogFileName), then 0xFF. end_time 0: still running (EndTime 0).
void EtlFile::write_header_buffer(std::uint64_t pool_events_lost, std::int64_t end_time) {
  const std::uint32_t bs = settings_.buffer_bytes;
  std::byte* p = head_.get();
  std::memset(p, 0xFF, bs);
  const std::u16string logger = utf16(settings_.logger_name);
  const std::u16string file = utf16(current_name_);
  const auto names = static_cast<std::uint32_t>((logger.size() + file.size()) * 2);
  const std::uint32_t size = kSystemHeaderBytes + kLogfileHeaderBytes + names;
  const std::uint32_t used = kBufferHeaderBytes + align8(size);
  std::memset(p, 0, used);
  put<std::uint32_t>(p, 0x00, bs);
  put<std::uint32_t>(p, 0x04, used);  // SavedOffset
  put<std::uint32_t>(p, 0x08, used);  // CurrentOffset
  put<std::uint16_t>(p, 0x2A, settings_.logger_id);
  put<std::uint32_t>(p, 0x2C, kBufferStateFlush);
  put<std::uint32_t>(p, 0x30, used);  // Offset
  put<std::uint16_t>(p, 0x34, kBufferFlagFlushMarker | kBufferFlagProcIndex);
  put<std::uint16_t>(p, 0x36, kBufferTypeHeader);
  std::byte* e = p + kBufferHeaderBytes;  // SYSTEM_TRACE_HEADER
  put<std::uint16_t>(e, 0, 2);            // SYSTEM_TRACE_VERSION
  put<std::uint8_t>(e, 2, kTypeSystem64);
  put<std::uint8_t>(e, 3, kMarkerFlags);
  put<std::uint16_t>(e, 4, static_cast<std::uint16_t>(size));
  put<std::uint16_t>(e, 6, 0);  // HookId: EventTrace header (group 0, type 0)
  put<std::uint32_t>(e, 8, static_cast<std::uint32_t>(::gettid()));
  put<std::uint32_t>(e, 12, static_cast<std::uint32_t>(::getpid()));
  // Appending: the header stays the first session's (its StartTime and the clock reading of it).
  put<std::int64_t>(e, 16,
                    appended_start_ != 0 ? appended_system_time_ : file_clock(settings_.start_ns));
  std::byte* h = e + kSystemHeaderBytes;  // TRACE_LOGFILE_HEADER (x64)
  const bool appended = appended_start_ != 0;
  put<std::uint32_t>(h, 0x00, bs);
  std::memcpy(h + 0x04, compressed_ ? kVersionCompressed : kVersion, 4);
  put<std::uint32_t>(h, 0x08, kProviderVersion);
  put<std::uint32_t>(h, 0x0C, settings_.processors);
  put<std::int64_t>(h, 0x10, end_time);
  put<std::uint32_t>(h, 0x18, kTimerResolution);
  put<std::uint32_t>(h, 0x1C, settings_.maximum_file_size);
  put<std::uint32_t>(h, 0x20, settings_.log_file_mode);
  put<std::uint32_t>(h, 0x24, static_cast<std::uint32_t>(file_buffers_));  // in this file
  put<std::uint32_t>(h, 0x28, 1);                                          // StartBuffers
  put<std::uint32_t>(h, 0x2C, 8);                                          // PointerSize
  put<std::uint32_t>(
      h, 0x30, static_cast<std::uint32_t>(pool_events_lost + events_lost_.load() + appended_lost_));
  put<std::uint32_t>(h, 0x34, kCpuSpeedMHz);
  std::memcpy(h + 0x48 + 4, kZoneName, sizeof kZoneName);       // StandardName
  std::memcpy(h + 0x48 + 4 + 84, kZoneName, sizeof kZoneName);  // DaylightName
  put<std::int64_t>(h, 0xF8, boot_file_time());
  put<std::int64_t>(h, 0x100, kPerfFreq);
  put<std::int64_t>(h, 0x108, appended ? appended_start_ : settings_.start_file_time);
  put<std::uint32_t>(h, 0x110, settings_.clock);
  put<std::uint32_t>(h, 0x114,
                     static_cast<std::uint32_t>(buffers_lost_.load() + appended_buffers_lost_));
  std::memcpy(h + kLogfileHeaderBytes, logger.data(), logger.size() * 2);
  std::memcpy(h + kLogfileHeaderBytes + logger.size() * 2, file.data(), file.size() * 2);
  (void)!write_fully(fd_, direct_, p, bs, 0);
}

void EtlFile::write_final_header() { write_header_buffer(pool_events_lost_, file_time_now()); }

// The buffer `processor`'s records fill, made current (fill_).
EtlFile::Fill& EtlFile::fill_of(std::uint16_t processor) {
  if (processor >= fills_.size()) fills_.resize(std::size_t{processor} + 1);
  Fill& f = fills_[processor];
  if (f.bytes == nullptr) {
    f.bytes = aligned_bytes(settings_.buffer_bytes);
    f.processor = processor;
  }
  fill_ = &f;
  return f;
}

// The buffer of the processor the record at `h` was written on, written first if it has no
// room for `size` more bytes.
EtlFile::Fill& EtlFile::fill_with_room(const std::byte* h, std::uint32_t size) {
  std::uint16_t processor;
  std::memcpy(&processor, h + dataplane::kStoredProcessor, sizeof processor);
  if (processor != fill_->processor) fill_of(processor);
  if (fill_->used + size > settings_.buffer_bytes) write_buffer();
  return *fill_;
}

void EtlFile::start_buffer() {
  fill_->used = kBufferHeaderBytes;
  fill_->events = 0;
}

// fill_'s WMI_BUFFER_HEADER, and 0xFF from its last record to its end (uncompressed).
void EtlFile::put_buffer_header() {
  const std::uint32_t bs = settings_.buffer_bytes;
  const std::uint32_t used = fill_->used;
  std::byte* p = buffer();
  std::memset(p, 0, kBufferHeaderBytes);
  if (!compressed_) std::memset(p + used, 0xFF, bs - used);
  put<std::uint32_t>(p, 0x00, bs);
  put<std::uint32_t>(p, 0x04, used);  // SavedOffset
  put<std::uint32_t>(p, 0x08, used);  // CurrentOffset
  put<std::int64_t>(p, 0x10, file_clock(fill_->last_timestamp));
  put<std::int64_t>(p, 0x18, static_cast<std::int64_t>(++sequence_));
  // ProcessorIndex (ETW_BUFFER_FLAG_PROC_INDEX below): the processor whose records it holds.
  put<std::uint16_t>(p, 0x28, fill_->processor);
  put<std::uint16_t>(p, 0x2A, settings_.logger_id);
  put<std::uint32_t>(p, 0x2C, kBufferStateFlush);
  put<std::uint32_t>(p, 0x30, used);  // Offset
  put<std::uint16_t>(p, 0x34, kBufferFlagProcIndex);
  put<std::uint16_t>(p, 0x36, kBufferTypeGeneric);
}

// Writes fill_ (header, records, 0xFF to the end) where the mode puts it, or counts it lost.
void EtlFile::write_buffer() {
  const std::uint32_t mode = settings_.log_file_mode;
  const std::uint64_t capacity = capacity_buffers();
  // Compressed: its records packed at the stage's end, so that the file's room is known exactly.
  std::uint32_t packed = compressed_ && !full_ ? pack() : 0;
  if ((mode & EVENT_TRACE_FILE_MODE_NEWFILE) != 0 && file_full(capacity, packed)) {
    write_staged();  // to the file being closed
    write_final_header();
    ULONG status = 0;
    std::string reason;
    std::uint32_t next = file_index_ + 1;
#if defined(ETWRT_MUTANTS)
    if (etwrt::mutant::active("newfile-number-skipped")) ++next;  // 1, 3, 5, ...
#endif
    if (!open_file(next, status, reason)) {
      std::fprintf(stderr, "etwrt-broker: %s\n", reason.c_str());
      full_ = true;
    }
    // Packed again: its bytes were at the end of the stage just written, and this one is empty.
    if (compressed_ && !full_) packed = pack();
  }
  if (capacity != 0 && (mode & EVENT_TRACE_FILE_MODE_CIRCULAR) != 0 && slot_ >= capacity) {
    write_staged();           // a stage holds consecutive slots only
    if (slot_ >= capacity) {  // (a failed write gives its slots back)
      slot_ = 1;              // the oldest buffer is overwritten: its records are counted lost
      wrapped_ = true;
    }
  }
  const bool sequential_full =
      (mode & (EVENT_TRACE_FILE_MODE_CIRCULAR | EVENT_TRACE_FILE_MODE_NEWFILE)) == 0 &&
      file_full(capacity, packed);
  if (full_ || sequential_full || fd_ < 0) {
    full_ = true;  // "stops when the file reaches its maximum size"
    events_lost_.fetch_add(fill_->events, std::memory_order_relaxed);
    buffers_lost_.fetch_add(1, std::memory_order_relaxed);
    start_buffer();
    return;
  }
  put_buffer_header();
  if (compressed_) {
    stage_packed(packed);
  } else {
    staged_buffers_[cur_].push_back(std::move(fill_->bytes));
    if (spare_.empty()) {
      fill_->bytes = aligned_bytes(settings_.buffer_bytes);
    } else {
      fill_->bytes = std::move(spare_.back());
      spare_.pop_back();
    }
  }
  if (slot_ >= slot_events_.size()) slot_events_.resize(slot_ + 1, 0);
  if (wrapped_ && slot_events_[slot_] != 0) {
    bool count_lost = true;
#if defined(ETWRT_MUTANTS)
    count_lost = !etwrt::mutant::active("circular-loss-uncounted");
#endif
    if (count_lost) events_lost_.fetch_add(slot_events_[slot_], std::memory_order_relaxed);
    events_in_file_.fetch_sub(slot_events_[slot_], std::memory_order_relaxed);
    buffers_lost_.fetch_add(1, std::memory_order_relaxed);
  }
  if (staged_++ == 0) {  // counted in the file once written (write_staged)
    staged_slot_ = slot_;
    staged_file_buffers_ = file_buffers_;
  }
  slot_events_[slot_] = fill_->events;
  ++slot_;
  file_buffers_ = std::max(file_buffers_, slot_);
  start_buffer();
  if (stage_full()) start_staged();
}

void EtlFile::write_staged() {
  start_staged();
  collect();
}

// Hands the staged buffers to writer_ (once the write before is done) and goes on in the other
// stage.
void EtlFile::start_staged() {
  collect();
  if (staged_ == 0) return;
  const std::uint32_t bs = settings_.buffer_bytes;
  std::uint64_t events = 0;
  for (std::uint64_t s = staged_slot_; s < staged_slot_ + staged_; ++s) events += slot_events_[s];
  const std::size_t bytes = compressed_ ? packed_used_ : std::size_t{staged_} * bs;
  in_flight_ = {true, staged_slot_, staged_, events, staged_file_buffers_, bytes};
  if (compressed_) {
    writer_.start(fd_, direct_, stages_[cur_].get(), bytes, write_at_);
  } else {
    std::vector<iovec> parts;
    parts.reserve(staged_buffers_[cur_].size());
    for (const AlignedBytes& b : staged_buffers_[cur_]) parts.push_back({b.get(), bs});
    writer_.start(fd_, direct_, std::move(parts), staged_slot_ * bs);
  }
  cur_ ^= 1u;
  staged_ = 0;
  packed_used_ = 0;
}

// Waits for writer_'s write and counts it: in the file, or lost with the buffers staged after
// it (their slots follow its own), whose slots the next buffers take.
void EtlFile::collect() {
  if (!in_flight_.active) return;
  const BackgroundWriter::Outcome done = writer_.wait();
  in_flight_.active = false;
  direct_ = done.direct;
  recycle(staged_buffers_[cur_ ^ 1u]);
  if (done.ok) {
    if (compressed_) write_at_ += done.bytes;
    events_in_file_.fetch_add(in_flight_.events, std::memory_order_relaxed);
    buffers_written_.fetch_add(in_flight_.buffers, std::memory_order_relaxed);
    return;
  }
  std::fprintf(stderr, "etwrt-broker: %s: %s\n", current_name_.c_str(), std::strerror(done.error));
  std::uint64_t events = in_flight_.events;
  for (std::uint64_t s = in_flight_.slot + in_flight_.buffers; s < slot_; ++s) {
    events += slot_events_[s];
  }
  for (std::uint64_t s = in_flight_.slot; s < slot_; ++s) slot_events_[s] = 0;
  // What part of the write reached the file is counted lost with the rest: cut it off, so that
  // a reader finds what the header counts. (A wrapped circular file's slots past it hold
  // older buffers: left as they are.)
  const std::uint64_t end = compressed_ ? write_at_ : in_flight_.slot * settings_.buffer_bytes;
  if (!wrapped_ && ::ftruncate(fd_, static_cast<off_t>(end)) != 0) {
    std::fprintf(stderr, "etwrt-broker: %s: not cut to %llu bytes: %s\n", current_name_.c_str(),
                 static_cast<unsigned long long>(end), std::strerror(errno));
  }
  events_lost_.fetch_add(events, std::memory_order_relaxed);
  buffers_lost_.fetch_add(in_flight_.buffers + staged_, std::memory_order_relaxed);
  recycle(staged_buffers_[cur_]);
  staged_ = 0;
  packed_used_ = 0;
  slot_ = in_flight_.slot;
  file_buffers_ = in_flight_.file_buffers_before;
}

void EtlFile::recycle(std::vector<AlignedBytes>& buffers) {
  for (AlignedBytes& b : buffers) spare_.push_back(std::move(b));
  buffers.clear();
}

namespace {

struct ExtItem {
  std::uint16_t type;
  std::span<const std::byte> data;
};

// The extended items of an EVENT_HEADER record (a classic one has none), in the order the
// record holds them; returns how many.
std::size_t extended_items(const dataplane::StoredRecord& r, bool classic, ExtItem (&items)[3]) {
  std::size_t count = 0;
  if (classic) return 0;
  if (r.related_activity_id != nullptr) {
    items[count++] = {EVENT_HEADER_EXT_TYPE_RELATED_ACTIVITYID,
                      std::span(r.related_activity_id, sizeof(GUID))};
  }
  if (!r.provider_traits.empty())
    items[count++] = {EVENT_HEADER_EXT_TYPE_PROV_TRAITS, r.provider_traits};
  if (!r.event_schema.empty())
    items[count++] = {EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL, r.event_schema};
  return count;
}

// The user data into the record at `to`: from the pool (`whole_words`: the source holds its
// size rounded up to 8) by whole words, no call for the few bytes most events carry, the last
// word's bytes past the data zeros (the gap to the next record); else an exact copy.
void copy_user_data(std::byte* to, std::span<const std::byte> data, bool whole_words) {
  if (!whole_words) {
    std::memcpy(to, data.data(), data.size());
    return;
  }
  const std::byte* from = data.data();
  std::size_t n = data.size();
  for (; n >= 8; n -= 8, from += 8, to += 8) std::memcpy(to, from, 8);
  if (n == 0) return;
  std::uint64_t last;
  std::memcpy(&last, from, 8);
  last &= ~std::uint64_t{0} >> (64 - 8 * n);  // little-endian: the first n bytes are kept
  std::memcpy(to, &last, 8);
}

}  // namespace

void EtlFile::add(const dataplane::RecordView& r) {
  // Laid out as the pool stores it, for the one formatter below (tests, and a logger that also
  // feeds realtime consumers, which needs RecordViews).
  std::byte header[dataplane::kStoredHeaderBytes] = {};
  const std::uint32_t ids[2] = {r.process_id, r.thread_id};
  std::memcpy(header + dataplane::kStoredProcessId, ids, sizeof ids);
  std::memcpy(header + dataplane::kStoredProcessor, &r.processor, sizeof r.processor);
  std::memcpy(header + dataplane::kStoredProviderId, &r.provider_id, sizeof(GUID));
  std::memcpy(header + dataplane::kStoredDescriptor, &r.descriptor, sizeof(EVENT_DESCRIPTOR));
  std::memcpy(header + dataplane::kStoredActivityId, &r.activity_id, sizeof(GUID));
  dataplane::StoredRecord stored;
  stored.header = header;
  stored.timestamp_ns = r.timestamp_ns;
  stored.flags = r.flags;
  if (r.has_related_activity_id) {
    stored.related_activity_id = reinterpret_cast<const std::byte*>(&r.related_activity_id);
  }
  stored.provider_traits = r.provider_traits;
  stored.event_schema = r.event_schema;
  stored.has_timestamp_override = r.has_timestamp_override;
  stored.timestamp_override = r.timestamp_override;
  stored.user_data = r.user_data;
  format(stored, false);
}

void EtlFile::add(const dataplane::StoredRecord& r) { format(r, true); }

void EtlFile::format(const dataplane::StoredRecord& r, bool whole_words) {
  const bool classic = (r.flags & EVENT_HEADER_FLAG_CLASSIC_HEADER) != 0;
  ExtItem items[3];
  const std::size_t count = extended_items(r, classic, items);
  std::size_t size = classic ? kClassicHeaderBytes : kEventHeaderBytes;
  for (std::size_t i = 0; i < count; ++i)
    size += 8 + align8(static_cast<std::uint32_t>(items[i].data.size()));
  size += r.user_data.size();
  // A record's Size is a USHORT and it must fit in a buffer after the buffer's header.
  if (size > 0xFFFF ||
      align8(static_cast<std::uint32_t>(size)) > settings_.buffer_bytes - kBufferHeaderBytes) {
    events_lost_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const auto aligned = align8(static_cast<std::uint32_t>(size));
  const std::byte* h = r.header;
  // Its fields read once: after the stores below through byte pointers they would be reread.
  Fill& fill = fill_with_room(h, aligned);
  const std::uint32_t used = fill.used;
  std::byte* e = fill.bytes.get() + used;
  // The gap to the next record is zeros, as Windows 10 leaves it: the record's last 8 bytes
  // are zeroed before the fields are written over them, and the fields stored as 0 below are
  // written; no memset of the whole record.
  put<std::uint64_t>(e, aligned - 8, 0);
  // A Type 3 descriptor's override is a raw value of the session's clock, stored as given
  // (EVENT_DATA_DESCRIPTOR page: "64-bit event timestamp override. For use when relogging");
  // the record keeps its place in the write order.
  const std::int64_t stamp = r.has_timestamp_override
                                 ? static_cast<std::int64_t>(r.timestamp_override)
                                 : file_clock(r.timestamp_ns);
  put<std::uint16_t>(e, 0, static_cast<std::uint16_t>(size));
  std::memcpy(e + 8, h + dataplane::kStoredThreadId, 4);
  std::memcpy(e + 12, h + dataplane::kStoredProcessId, 4);
  put<std::int64_t>(e, 16, stamp);
  std::size_t at;
  if (classic) {  // EVENT_TRACE_HEADER: Class.Type/Level/Version from the descriptor
    EVENT_DESCRIPTOR d;
    std::memcpy(&d, h + dataplane::kStoredDescriptor, sizeof d);
    put<std::uint8_t>(e, 2, kTypeFullHeader64);
    put<std::uint8_t>(e, 3, kMarkerFlags);
    put<std::uint8_t>(e, 4, d.Opcode);
    put<std::uint8_t>(e, 5, d.Level);
    put<std::uint16_t>(e, 6, d.Version);
    std::memcpy(e + 24, h + dataplane::kStoredProviderId, 16);
    put<std::uint64_t>(e, 40, 0);  // KernelTime, UserTime
    at = kClassicHeaderBytes;
  } else {  // EVENT_HEADER; the 64-bit flag is the header type's, not stored
    std::uint16_t flags =
        r.flags & ~std::uint16_t{EVENT_HEADER_FLAG_64_BIT_HEADER | EVENT_HEADER_FLAG_EXTENDED_INFO};
    if (count != 0) flags |= EVENT_HEADER_FLAG_EXTENDED_INFO;
    put<std::uint8_t>(e, 2, kTypeEventHeader64);
    put<std::uint8_t>(e, 3, kMarkerFlags);
    put<std::uint16_t>(e, 4, flags);
    put<std::uint16_t>(e, 6, 0);  // EventProperty
    // ProviderId and EventDescriptor are neighbours in both layouts: one copy.
    static_assert(dataplane::kStoredDescriptor == dataplane::kStoredProviderId + 16);
    std::memcpy(e + 24, h + dataplane::kStoredProviderId, 32);
    put<std::uint64_t>(e, 56, 0);  // KernelTime, UserTime
    std::memcpy(e + 64, h + dataplane::kStoredActivityId, 16);
    at = kEventHeaderBytes;
    for (std::size_t i = 0; i < count; ++i) {  // {size, type, linkage, data size} + data
      const auto data = static_cast<std::uint16_t>(items[i].data.size());
      put<std::uint16_t>(e, at, static_cast<std::uint16_t>(8 + align8(data)));
      put<std::uint16_t>(e, at + 2, items[i].type);
      put<std::uint16_t>(e, at + 4, i + 1 < count ? kExtLinkage : 0);
      put<std::uint16_t>(e, at + 6, data);
      if (data != 0) put<std::uint64_t>(e, at + align8(data), 0);  // its padding
      std::memcpy(e + at + 8, items[i].data.data(), data);
      at += 8 + align8(data);
    }
  }
  copy_user_data(e + at, r.user_data, whole_words);
  fill.used = used + aligned;
  ++fill.events;
  fill.last_timestamp = std::max(fill.last_timestamp, r.timestamp_ns);
}

// Each processor's buffer in turn, by processor number.
void EtlFile::flush() {
  Fill* const current = fill_;
  for (Fill& f : fills_) {
    fill_ = &f;
    if (f.events != 0) write_buffer();
  }
  fill_ = current;
  write_staged();
}

void EtlFile::finish(std::uint64_t pool_events_lost) {
  pool_events_lost_ = pool_events_lost;
  flush();
  if (fd_ < 0) return;
  write_final_header();
  close_file(true);
}

EtlCounts EtlFile::counts() const {
  return {buffers_written_.load(std::memory_order_relaxed),
          events_in_file_.load(std::memory_order_relaxed),
          events_lost_.load(std::memory_order_relaxed),
          buffers_lost_.load(std::memory_order_relaxed)};
}

}  // namespace etwrt::broker
