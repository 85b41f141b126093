// etwrt: the trace-file consumer (file_consumer.h).
#include "file_consumer.h"

#include "../consumer_open.h"
#include "../trace_handles.h"

#include "record_decode.h"
#include "trace_file.h"

#if defined(ETWRT_MUTANTS)
#include "etwrt_mutant.h"
#endif

#include <evntcons.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>
#include <set>
#include <utility>
#include <string>
#include <vector>

namespace etwrt::etl {
namespace {

constexpr int kClockSystemTime = 2;  // EVENT_TRACE_CLOCK_SYSTEMTIME: stamps are FILETIMEs.
constexpr int kClockCpuCycles = 3;   // EVENT_TRACE_CLOCK_CPUCYCLE: at CpuSpeedInMHz.

// A file's stamps as FILETIMEs: StartTime is the header event's stamp, and the clock's ticks
// count from there (QPC at PerfFreq, cycles at CpuSpeedInMHz; system time is a FILETIME).
class Clock {
 public:
  explicit Clock(const TraceFile& f)
      : start_(f.header.StartTime.QuadPart), origin_(f.header_raw_time) {
    if (f.header.ReservedFlags == kClockSystemTime) {
      frequency_ = 0;
    } else if (f.header.ReservedFlags == kClockCpuCycles) {
      frequency_ = std::int64_t{f.header.CpuSpeedInMHz} * 1000000;
    } else {
      frequency_ = f.header.PerfFreq.QuadPart;  // QPC, the default clock.
    }
    if (f.header.ReservedFlags != kClockSystemTime && frequency_ <= 0) frequency_ = 10000000;
  }
  std::int64_t file_time(std::int64_t raw) const {
    if (frequency_ == 0) return raw;
    if (frequency_ == 10000000) return start_ + (raw - origin_);  // The usual QPC: 100 ns.
    const __int128 ticks = static_cast<__int128>(raw) - origin_;
    return start_ + static_cast<std::int64_t>(ticks * 10000000 / frequency_);
  }

 private:
  std::int64_t start_;
  std::int64_t origin_;
  std::int64_t frequency_ = 0;
};

struct FileTrace : TraceHandleState {
  EVENT_TRACE_LOGFILEA logfile{};  // The handle's copy: what BufferCallback receives.
  std::string path;
  bool event_record_mode = false;
  bool raw_timestamps = false;
  Arena bytes;  // The file as read (not zeroed first: the read fills it).
  TraceFile file;
  bool parsed = false;
  Records order;                           // Records in delivery order (header event first).
  std::vector<std::uint32_t> buffer_left;  // Per buffer: its records not yet delivered.
};

TraceHandles<FileTrace> g_files;

// The whole file in one read of its size (then whatever follows, if it grew meanwhile).
// Reads a regular file of at most kMaxFileBytes whole. Anything else (a FIFO, which would block,
// a device such as /dev/zero, which never ends, a directory) is refused before a byte is read.
// Returns ERROR_SUCCESS or the status OpenTrace fails with.
constexpr std::uint64_t kMaxFileBytes = std::uint64_t{1} << 30;

ULONG read_file(const char* path, Arena& out) {
  const int fd = ::open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    return errno == ENOENT || errno == ENOTDIR ? ERROR_FILE_NOT_FOUND
           : errno == EACCES || errno == EPERM ? ERROR_ACCESS_DENIED
                                               : ERROR_BAD_FORMAT;
  }
  struct stat st {};
  ULONG status = ERROR_SUCCESS;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    status = ERROR_BAD_FORMAT;
  } else if (static_cast<std::uint64_t>(st.st_size) > kMaxFileBytes) {
    status = ERROR_NOT_ENOUGH_MEMORY;
  } else {
    Arena bytes(static_cast<std::size_t>(st.st_size));
    std::size_t have = 0;
    while (have < bytes.size()) {
      const ssize_t n = ::read(fd, bytes.data() + have, bytes.size() - have);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      have += static_cast<std::size_t>(n);
    }
    bytes.resize(have);  // A file that shrank while read: what is there, judged by the parser.
    out = std::move(bytes);
  }
  ::close(fd);
  return status;
}

