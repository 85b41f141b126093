// A trace file as the logger writes it (etl_file.h), records added straight to an EtlFile: no
// idle moment of a logger thread writes the stage early, so that what is staged and not yet
// written is what the file's limits must count.
#include "etl_file.h"

#include "etl/trace_file.h"

#include <evntrace.h>

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace etwrt::broker {
namespace {

const GUID kProvider = {
    0x3e0c55a1, 0x7b42, 0x4f0d, {0x8c, 0x61, 0x2a, 0x95, 0xd4, 0x17, 0xb0, 0x6e}};

// A folder of its own in the temporary folder, removed at the end.
class TempDir {
 public:
  TempDir() {
    path_ =
        std::filesystem::temp_directory_path() / ("etwrt-etl-file-" + std::to_string(::getpid()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// A compressed file of 16 KB buffers and MaximumFileSize `max_kb` KB in `mode`, given `events`
// records of 32 bytes (the first word the record's index, as a writer's counter), then stopped.
EtlCounts log_records(const std::string& file, std::uint32_t mode, std::uint32_t max_kb,
                      std::uint32_t events) {
  EtlSettings settings;
  settings.logger_name = "etl-file-test";
  settings.file_name = file;
  settings.buffer_bytes = 16 * 1024;
  settings.log_file_mode = mode | EVENT_TRACE_COMPRESSED_MODE | EVENT_TRACE_USE_KBYTES_FOR_SIZE;
  settings.maximum_file_size = max_kb;
  ULONG status = 0;
  std::string reason;
  const std::unique_ptr<EtlFile> etl = EtlFile::open(settings, status, reason);
  EXPECT_NE(etl, nullptr) << reason;
  if (etl == nullptr) return {};
  std::uint64_t payload[4] = {};
  dataplane::RecordView r;
  r.provider_id = kProvider;
  r.descriptor.Id = 1;
  r.descriptor.Level = 4;
  r.process_id = 100;
  r.thread_id = 101;
  r.user_data = std::as_bytes(std::span(payload));
  for (std::uint32_t i = 0; i < events; ++i) {
    payload[0] = i;
    r.timestamp_ns = 1'000'000 + std::uint64_t{i} * 30;
    etl->add(r);
  }
  etl->finish(0);
  return etl->counts();
}

// A sequential uncompressed file of `buffer_kb` KB buffers (nullptr, with the test failed, when
// it cannot be opened).
std::unique_ptr<EtlFile> open_sequential(const std::string& file, std::uint32_t buffer_kb) {
  EtlSettings settings;
  settings.logger_name = "etl-file-test";
  settings.file_name = file;
  settings.buffer_bytes = buffer_kb * 1024;
  settings.log_file_mode = EVENT_TRACE_FILE_MODE_SEQUENTIAL;
  ULONG status = 0;
  std::string reason;
  std::unique_ptr<EtlFile> etl = EtlFile::open(settings, status, reason);
  EXPECT_NE(etl, nullptr) << reason;
  return etl;
}

// `file` as the trace-file reader parses it; `ok` false (the test failed) when it does not.
struct Parsed {
  bool ok = false;
  etl::TraceFile trace;  // its arena holds copies of the records
};
void parse_file(const std::string& file, Parsed& out) {
  std::ifstream in(file, std::ios::binary);
  const std::vector<char> chars((std::istreambuf_iterator<char>(in)), {});
  const auto bytes = std::as_bytes(std::span(chars));
  const etl::ParseStatus header = etl::parse_header(bytes, out.trace);
  EXPECT_TRUE(header.ok()) << file << ": " << header.message;
  if (!header.ok()) return;
  const etl::ParseStatus records = etl::parse_records(bytes, out.trace);
  EXPECT_TRUE(records.ok()) << file << ": " << records.message;
  out.ok = records.ok();
}

// The first payload word of each record of `file`, read by the trace-file reader (which shares
// no code with the writer; its decompressor is its own).
std::vector<std::uint64_t> indices_in(const std::string& file) {
  Parsed parsed;
  parse_file(file, parsed);
  const etl::TraceFile& trace = parsed.trace;
  std::vector<std::uint64_t> out;
  if (!parsed.ok) return out;
  for (std::uint32_t k = 0; k < trace.records.size(); ++k) {
    if (k == trace.header_record) continue;
    const etl::RecordRef& r = trace.records[k];
    EXPECT_EQ(r.size, kEventHeaderBytes + 32) << file << ": record " << k;
    std::uint64_t index = 0;
    std::memcpy(&index, trace.arena.data() + r.offset + kEventHeaderBytes, 8);
    out.push_back(index);
  }
  return out;
}

// A sequential compressed file of at most `max_kb` KB given more records than it holds: within
// its maximum, full, every record in it or counted lost.
EtlCounts fill_sequential(const std::string& file, std::uint32_t max_kb, std::uint32_t events) {
  const EtlCounts c = log_records(file, EVENT_TRACE_FILE_MODE_SEQUENTIAL, max_kb, events);
  EXPECT_LE(std::filesystem::file_size(file), max_kb * 1024u) << "within MaximumFileSize";
  EXPECT_GT(c.events_lost, 0u) << "the file filled up";
  EXPECT_EQ(c.events_in_file + c.events_lost, events);
  return c;
}

// MaximumFileSize counts the compressed buffers staged and not yet written, as well as those
// written: the file never grows past it, and every record is in it or counted lost.
TEST(EtlFile, ACompressedFileStopsAtItsMaximumSizeWithTheStagedBuffersCounted) {
  TempDir dir;
  const std::string file = dir.file("max.etl");
  const EtlCounts c = fill_sequential(file, 64, 30000);
  // 3 uncompressed buffers of 16 KB would hold 3 * 146 records of 112 bytes.
  EXPECT_GT(c.events_in_file, 10u * 146) << "the compressed bytes, not BufferSize, fill it";
  const std::vector<std::uint64_t> read = indices_in(file);
  ASSERT_EQ(read.size(), c.events_in_file);
  for (std::uint64_t k = 0; k < read.size(); ++k) ASSERT_EQ(read[k], k) << "record " << k;
}

// The same with a stage written while the file is still below its maximum: the bytes being
// written count too.
TEST(EtlFile, ACompressedFileCountsTheStageBeingWrittenTowardsItsMaximumSize) {
  TempDir dir;
  const std::string file = dir.file("max2.etl");
  const EtlCounts c = fill_sequential(file, 1536, 600000);
  EXPECT_GT(std::filesystem::file_size(file), 1024u * 1024) << "more than one stage written";
  EXPECT_EQ(indices_in(file).size(), c.events_in_file);
}

// A TIMESTAMP_OVERRIDE descriptor's value is the record's TimeStamp in the file, as given (a raw
// value of the session's clock); the records around it keep theirs.
TEST(EtlFile, ATimestampOverrideIsTheRecordsStampInTheFile) {
  TempDir dir;
  const std::string file = dir.file("override.etl");
  std::unique_ptr<EtlFile> etl = open_sequential(file, 16);
  ASSERT_NE(etl, nullptr);
  std::uint64_t payload[4] = {};
  dataplane::RecordView r;
  r.provider_id = kProvider;
  r.user_data = std::as_bytes(std::span(payload));
  for (std::uint64_t i = 0; i < 3; ++i) {
    payload[0] = i;
    r.timestamp_ns = 5'000'000 + i * 1000;  // QPC in the file: 50000, 50010, 50020
    r.has_timestamp_override = i == 1;
    r.timestamp_override = 0x123456789;
    etl->add(r);
  }
  etl->finish(0);
  etl.reset();
  Parsed parsed;
  parse_file(file, parsed);
  ASSERT_TRUE(parsed.ok);
  const etl::TraceFile& trace = parsed.trace;
  std::vector<std::int64_t> stamps;
  for (std::uint32_t k = 0; k < trace.records.size(); ++k) {
    if (k != trace.header_record) stamps.push_back(trace.records[k].raw_time);
  }
  EXPECT_EQ(stamps, (std::vector<std::int64_t>{50000, 0x123456789, 50020}));
}

// Records of three processors, one after the other, fill a buffer per processor: each buffer
// holds the records of the processor its header names, past 255 too (ProcessorIndex, as the
// buffer's PROC_INDEX flag says), in the order they came; a full buffer is written at once and
// the stop writes the rest in processor order.
TEST(EtlFile, EachProcessorsRecordsFillBuffersOfTheirOwn) {
  TempDir dir;
  const std::string file = dir.file("processors.etl");
  std::unique_ptr<EtlFile> etl = open_sequential(file, 4);
  ASSERT_NE(etl, nullptr);
  constexpr std::uint16_t kProcessors[] = {2, 0, 300};
  constexpr std::uint64_t kEvents = 600;  // 200 each: several 4 KB buffers of 112-byte records
  std::uint64_t payload[4] = {};
  dataplane::RecordView r;
  r.provider_id = kProvider;
  r.user_data = std::as_bytes(std::span(payload));
  for (std::uint64_t i = 0; i < kEvents; ++i) {
    payload[0] = i;
    r.processor = kProcessors[i % 3];
    r.timestamp_ns = 1'000'000 + i * 100;
    etl->add(r);
  }
  etl->finish(0);
  etl.reset();
  Parsed parsed;
  parse_file(file, parsed);
  ASSERT_TRUE(parsed.ok);
  const etl::TraceFile& trace = parsed.trace;
  std::map<std::uint16_t, std::uint64_t> last;  // per processor, the last index + 1
  std::map<std::uint16_t, std::uint64_t> count;
  std::vector<std::uint16_t> buffer_order;
  for (std::uint32_t k = 0; k < trace.records.size(); ++k) {
    if (k == trace.header_record) continue;
    const etl::RecordRef& rec = trace.records[k];
    const etl::BufferInfo& b = trace.buffers[rec.buffer];
    EXPECT_TRUE(b.processor_index);
    std::uint64_t index = 0;
    std::memcpy(&index, trace.arena.data() + rec.offset + kEventHeaderBytes, 8);
    ASSERT_EQ(b.processor, kProcessors[index % 3]) << "record " << index;
    EXPECT_GE(index, last[b.processor]) << "record " << index << " after a later one";
    last[b.processor] = index + 1;
    ++count[b.processor];
    if (buffer_order.empty() || buffer_order.back() != b.processor) {
      buffer_order.push_back(b.processor);
    }
  }
  for (const std::uint16_t p : kProcessors) EXPECT_EQ(count[p], kEvents / 3) << "processor " << p;
  // The buffers of the three fill at once, so the file interleaves them.
  EXPECT_GT(buffer_order.size(), 3u);
}

// A write that fails part way (the file-size limit here, as a full disk would) loses the
// buffers it held and those staged after it; the file is cut back to the buffers counted in
// it, so that a reader finds exactly what the header counts, and later writes go on.
TEST(EtlFile, AWriteThatFailsPartWayIsCutBackAndItsBuffersCountedLost) {
  TempDir dir;
  const std::string file = dir.file("limited.etl");
  std::unique_ptr<EtlFile> etl = open_sequential(file, 4);
  ASSERT_NE(etl, nullptr);
  rlimit before{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &before), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // EFBIG instead of the signal
  rlimit limited = before;
  limited.rlim_cur = 21 * 4096 + 1000;  // the header and 20 buffers, and part of one more
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limited), 0);
  constexpr std::uint64_t kEvents = 6000;  // about 170 buffers of 36 records
  std::uint64_t payload[4] = {};
  dataplane::RecordView r;
  r.provider_id = kProvider;
  r.user_data = std::as_bytes(std::span(payload));
  for (std::uint64_t i = 0; i < kEvents; ++i) {
    payload[0] = i;
    r.processor = static_cast<std::uint16_t>(i % 2);
    r.timestamp_ns = 1'000'000 + i * 100;
    etl->add(r);
    if (i % 500 == 499) etl->flush();  // writes of about 14 buffers each
  }
  etl->finish(0);
  const EtlCounts c = etl->counts();
  etl.reset();
  ::setrlimit(RLIMIT_FSIZE, &before);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_GT(c.events_in_file, 0u);
  EXPECT_GT(c.events_lost, 0u);
  EXPECT_EQ(c.events_in_file + c.events_lost, kEvents);
  EXPECT_EQ(std::filesystem::file_size(file), c.buffers_written * 4096) << "cut back";
  EXPECT_LE(c.buffers_written, 21u);
  Parsed parsed;
  parse_file(file, parsed);
  ASSERT_TRUE(parsed.ok);
  const etl::TraceFile& trace = parsed.trace;
  EXPECT_EQ(trace.records.size() - 1, c.events_in_file) << "every record the file holds is counted";
  EXPECT_EQ(trace.header.BuffersWritten, c.buffers_written);
  EXPECT_EQ(trace.header.EventsLost, c.events_lost);
}

// NEWFILE: each file stops at MaximumFileSize and the next one takes the buffer that did not fit.
TEST(EtlFile, CompressedNewFilesEachStopAtTheMaximumSize) {
  TempDir dir;
  constexpr std::uint32_t kEvents = 60000;
  const EtlCounts c =
      log_records(dir.file("new%d.etl"), EVENT_TRACE_FILE_MODE_NEWFILE, 64, kEvents);
  EXPECT_EQ(c.events_lost, 0u);
  EXPECT_EQ(c.events_in_file, kEvents);
  std::uint32_t files = 0;
  std::uint64_t next = 0;  // the index every file's records go on from
  for (std::uint32_t k = 1;; ++k) {
    const std::string name = dir.file("new" + std::to_string(k) + ".etl");
    if (!std::filesystem::exists(name)) break;
    EXPECT_LE(std::filesystem::file_size(name), 64u * 1024) << name;
    for (const std::uint64_t index : indices_in(name)) ASSERT_EQ(index, next++) << name;
    ++files;
  }
  EXPECT_GE(files, 2u);
  EXPECT_EQ(next, kEvents) << "every record in one of the files, in order";
}

}  // namespace
}  // namespace etwrt::broker
