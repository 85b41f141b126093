// A session's trace file in Windows' own .etl layout, as the broker's logger writes it
// (docs/etwrt/internals.md, "Trace files (writing)"): buffers of BufferSize bytes, each a
// WMI_BUFFER_HEADER (0x48 bytes) then 8-aligned records then 0xFF to its end, each buffer the
// records of one processor (the one their writers ran on), in time order; the first buffer
// holds the log-file header event (SYSTEM_TRACE_HEADER + TRACE_LOGFILE_HEADER + the two names
// in UTF-16), the others EVENT_HEADER records (with their extended items) and, for classic
// providers, EVENT_TRACE_HEADER records. One thread uses an EtlFile; counts() may be read from
// any thread.
#pragma once

#include "etl/xpress_encode.h"
#include "etl_output.h"

#include <etwrt/dataplane.h>

#include <windows.h>

#include <sys/stat.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace etwrt::broker {

// What shapes the file: the session's EVENT_TRACE_PROPERTIES and when it started.
struct EtlSettings {
  std::string logger_name;
  std::string file_name;  // UTF-8; with EVENT_TRACE_FILE_MODE_NEWFILE a pattern with one %d
  std::uint32_t buffer_bytes = 64 * 1024;
  std::uint32_t log_file_mode = 0;
  std::uint32_t maximum_file_size = 0;  // MB, or KB with EVENT_TRACE_USE_KBYTES_FOR_SIZE; 0 none
  std::uint32_t clock = 1;              // Wnode.ClientContext: 1 QPC, 2 system time, 3 cycles
  std::uint16_t logger_id = 0;
  std::uint32_t processors = 1;
  std::int64_t start_file_time = 0;     // FILETIME of StartTrace
  std::uint64_t start_ns = 0;           // the pool's clock at that moment
  std::int64_t realtime_offset_ns = 0;  // CLOCK_REALTIME minus the pool's clock, in ns
};

// What the file took and lost, for ControlTrace(QUERY/STOP) and the final header.
struct EtlCounts {
  std::uint64_t buffers_written = 0;  // buffers written to the file(s), the header buffers too
  std::uint64_t events_in_file = 0;   // records written and not overwritten since
  std::uint64_t events_lost = 0;      // too large for a buffer, file full, or overwritten
  std::uint64_t buffers_lost = 0;     // not written (file full) or overwritten (circular)
};

// TRACE_LOGFILE_HEADER's place in the header event and the layout constants, shared with the
// tests that read files back.
inline constexpr std::uint32_t kBufferHeaderBytes = 0x48;
// The room StartTrace asks for a file with no MaximumFileSize (StartTrace page, ERROR_DISK_FULL).
inline constexpr std::uint64_t kRoomWithoutMaximum = std::uint64_t{200} * 1024 * 1024;
inline constexpr std::uint32_t kSystemHeaderBytes = 0x20;
inline constexpr std::uint32_t kLogfileHeaderBytes = 0x118;
inline constexpr std::uint32_t kEventHeaderBytes = 0x50;
inline constexpr std::uint32_t kClassicHeaderBytes = 0x30;

class EtlFile {
 public:
  // Creates the file (with EVENT_TRACE_FILE_MODE_APPEND opens an existing one and checks that
  // it can be appended to) and writes its header buffer. nullptr on failure, with the Win32
  // status StartTrace returns and a reason.
  static std::unique_ptr<EtlFile> open(const EtlSettings& settings, ULONG& status,
                                       std::string& reason);
  ~EtlFile();
  EtlFile(const EtlFile&) = delete;
  EtlFile& operator=(const EtlFile&) = delete;

  // One record of the session, in the order the reader delivers them: as the reader's parser
  // validated it, or decoded (a logger that also feeds realtime consumers; tests).
  void add(const dataplane::StoredRecord& record);
  void add(const dataplane::RecordView& record);
  // Writes the buffers being filled (a processor's each) that hold a record, and every buffer
  // staged (FlushTimer, ControlTrace FLUSH).
  void flush();
  // Writes the full buffers staged (they go to the file several at a time, in one write) and
  // waits for every write begun: the logger calls it when the session is idle, so that a slow
  // trickle still reaches the file.
  void write_staged();
  // Stop: flushes, then rewrites the header buffer with EndTime, BuffersWritten, EventsLost
  // (`pool_events_lost` plus the file's own) and BuffersLost. The file is closed after.
  void finish(std::uint64_t pool_events_lost);
  // ControlTrace(UPDATE) with a new LogFileName (a NEWFILE pattern for a NEWFILE session): the
  // new file is opened first (on failure nothing changes, with StartTrace's status and a
  // reason), then what was logged goes to the current file, its header is made final, and the
  // session goes on in the new one. Not for an appending session (the caller refuses it).
  bool switch_to(const std::string& name, ULONG& status, std::string& reason);
  // The pool's EventsLost so far, for the header of a NEWFILE file closed before the stop.
  void note_pool_lost(std::uint64_t pool_events_lost) { pool_events_lost_ = pool_events_lost; }
  EtlCounts counts() const;
  // The name of the file being written (NEWFILE: the current one).
  const std::string& current_name() const { return current_name_; }