// A run: records of one processor in file order with non-decreasing stamps, as the ranges of
// `records` they occupy (a buffer's records are consecutive there).
struct Run {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> ranges;  // [begin, end) of records.
  std::int64_t last_time = 0;
};

// A file's runs: a CPU's buffers follow one another in time, so a file has about one run per
// CPU, and a new run starts only where a stamp goes back (a circular file's wrap, a clock's step).
// A buffer's records join their run as ranges, as far as their stamps do not go back.
std::vector<Run> per_cpu_runs(const TraceFile& f) {
  std::vector<Run> runs;
  std::vector<std::int32_t> open_run(0x800, -1);  // Per processor: its run being extended.
  const RecordRef* rec = f.records.data();
  const auto n = static_cast<std::uint32_t>(f.records.size());
  for (std::uint32_t i = 1; i < n;) {
    const std::uint32_t buffer = rec[i].buffer;
    std::int32_t& k = open_run[f.buffers[buffer].processor & 0x7FF];
    std::uint32_t j = i + 1;  // [i, j): the buffer's next records in stamp order.
    while (j < n && rec[j].buffer == buffer && rec[j - 1].raw_time <= rec[j].raw_time) ++j;
    if (k < 0 || runs[k].last_time > rec[i].raw_time) {
      k = static_cast<std::int32_t>(runs.size());
      runs.emplace_back();
    }
    Run& run = runs[k];
    if (!run.ranges.empty() && run.ranges.back().second == i) {
      run.ranges.back().second = j;
    } else {
      run.ranges.emplace_back(i, j);
    }
    run.last_time = rec[j - 1].raw_time;
    i = j;
  }
  return runs;
}

// Records in delivery order: by stamp; among equal stamps of one processor, by the buffers'
// SequenceNumbers where the logger numbered them (a circular file's newest buffers lie before
// its oldest), else, and across processors, file order (a record's arena offset grows with its
// place in the file).
bool before(const TraceFile& f, const RecordRef& a, const RecordRef& b) {
  if (a.raw_time != b.raw_time) return a.raw_time < b.raw_time;
  if (a.buffer != b.buffer) {
    const BufferInfo& x = f.buffers[a.buffer];
    const BufferInfo& y = f.buffers[b.buffer];
    if (x.processor == y.processor && x.sequence != 0 && y.sequence != 0) {
      return x.sequence < y.sequence;
    }
  }
  return a.offset < b.offset;
}

// A run's place in the merge: its next record (and that record's stamp, which decides almost
// every comparison without a load through `record`), where that is in `records`.
struct Head {
  std::int64_t time;
  const RecordRef* record;
  const RecordRef* range_end;
  std::uint32_t run;
  std::uint32_t range;
};

bool head_before(const TraceFile& f, const Head& a, const Head& b) {
  if (a.time != b.time) return a.time < b.time;
  return before(f, *a.record, *b.record);
}

// Moves heads[0], whose stamp grew, to its place among the sorted heads after it. The CPUs of
// a file take turns, so it mostly moves one or two places: fewer comparisons than a heap's.
void reinsert_first(const TraceFile& f, std::vector<Head>& heads) {
  const Head moved = heads[0];
  std::size_t i = 0;
  for (; i + 1 < heads.size() && head_before(f, heads[i + 1], moved); ++i) heads[i] = heads[i + 1];
  heads[i] = moved;
}

// Moves `h` to its run's next record; false when the run is done.
bool advance(Head& h, const std::vector<Run>& runs, const TraceFile& f) {
  if (++h.record == h.range_end) {
    const Run& run = runs[h.run];
    if (++h.range == run.ranges.size()) return false;
    h.record = f.records.data() + run.ranges[h.range].first;
    h.range_end = f.records.data() + run.ranges[h.range].second;
  }
  h.time = h.record->raw_time;
  return true;
}

// The delivery order: the header event first, then the records by stamp, file order among equal
// stamps (as Windows' per-CPU merge keeps them): a merge of the per-CPU runs, which yields what
// a stable sort by stamp would. The run at the top keeps delivering while it stays ahead of the
// runner-up, so a record mostly costs one comparison of stamps. The records
// are copied in that order, so that delivery reads them in sequence.
void merge_order(const TraceFile& f, Records& order) {
#if defined(ETWRT_MUTANTS)
  if (etwrt::mutant::active("wrong-merge-order")) {  // the buffers in file order, unmerged
    order.assign(f.records.begin(), f.records.end());
    return;
  }
#endif
  const std::vector<Run> runs = per_cpu_runs(f);
  order.resize(f.records.size());
  RecordRef* out = order.data();
  *out++ = f.records[0];
  std::vector<Head> heads;  // Each run's next record, sorted by head_before.
  heads.reserve(runs.size());
  for (std::uint32_t k = 0; k < runs.size(); ++k) {
    const auto& first = runs[k].ranges.front();
    const RecordRef* r = f.records.data() + first.first;
    heads.push_back({r->raw_time, r, f.records.data() + first.second, k, 0});
  }
  std::sort(heads.begin(), heads.end(),
            [&f](const Head& a, const Head& b) { return head_before(f, a, b); });
  while (heads.size() > 1) {
    Head& top = heads[0];
    bool more = true;
    do {
      *out++ = *top.record;
      more = advance(top, runs, f);
    } while (more && head_before(f, top, heads[1]));
    if (more) {
      reinsert_first(f, heads);
    } else {
      heads.erase(heads.begin());
    }
  }
  if (!heads.empty()) {  // The last run: the rest of it, in order.
    Head& last = heads[0];
    do {
      *out++ = *last.record;
    } while (advance(last, runs, f));
  }
}

// Parses every buffer once and orders the records for delivery.
ULONG prepare(FileTrace& t) {
  if (t.parsed) return ERROR_SUCCESS;
  if (ParseStatus s = parse_records(t.bytes, t.file); !s.ok()) {
    std::fprintf(stderr, "etwrt: ProcessTrace: %s: %s\n", t.path.c_str(), s.message.c_str());
    return s.status;
  }
  merge_order(t.file, t.order);
  t.parsed = true;
  return ERROR_SUCCESS;
}

// One file's place in a ProcessTrace call.
struct Cursor {
  FileTrace* trace;
  Clock clock;
  std::size_t next = 0;
  Decoded decoded;
};

std::int64_t value(const FILETIME* t, std::int64_t otherwise) {
  if (t == nullptr) return otherwise;
  return static_cast<std::int64_t>((std::uint64_t{t->dwHighDateTime} << 32) | t->dwLowDateTime);
}

// The classic form of a record (EventCallback without PROCESS_TRACE_MODE_EVENT_RECORD).
void classic_callback(const EVENT_RECORD& r, EVENT_TRACE_LOGFILEA& l) {
  EVENT_TRACE t{};
  const EVENT_HEADER& h = r.EventHeader;
  t.Header.Size = h.Size;
  t.Header.Class.Type = h.EventDescriptor.Opcode;
  t.Header.Class.Level = h.EventDescriptor.Level;
  t.Header.Class.Version = h.EventDescriptor.Version;
  t.Header.ThreadId = h.ThreadId;
  t.Header.ProcessId = h.ProcessId;
  t.Header.TimeStamp = h.TimeStamp;
  t.Header.Guid = h.ProviderId;
  t.Header.ProcessorTime = h.ProcessorTime;
  t.MofData = r.UserData;
  t.MofLength = r.UserDataLength;
  t.BufferContext = r.BufferContext;
  l.CurrentEvent = t;
  if (l.EventCallback != nullptr) l.EventCallback(&l.CurrentEvent);
}