 private:
  explicit EtlFile(const EtlSettings& settings);
  bool open_file(std::uint32_t index, ULONG& status, std::string& reason);
  int open_descriptor(const std::string& name, ULONG& status, std::string& reason) const;
  bool room_for(const std::string& name, const struct stat* existing, ULONG& status,
                std::string& reason) const;
  void close_file(bool sync);
  bool adopt(int fd, const std::string& name, std::uint32_t index, ULONG& status,
             std::string& reason);
  bool adopt_existing(ULONG& status, std::string& reason);
  void write_header_buffer(std::uint64_t pool_events_lost, std::int64_t end_time);
  // The header buffer of the file being closed: EndTime now, the counts so far.
  void write_final_header();
  // Lays the record out at the end of the buffer being filled; `whole_words` as for
  // StoredRecord (the pool's records), not for a RecordView's parts.
  void format(const dataplane::StoredRecord& record, bool whole_words);
  struct Fill;
  Fill& fill_of(std::uint16_t processor);
  Fill& fill_with_room(const std::byte* header, std::uint32_t size);
  void start_buffer();
  void write_buffer();
  void put_buffer_header();
  bool file_full(std::uint64_t capacity, std::uint32_t packed) const;
  std::uint32_t pack();
  void stage_packed(std::uint32_t size);
  bool stage_full() const;
  void start_staged();
  void collect();
  // The buffers of a stage written (or lost), back to spare_.
  void recycle(std::vector<AlignedBytes>& buffers);
  std::byte* buffer() { return fill_->bytes.get(); }
  std::int64_t file_clock(std::uint64_t ns) const;
  std::uint64_t maximum_bytes() const;  // MaximumFileSize in bytes (0: none)
  std::uint64_t capacity_buffers() const;

  EtlSettings settings_;
  int fd_ = -1;
  std::string current_name_;
  std::uint32_t file_index_ = 1;  // NEWFILE: the %d of the current file
  // Each processor's records fill a buffer of its own (as Windows' per-processor buffers):
  // fill_ is the one of the last record's processor. Full buffers wait in a stage for the ones
  // after them, and are written as one (page-aligned, for O_DIRECT): staged_ of them, for the
  // file's slots from staged_slot_ on. An uncompressed buffer is staged as it is (its memory
  // joins staged_buffers_ and the processor takes a spare one); a compressed one is packed into
  // stages_. Two stages: while writer_ writes one, full buffers go to the other.
  struct Fill {
    AlignedBytes bytes;  // BufferSize, allocated when the processor first writes
    std::uint32_t used = kBufferHeaderBytes;  // header included
    std::uint32_t events = 0;
    std::uint64_t last_timestamp = 0;  // its newest record's (the buffer's TimeStamp)
    std::uint16_t processor = 0;
  };
  std::vector<Fill> fills_;  // by processor
  Fill* fill_ = nullptr;
  AlignedBytes stages_[2];                       // compressed files
  std::vector<AlignedBytes> staged_buffers_[2];  // uncompressed files
  std::vector<AlignedBytes> spare_;              // written, for the processors' next buffers
  unsigned cur_ = 0;
  std::uint32_t stage_capacity_ = 1;
  std::uint32_t staged_ = 0;
  std::uint64_t staged_slot_ = 0;
  std::uint64_t staged_file_buffers_ = 0;  // file_buffers_ before the first staged buffer
  AlignedBytes head_;                      // the header buffer, built here (aligned too)
  bool direct_ = false;                    // the descriptor has O_DIRECT
  BackgroundWriter writer_;
  // The write writer_ is doing: its slots and what they hold, counted in the file once done.
  struct InFlight {
    bool active = false;
    std::uint64_t slot = 0;
    std::uint32_t buffers = 0;
    std::uint64_t events = 0;
    std::uint64_t file_buffers_before = 0;
    std::uint64_t bytes = 0;
  } in_flight_;
  // EVENT_TRACE_COMPRESSED_MODE (sequential and NEWFILE files): each data buffer is written as
  // its header and its records compressed (layout 2.0), at write_at_, one after the other. A
  // full buffer is compressed at once, while its bytes are still in this core's cache, to the
  // end of the stage (packed_used_ bytes so far): the stages hold compressed buffers, written
  // as one when the next would not fit.
  bool compressed_ = false;
  std::uint64_t write_at_ = 0;  // the end of what was written (the write in flight's not yet)
  std::size_t stage_bytes_ = 0;
  std::size_t packed_used_ = 0;
  etl::XpressEncoder encoder_;  // its match table kept from buffer to buffer
  std::uint64_t sequence_ = 0;
  std::uint64_t slot_ = 1;          // where the next buffer goes in the file (0 is the header)
  std::uint64_t file_buffers_ = 1;  // buffers in the current file, its header included
  std::vector<std::uint32_t> slot_events_;  // circular: records held by each slot
  bool wrapped_ = false;
  bool full_ = false;
  std::uint64_t pool_events_lost_ =
      0;  // sequential: MaximumFileSize reached, nothing more is written
  // Appending: what the existing file's header already counted.
  std::uint64_t appended_lost_ = 0;
  std::uint64_t appended_buffers_lost_ = 0;
  std::int64_t appended_start_ = 0;
  std::int64_t appended_system_time_ = 0;
  std::atomic<std::uint64_t> buffers_written_{0};
  std::atomic<std::uint64_t> events_in_file_{0};
  std::atomic<std::uint64_t> events_lost_{0};
  std::atomic<std::uint64_t> buffers_lost_{0};
};

}  // namespace etwrt::broker