// Delivers the record at the cursor (if inside the window) and accounts its buffer; returns
// ERROR_CANCELLED when BufferCallback said stop, ERROR_FILE_CORRUPT for a record that does not
// decode. Inlined into the loops that call it per record: the call cost a tenth of delivery.
[[gnu::always_inline]] inline ULONG deliver(Cursor& c, bool header, std::int64_t lo,
                                            std::int64_t hi) {
  FileTrace& t = *c.trace;
  const RecordRef& r = t.order[c.next++];
  if (!decode_record(t.file, r, c.decoded)) {
    std::fprintf(stderr, "etwrt: ProcessTrace: %s: a record's extended items do not fit it\n",
                 t.path.c_str());
    return ERROR_FILE_CORRUPT;
  }
  EVENT_RECORD& e = c.decoded.record;
  const std::int64_t ft = c.clock.file_time(r.raw_time);
  bool delivered = header || (ft >= lo && ft <= hi);
#if defined(ETWRT_MUTANTS)
  if (header && etwrt::mutant::active("header-event-missing")) delivered = false;
#endif
  if (delivered) {
    e.EventHeader.TimeStamp.QuadPart = t.raw_timestamps ? r.raw_time : ft;
#if defined(ETWRT_MUTANTS)
    if (etwrt::mutant::active("raw-timestamp-converted")) e.EventHeader.TimeStamp.QuadPart = ft;
#endif
    t.logfile.CurrentTime = ft;
    e.UserContext = t.logfile.Context;
    if (t.event_record_mode) {
      if (t.logfile.EventRecordCallback != nullptr) t.logfile.EventRecordCallback(&e);
    } else {
      classic_callback(e, t.logfile);
    }
  }
  if (--t.buffer_left[r.buffer] == 0) {
    ++t.logfile.BuffersRead;
    if (t.logfile.BufferCallback != nullptr && t.logfile.BufferCallback(&t.logfile) == FALSE) {
      return ERROR_CANCELLED;
    }
  }
  return ERROR_SUCCESS;
}

constexpr std::size_t kPrefetchAhead = 16;  // Records.

// The merge: each file's header event, then always the record with the lowest FILETIME (the
// first handle's among equal ones) until every file is read, a close or BufferCallback's FALSE.
ULONG merge(std::vector<Cursor>& cursors, std::int64_t lo, std::int64_t hi) {
  for (Cursor& c : cursors) {
    if (const ULONG s = deliver(c, true, lo, hi); s != ERROR_SUCCESS) return s;
  }
  if (cursors.size() == 1) {  // The usual case: one file, already in order.
    Cursor& c = cursors.front();
    const TraceFile& f = c.trace->file;
    const Records& order = c.trace->order;
    const std::size_t n = order.size();
    while (c.next < n) {
      if (c.trace->close_requested.load(std::memory_order_relaxed)) return ERROR_SUCCESS;
      // The merge walks the arena in as many streams as the file has CPUs, more than the
      // hardware's prefetcher follows: fetch the bytes of a record a few ahead.
      if (c.next + kPrefetchAhead < n) {
        const std::byte* ahead = f.arena.data() + order[c.next + kPrefetchAhead].offset;
        __builtin_prefetch(ahead);
        __builtin_prefetch(ahead + 64);  // An EVENT_HEADER record's header reaches the next line.
      }
      if (const ULONG s = deliver(c, false, lo, hi); s != ERROR_SUCCESS) return s;
    }
    return ERROR_SUCCESS;
  }
  for (;;) {
    Cursor* best = nullptr;
    std::int64_t best_time = 0;
    for (Cursor& c : cursors) {
      if (c.trace->close_requested.load(std::memory_order_relaxed)) return ERROR_SUCCESS;
      if (c.next == c.trace->order.size()) continue;
      const std::int64_t t = c.clock.file_time(c.trace->order[c.next].raw_time);
      if (best == nullptr || t < best_time) {
        best = &c;
        best_time = t;
      }
    }
    if (best == nullptr) return ERROR_SUCCESS;
    if (const ULONG s = deliver(*best, false, lo, hi); s != ERROR_SUCCESS) return s;
  }
}

ULONG process_claimed(const std::vector<FileTrace*>& traces, const FILETIME* start,
                      const FILETIME* end) {
  std::vector<Cursor> cursors;
  cursors.reserve(traces.size());
  for (FileTrace* t : traces) {
    if (const ULONG s = prepare(*t); s != ERROR_SUCCESS) return s;
    t->buffer_left.assign(t->file.buffers.size(), 0);
    for (std::size_t b = 0; b < t->file.buffers.size(); ++b) {
      t->buffer_left[b] = t->file.buffers[b].records;
    }
    t->logfile.BuffersRead = 0;
    cursors.push_back({t, Clock(t->file), 0, Decoded{}});
  }
  return merge(cursors, value(start, INT64_MIN), value(end, INT64_MAX));
}

bool is_kernel_logger(const std::u16string& name) { return name == u"NT Kernel Logger"; }

}  // namespace

TRACEHANDLE open_file_trace(EVENT_TRACE_LOGFILEA& logfile) {
  auto t = std::make_unique<FileTrace>();
  t->path = logfile.LogFileName;
  if (const ULONG status = read_file(logfile.LogFileName, t->bytes); status != ERROR_SUCCESS) {
    std::fprintf(stderr,
                 "etwrt: OpenTraceA: %s: cannot read the file (not a regular file of at "
                 "most 1 GiB, or not there: status %u)\n",
                 t->path.c_str(), static_cast<unsigned>(status));
    return fail_open(status);
  }
  if (ParseStatus s = parse_header(t->bytes, t->file); !s.ok()) {
    std::fprintf(stderr, "etwrt: OpenTraceA: %s: %s\n", t->path.c_str(), s.message.c_str());
    return fail_open(ERROR_BAD_FORMAT);
  }
  TRACE_LOGFILE_HEADER& h = t->file.header;
  h.LoggerName = reinterpret_cast<LPWSTR>(t->file.logger_name.data());
  h.LogFileName = reinterpret_cast<LPWSTR>(t->file.log_file_name.data());
  t->logfile = logfile;
  t->logfile.LogFileName = t->path.data();
  t->logfile.LoggerName = nullptr;
  t->logfile.LogfileHeader = h;
  t->logfile.BufferSize = h.BufferSize;
  t->logfile.IsKernelTrace = is_kernel_logger(t->file.logger_name) ? 1 : 0;
  t->logfile.CurrentTime = 0;
  t->logfile.BuffersRead = 0;
  t->event_record_mode = (logfile.ProcessTraceMode & PROCESS_TRACE_MODE_EVENT_RECORD) != 0;
  t->raw_timestamps = (logfile.ProcessTraceMode & PROCESS_TRACE_MODE_RAW_TIMESTAMP) != 0;
  logfile.LogfileHeader = h;
  logfile.BufferSize = h.BufferSize;
  logfile.IsKernelTrace = t->logfile.IsKernelTrace;
  logfile.CurrentTime = 0;
  logfile.BuffersRead = 0;
  return g_files.add(std::move(t));
}

bool is_file_handle(TRACEHANDLE handle) { return g_files.contains(handle); }

ULONG process_file_traces(const TRACEHANDLE* handles, ULONG count, const FILETIME* start,
                          const FILETIME* end) {
  std::vector<FileTrace*> traces;
  if (const ULONG s = g_files.claim(handles, count, traces); s != ERROR_SUCCESS) return s;
  ULONG status = ERROR_SUCCESS;
  try {
    status = process_claimed(traces, start, end);
  } catch (...) {
    g_files.release(traces);
    throw;
  }
  g_files.release(traces);
  return status;
}

ULONG close_file_trace(TRACEHANDLE handle) { return g_files.close(handle); }

}  // namespace etwrt::etl
