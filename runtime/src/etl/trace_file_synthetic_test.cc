// The trace-file reader on files made here byte by byte (a test-only writer of the documented
// layout, independent of etwrt's own writer): the MS-XCA decompressor's cases, and files that
// lie (truncated, sizes past their buffer, a compressed buffer whose data is corrupt), each an
// error with its status (ERROR_BAD_FORMAT for no trace file at all, ERROR_FILE_CORRUPT for a
// damaged one: docs/etwrt/conformance.md, "Trace files (reading)") and never a crash.
#include "etl/record_decode.h"
#include "etl/trace_file.h"
#include "etl/xpress.h"
#include "etl/xpress_reference.h"
#include "test_consumer.h"

#include <windows.h>
#include <evntcons.h>
#include <evntrace.h>

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace {

namespace etl = etwrt::etl;
using Bytes = std::vector<std::byte>;
using etl::testing::reference_lz77;

template <typename T>
void put(Bytes& b, std::size_t at, T v) {
  if (b.size() < at + sizeof v) b.resize(at + sizeof v);
  std::memcpy(b.data() + at, &v, sizeof v);
}

std::uint32_t get_u32(const Bytes& b, std::size_t at) {
  std::uint32_t v;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}

Bytes from(std::initializer_list<int> v) {
  Bytes b;
  for (int x : v) b.push_back(static_cast<std::byte>(x));
  return b;
}

std::string text(const Bytes& b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

std::ptrdiff_t decompress(const Bytes& in, Bytes& out) {
  return etl::xpress_lz77_decompress(in, out);
}

TEST(Xpress, LiteralThenOverlappingMatchAsMsXcaShowsIt) {
  // MS-XCA 2.4.4: "aaaaaa" = [literal "a"][match: offset 1, length 5]; then the end (a match
  // flag with no input left).
  Bytes out(16);
  EXPECT_EQ(decompress(from({0, 0, 0, 0x60, 'a', 0x02, 0x00}), out), 6);
  out.resize(6);
  EXPECT_EQ(text(out), "aaaaaa");
}

TEST(Xpress, LongLengthsShareAHalfByte) {
  // Two matches of length 10 (code 7, half byte 0) and 3 + 7 + 1 (half byte 1): one byte
  // carries both half bytes, low nibble first.
  Bytes in = from({0, 0, 0, 0x70, 'x', 0x07, 0x00, 0x10, 0x07, 0x00});
  Bytes out(32);
  EXPECT_EQ(decompress(in, out), 1 + 10 + 11);
  out.resize(22);
  EXPECT_EQ(text(out), std::string(22, 'x'));
}

// [literals "abc..." cut to `period`][match: offset `period`, length `length` (3 to 36)].
Bytes pattern_then_match(const std::string& pattern, int length) {
  const std::uint32_t flags = 1u << (31 - pattern.size());
  Bytes in = from({static_cast<int>(flags & 0xFF), static_cast<int>((flags >> 8) & 0xFF),
                   static_cast<int>((flags >> 16) & 0xFF), static_cast<int>(flags >> 24)});
  for (char c : pattern) in.push_back(static_cast<std::byte>(c));
  const int code = length - 3;
  const int match = (static_cast<int>(pattern.size() - 1) << 3) | std::min(code, 7);
  in.push_back(static_cast<std::byte>(match & 0xFF));
  in.push_back(static_cast<std::byte>(match >> 8));
  if (code >= 7) {  // A half byte of up to 15, then a byte for the rest.
    in.push_back(static_cast<std::byte>(std::min(code - 7, 15)));
    if (code - 7 >= 15) in.push_back(static_cast<std::byte>(code - 22));
  }
  return in;
}

TEST(Xpress, OverlappingMatchesOfEveryShortPeriodRepeatTheirPattern) {
  // Every period up to 17 and lengths on each side of the decoder's fast copies (8, 16, 32), in
  // an output with room to spare and in one of the exact size.
  for (int period = 1; period <= 17; ++period) {
    for (int length : {5, 9, 16, 17, 33, 36}) {
      SCOPED_TRACE(std::to_string(period) + " " + std::to_string(length));
      const std::string pattern = std::string("abcdefghijklmnopq").substr(0, period);
      const Bytes in = pattern_then_match(pattern, length);
      std::string expected;
      while (expected.size() < pattern.size() + length) expected += pattern;
      expected.resize(pattern.size() + length);
      for (std::size_t room : {expected.size(), expected.size() + 200}) {
        Bytes out(room);
        ASSERT_EQ(decompress(in, out), static_cast<std::ptrdiff_t>(expected.size()));
        out.resize(expected.size());
        EXPECT_EQ(text(out), expected);
      }
    }
  }
}

TEST(Xpress, InvalidStreamsAreErrors) {
  Bytes out(8);
  // A match reaching before the output's start.
  EXPECT_EQ(decompress(from({0, 0, 0, 0x80, 0x0A, 0x00}), out), -1);
  // More output than the buffer holds.
  EXPECT_EQ(decompress(from({0, 0, 0, 0x60, 'a', 0x42, 0x00}), out), -1);
  // A match cut in the middle; a long length cut before its half byte.
  EXPECT_EQ(decompress(from({0, 0, 0, 0x40, 'a', 0x02}), out), -1);
  EXPECT_EQ(decompress(from({0, 0, 0, 0x40, 'a', 0x07, 0x00}), out), -1);
  // A flag word cut short.
  EXPECT_EQ(decompress(from({0, 0, 0}), out), -1);
}

// A valid MS-XCA stream of `items` random items: literal runs of 0 to 40, matches at offsets
// from 1 to 8192 (short periods often) and of lengths 3 to 300, with now and then one of
// 70,000 (the 4-byte length). Every length form and the shared half bytes occur.
Bytes random_stream(unsigned seed, int items) {
  std::srand(seed);
  Bytes in;
  std::size_t flags_at = 0, half_at = 0, written = 0;
  int bit = 0;
  const auto push = [&](std::uint32_t v, int n) {
    for (int k = 0; k < n; ++k) in.push_back(static_cast<std::byte>((v >> (8 * k)) & 0xFF));
  };
  const auto item = [&](bool match) {
    if (bit == 0) {
      flags_at = in.size();
      push(0, 4);
    }
    if (match) in[flags_at + 3 - (bit / 8)] |= static_cast<std::byte>(0x80 >> (bit % 8));
    bit = (bit + 1) % 32;
  };
  for (int i = 0; i < items; ++i) {
    const int literals = written == 0 ? 1 + std::rand() % 8 : std::rand() % 41 * (std::rand() % 2);
    for (int k = 0; k < literals; ++k, ++written) {
      item(false);
      push(static_cast<std::uint32_t>(std::rand() % 4), 1);  // Few values: matches repeat them.
    }
    const std::size_t far = std::min<std::size_t>(written, 8192);
    const std::size_t offset = std::rand() % 3 == 0
                                   ? 1 + std::rand() % std::min<std::size_t>(far, 40)
                                   : 1 + std::rand() % far;
    const std::size_t length =
        std::rand() % 50 == 0 ? 70000 : 3 + std::rand() % (std::rand() % 3 == 0 ? 298 : 20);
    item(true);
    const std::size_t code = length - 3;
    push(static_cast<std::uint32_t>(((offset - 1) << 3) | std::min<std::size_t>(code, 7)), 2);
    if (code >= 7) {
      const auto nibble = static_cast<std::uint8_t>(std::min<std::size_t>(code - 7, 15));
      if (half_at == 0) {
        half_at = in.size();
        push(nibble, 1);
      } else {
        in[half_at] |= static_cast<std::byte>(nibble << 4);
        half_at = 0;
      }
      if (code >= 22 && code - 22 < 255) push(static_cast<std::uint32_t>(code - 22), 1);
      if (code >= 22 + 255) {
        push(255, 1);
        push(code < 65536 ? static_cast<std::uint32_t>(code) : 0, 2);
        if (code >= 65536) push(static_cast<std::uint32_t>(code), 4);
      }
    }
    written += length;
  }
  while (bit != 0) item(true);  // The end: match flags with no input left.
  return in;
}

TEST(Xpress, LongRandomStreamsGiveWhatTheByteByByteLoopGives) {
  // Streams long enough for the decompressor's block-copy path (a flag group at a time), in
  // outputs of the exact size, one byte short, and roomy; and with a match made to reach
  // before the output's start, or a length made to overrun it, somewhere in the middle.
  for (unsigned seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE(seed);
    Bytes in = random_stream(seed, 300);
    Bytes expected(1 << 22);
    const std::ptrdiff_t n = reference_lz77(in, expected);
    ASSERT_GT(n, 0);
    expected.resize(static_cast<std::size_t>(n));
    for (std::size_t room : {expected.size(), expected.size() - 1, expected.size() + 300}) {
      Bytes out(room);
      const std::ptrdiff_t got = decompress(in, out);
      if (room < expected.size()) {
        EXPECT_EQ(got, -1);
        continue;
      }
      ASSERT_EQ(got, n);
      out.resize(expected.size());
      EXPECT_TRUE(out == expected);
    }
    // A damaged byte in the middle: whatever it makes of the stream, both loops agree.
    for (std::size_t at : {in.size() / 3, in.size() / 2, in.size() - 40}) {
      Bytes bad = in;
      bad[at] ^= std::byte{0xA5};
      Bytes want(expected.size() + 64), out(expected.size() + 64);
      const std::ptrdiff_t r = reference_lz77(bad, want);
      ASSERT_EQ(decompress(bad, out), r);
      if (r > 0) {
        EXPECT_TRUE(std::equal(out.begin(), out.begin() + r, want.begin()));
      }
    }
  }
}

// A compressed form of `raw` with literals only (a valid MS-XCA stream).
Bytes literal_stream(const Bytes& raw) {
  Bytes out;
  for (std::size_t i = 0; i < raw.size(); i += 32) {
    for (int k = 0; k < 4; ++k) out.push_back(std::byte{0});
    for (std::size_t j = i; j < raw.size() && j < i + 32; ++j) out.push_back(raw[j]);
  }
  return out;
}

constexpr std::uint32_t kBufferSize = 4096;

// A buffer: WMI_BUFFER_HEADER, then `records`, then 0xFF padding to kBufferSize.
Bytes buffer(const Bytes& records, std::uint16_t type, std::uint8_t cpu, bool compressed) {
  Bytes b(etl::kBufferHeaderSize, std::byte{0});
  const auto offset = static_cast<std::uint32_t>(etl::kBufferHeaderSize + records.size());
  put<std::uint32_t>(b, 0x04, offset);
  put<std::uint32_t>(b, 0x08, offset);
  b[0x28] = static_cast<std::byte>(cpu);
  put<std::uint32_t>(b, 0x30, offset);
  put<std::uint16_t>(b, 0x34, compressed ? 0x40 : 0x01);
  put<std::uint16_t>(b, 0x36, type);
  if (compressed) {
    const Bytes c = literal_stream(records);
    b.insert(b.end(), c.begin(), c.end());
    put<std::uint32_t>(b, 0x00, static_cast<std::uint32_t>(b.size()));
    return b;
  }
  b.insert(b.end(), records.begin(), records.end());
  b.resize(kBufferSize, std::byte{0xFF});
  put<std::uint32_t>(b, 0x00, kBufferSize);
  return b;
}

void pad8(Bytes& b) { b.resize((b.size() + 7) & ~std::size_t{7}, std::byte{0}); }

// The log-file header event: SYSTEM_TRACE_HEADER (SYSTEM64, HookId 0), TRACE_LOGFILE_HEADER
// (x64), "L\0" and "f\0".
Bytes header_record(std::int64_t start_ft, std::int64_t qpc0) {
  Bytes r(32, std::byte{0});
  put<std::uint32_t>(r, 0, 0xC0020002);  // Version 2, SYSTEM64, TRACE_HEADER_FLAG | EVENT_TRACE
  TRACE_LOGFILE_HEADER h{};
  h.BufferSize = kBufferSize;
  h.VersionDetail.MajorVersion = 10;
  h.VersionDetail.SubVersion = 2;
  h.NumberOfProcessors = 2;
  h.PointerSize = 8;
  h.EventsLost = 5;
  h.PerfFreq.QuadPart = 10000000;
  h.StartTime.QuadPart = start_ft;
  h.EndTime.QuadPart = start_ft + 10000000;
  h.ReservedFlags = 1;
  put<std::int64_t>(r, 16, qpc0);
  r.resize(32 + sizeof h);  // Not insert: GCC 12 -Warray-bounds misreads it once inlined.
  std::memcpy(r.data() + 32, &h, sizeof h);
  for (char16_t c : std::u16string(u"L\0f\0", 4)) put<char16_t>(r, r.size(), c);
  put<std::uint16_t>(r, 4, static_cast<std::uint16_t>(r.size()));
  pad8(r);
  return r;
}

// An EVENT_HEADER record (64-bit) with one extended item and `payload`.
Bytes event_record(std::int64_t qpc, std::uint16_t id, const Bytes& payload) {
  Bytes r(80, std::byte{0});
  put<std::uint32_t>(r, 0, 0xC0130000);  // EVENT_HEADER64; the size goes in the low half.
  put<std::uint16_t>(r, 4, EVENT_HEADER_FLAG_EXTENDED_INFO);
  put<std::uint32_t>(r, 8, 77);   // ThreadId
  put<std::uint32_t>(r, 12, 66);  // ProcessId
  put<std::int64_t>(r, 16, qpc);
  put<std::uint32_t>(r, 24, 0x12345678);  // ProviderId.Data1
  put<std::uint16_t>(r, 40, id);
  put<std::uint32_t>(r, 56, 3);  // KernelTime
  // One item: RELATED_ACTIVITYID (16 bytes), Linkage 0.
  put<std::uint16_t>(r, 80, 24);
  put<std::uint16_t>(r, 82, EVENT_HEADER_EXT_TYPE_RELATED_ACTIVITYID);
  put<std::uint16_t>(r, 86, 16);
  put<std::uint32_t>(r, 88, 0xAABBCCDD);
  r.resize(104, std::byte{0});
  r.insert(r.end(), payload.begin(), payload.end());
  put<std::uint16_t>(r, 0, static_cast<std::uint16_t>(r.size()));
  pad8(r);
  return r;
}

constexpr std::int64_t kStart = 133000000000000000;

// A trace file: the header buffer, then `buffers` in file order.
Bytes file_of(std::initializer_list<Bytes> buffers) {
  Bytes file = buffer(header_record(kStart, 1000), 4, 0, false);
  for (const Bytes& b : buffers) file.insert(file.end(), b.begin(), b.end());
  return file;
}

// An event record's stamp, Id and one byte of payload.
struct Event {
  std::int64_t qpc;
  std::uint16_t id;
  char payload;
};

// Event records one after the other, in file order.
Bytes records_of(std::initializer_list<Event> events) {
  Bytes out;
  for (const Event& e : events) {
    const Bytes r = event_record(e.qpc, e.id, from({e.payload}));
    out.insert(out.end(), r.begin(), r.end());
  }
  return out;
}

// Header buffer, then CPU 1's buffer (events 2 and 4), then CPU 0's (events 1 and 3): delivery
// must interleave them by stamp.
// `shift` moves the events' stamps (not the header's): a second file whose events fall between
// the first one's.
Bytes sample_file(bool compressed, std::int64_t shift = 0, std::uint16_t id_base = 0) {
  const auto at = [&](std::int64_t qpc, std::uint16_t id, char payload) {
    return Event{qpc + shift, static_cast<std::uint16_t>(id_base + id), payload};
  };
  return file_of({buffer(records_of({at(1200, 2, 'b'), at(1400, 4, 'd')}), 0, 1, compressed),
                  buffer(records_of({at(1100, 1, 'a'), at(1300, 3, 'c')}), 0, 0, compressed)});
}
struct Delivered {
  std::vector<USHORT> ids;
  std::vector<std::int64_t> stamps;
  std::vector<UCHAR> cpus;
  std::vector<std::string> payloads;
  ULONG related = 0;
};

void WINAPI collect(PEVENT_RECORD e) {
  auto& d = *static_cast<Delivered*>(e->UserContext);
  d.ids.push_back(e->EventHeader.EventDescriptor.Id);
  d.stamps.push_back(e->EventHeader.TimeStamp.QuadPart);
  d.cpus.push_back(e->BufferContext.ProcessorNumber);
  d.payloads.emplace_back(static_cast<const char*>(e->UserData), e->UserDataLength);
  if (e->ExtendedDataCount == 1 &&
      e->ExtendedData[0].ExtType == EVENT_HEADER_EXT_TYPE_RELATED_ACTIVITYID) {
    d.related = *reinterpret_cast<const ULONG*>(e->ExtendedData[0].DataPtr);
  }
}

// Writes `bytes` to a temporary file, opens it with OpenTraceA and runs ProcessTrace.
struct FileRun {
  TRACEHANDLE handle = INVALID_PROCESSTRACE_HANDLE;
  ULONG status = ERROR_SUCCESS;
  Delivered delivered;
  EVENT_TRACE_LOGFILEA logfile{};
};

// `bytes` in the file `name` of the temporary folder: its path, empty when it cannot be written.
std::string temp_file(const std::string& name, const Bytes& bytes) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return {};
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && written ? path : std::string();
}

// Opens `bytes` (written to a temporary file, removed once open) into `r` with OpenTraceA.
void open(const Bytes& bytes, FileRun& r, ULONG extra_mode = 0) {
  static int serial = 0;
  const std::string path = temp_file(
      "etwrt-synthetic-" + std::to_string(::getpid()) + "-" + std::to_string(++serial) + ".etl",
      bytes);
  ASSERT_FALSE(path.empty());
  std::string name = path;
  r.logfile.LogFileName = name.data();
  r.logfile.ProcessTraceMode = PROCESS_TRACE_MODE_EVENT_RECORD | extra_mode;
  r.logfile.EventRecordCallback = collect;
  r.logfile.Context = &r.delivered;
  r.handle = OpenTraceA(&r.logfile);
  std::filesystem::remove(path);
}

void run(const Bytes& bytes, FileRun& r, ULONG extra_mode = 0) {
  open(bytes, r, extra_mode);
  if (r.handle == INVALID_PROCESSTRACE_HANDLE) return;
  r.status = ProcessTrace(&r.handle, 1, nullptr, nullptr);
  EXPECT_EQ(CloseTrace(r.handle), static_cast<ULONG>(ERROR_SUCCESS));
}

TEST(EtlSynthetic, RecordsOfBothCpusMergeByTimeWithTheirFields) {
  for (bool compressed : {false, true}) {
    SCOPED_TRACE(compressed ? "compressed" : "plain");
    FileRun r;
    run(sample_file(compressed), r);
    ASSERT_NE(r.handle, INVALID_PROCESSTRACE_HANDLE);
    EXPECT_EQ(r.status, static_cast<ULONG>(ERROR_SUCCESS));
    EXPECT_EQ(r.logfile.LogfileHeader.EventsLost, 5u);
    EXPECT_EQ(r.logfile.BufferSize, kBufferSize);
    EXPECT_EQ(r.delivered.ids, (std::vector<USHORT>{0, 1, 2, 3, 4}));
    EXPECT_EQ(r.delivered.cpus, (std::vector<UCHAR>{0, 0, 1, 0, 1}));
    ASSERT_EQ(r.delivered.payloads.size(), 5u);
    EXPECT_EQ(r.delivered.payloads[1], "a");
    EXPECT_EQ(r.delivered.payloads[4], "d");
    EXPECT_EQ(r.delivered.related, 0xAABBCCDDu);
    // QPC at 10 MHz from the header event's stamp (1000) at StartTime: tick = 100 ns.
    EXPECT_EQ(r.delivered.stamps, (std::vector<std::int64_t>{kStart, kStart + 100, kStart + 200,
                                                             kStart + 300, kStart + 400}));
  }
}

// A CPU whose stamps go back inside its buffer and stamps equal across CPUs: delivery is by
// stamp, file order among equal stamps, whatever the per-CPU merge does inside.
TEST(EtlSynthetic, StampsThatGoBackAndEqualStampsKeepTimeThenFileOrder) {
  const Bytes file = file_of(
      {buffer(records_of({{1300, 10, 'x'}, {1200, 11, 'x'}}), 0, 1, true),
       buffer(records_of({{1100, 20, 'y'}, {1300, 21, 'y'}, {1150, 22, 'y'}, {1300, 23, 'y'}}), 0,
              0, false)});
  FileRun r;
  run(file, r);
  ASSERT_NE(r.handle, INVALID_PROCESSTRACE_HANDLE);
  EXPECT_EQ(r.status, static_cast<ULONG>(ERROR_SUCCESS));
  EXPECT_EQ(r.delivered.ids, (std::vector<USHORT>{0, 20, 22, 11, 10, 21, 23}));
}

// A circular file after its wrap holds its newest buffer before its oldest; records of equal
// stamps across that seam come in the buffers' order (SequenceNumber), not the file's.
TEST(EtlSynthetic, EqualStampsAcrossACircularSeamFollowTheBuffersSequence) {
  Bytes newest = buffer(records_of({{1300, 31, 'z'}, {1400, 32, 'z'}}), 0, 0, false);
  put<std::int64_t>(newest, 0x18, 5);
  Bytes oldest = buffer(records_of({{1200, 41, 'z'}, {1300, 42, 'z'}}), 0, 0, false);
  put<std::int64_t>(oldest, 0x18, 4);
  const Bytes file = file_of({newest, oldest});
  FileRun r;
  run(file, r);
  ASSERT_NE(r.handle, INVALID_PROCESSTRACE_HANDLE);
  EXPECT_EQ(r.status, static_cast<ULONG>(ERROR_SUCCESS));
  EXPECT_EQ(r.delivered.ids, (std::vector<USHORT>{0, 41, 42, 31, 32}));
}

TEST(EtlSynthetic, RawTimestampsAreTheFilesClock) {
  FileRun r;
  run(sample_file(false), r, PROCESS_TRACE_MODE_RAW_TIMESTAMP);
  EXPECT_EQ(r.delivered.stamps, (std::vector<std::int64_t>{1000, 1100, 1200, 1300, 1400}));
}

ULONG parse(const Bytes& file) {
  etl::TraceFile t;
  if (etl::ParseStatus s = etl::parse_header(file, t); !s.ok()) return s.status;
  return etl::parse_records(file, t).status;
}

TEST(EtlSynthetic, DamagedFilesAreErrorsWithTheirStatus) {
  const Bytes good = sample_file(false);
  EXPECT_EQ(parse(good), static_cast<ULONG>(ERROR_SUCCESS));
  // No trace file: empty, or cut inside the header buffer.
  EXPECT_EQ(parse(Bytes{}), static_cast<ULONG>(ERROR_BAD_FORMAT));
  EXPECT_EQ(parse(Bytes(good.begin(), good.begin() + 100)), static_cast<ULONG>(ERROR_BAD_FORMAT));
  FileRun none;
  run(Bytes(good.begin(), good.begin() + 100), none);
  EXPECT_EQ(none.handle, INVALID_PROCESSTRACE_HANDLE);
  // Truncated: the last buffer cut short. OpenTrace succeeds, ProcessTrace says corrupt.
  const Bytes cut(good.begin(), good.end() - 100);
  EXPECT_EQ(parse(cut), static_cast<ULONG>(ERROR_FILE_CORRUPT));
  FileRun truncated;
  run(cut, truncated);
  ASSERT_NE(truncated.handle, INVALID_PROCESSTRACE_HANDLE);
  EXPECT_EQ(truncated.status, static_cast<ULONG>(ERROR_FILE_CORRUPT));
  EXPECT_TRUE(truncated.delivered.ids.empty());
  // Sizes that lie: a record longer than its buffer's Offset; an Offset past BufferSize.
  Bytes long_record = good;
  put<std::uint16_t>(long_record, kBufferSize + etl::kBufferHeaderSize, 0x3000);
  EXPECT_EQ(parse(long_record), static_cast<ULONG>(ERROR_FILE_CORRUPT));
  Bytes far_offset = good;
  put<std::uint32_t>(far_offset, kBufferSize + 0x30, kBufferSize + 8);
  EXPECT_EQ(parse(far_offset), static_cast<ULONG>(ERROR_FILE_CORRUPT));
  // An extended item longer than its record: ProcessTrace stops with ERROR_FILE_CORRUPT.
  Bytes long_item = good;
  put<std::uint16_t>(long_item, kBufferSize + etl::kBufferHeaderSize + 86, 0x2000);
  FileRun bad_item;
  run(long_item, bad_item);
  EXPECT_EQ(bad_item.status, static_cast<ULONG>(ERROR_FILE_CORRUPT));
}

TEST(EtlSynthetic, ACorruptCompressedBufferIsFileCorrupt) {
  const Bytes good = sample_file(true);
  EXPECT_EQ(parse(good), static_cast<ULONG>(ERROR_SUCCESS));
  // The first flag word of the first compressed buffer says "match" at once: a match before
  // the output's start.
  Bytes corrupt = good;
  put<std::uint32_t>(corrupt, kBufferSize + etl::kBufferHeaderSize, 0xFFFFFFFF);
  EXPECT_EQ(parse(corrupt), static_cast<ULONG>(ERROR_FILE_CORRUPT));
  // A stream that decompresses to less than its Offset.
  Bytes short_stream = good;
  put<std::uint32_t>(short_stream, kBufferSize + 0x30, kBufferSize - 8);
  EXPECT_EQ(parse(short_stream), static_cast<ULONG>(ERROR_FILE_CORRUPT));
  FileRun r;
  run(corrupt, r);
  EXPECT_EQ(r.status, static_cast<ULONG>(ERROR_FILE_CORRUPT));
}

// A file of many compressed buffers is parsed by several threads, each a run of buffers
// (trace_file.cc, parse_records): what they give must be what one buffer after another gives,
// and a damaged file must name the first damaged buffer in file order, whichever thread met it.
struct ManyBuffers {
  Bytes file;
  std::vector<std::size_t> at;  // each data buffer's offset in the file
};

ManyBuffers many_buffers(std::size_t count) {
  ManyBuffers m;
  m.file = buffer(header_record(kStart, 1000), 4, 0, false);
  for (std::size_t i = 0; i < count; ++i) {
    const auto id = static_cast<std::uint16_t>(i);
    const std::int64_t qpc = 2000 + 10 * static_cast<std::int64_t>(i);
    m.at.push_back(m.file.size());
    const Bytes b = buffer(records_of({{qpc, id, 'x'}, {qpc + 5, id, 'y'}}), 0,
                           static_cast<std::uint8_t>(i % 2), true);
    m.file.insert(m.file.end(), b.begin(), b.end());
  }
  return m;
}

etl::ParseStatus parse_status(const Bytes& file) {
  etl::TraceFile t;
  if (etl::ParseStatus s = etl::parse_header(file, t); !s.ok()) return s;
  return etl::parse_records(file, t);
}

TEST(EtlSynthetic, ManyBuffersParseAsOneAfterAnotherAndTheFirstDamageIsNamed) {
  constexpr std::size_t kBuffers = 600;  // the threads' share is at least 64 buffers each
  const ManyBuffers m = many_buffers(kBuffers);
  etl::TraceFile t;
  ASSERT_TRUE(etl::parse_header(m.file, t).ok());
  ASSERT_TRUE(etl::parse_records(m.file, t).ok());
  ASSERT_EQ(t.buffers.size(), kBuffers + 1);
  ASSERT_EQ(t.records.size(), 2 * kBuffers + 1);
  for (std::size_t i = 1; i < t.records.size(); ++i) {
    const etl::RecordRef& r = t.records[i];
    ASSERT_EQ(r.buffer, (i + 1) / 2) << i;  // two per buffer, after the header's
    ASSERT_GT(r.offset, t.records[i - 1].offset) << i;
    ASSERT_EQ(r.raw_time, 2000 + 10 * std::int64_t((i - 1) / 2) + 5 * std::int64_t((i - 1) % 2));
  }
  for (std::size_t i = 1; i <= kBuffers; ++i) ASSERT_EQ(t.buffers[i].records, 2u) << i;
  // A compressed stream that starts with a match (nothing before it to copy from).
  const auto damaged = [&](std::initializer_list<std::size_t> buffers) {
    Bytes file = m.file;
    for (std::size_t b : buffers) put<std::uint32_t>(file, m.at[b] + etl::kBufferHeaderSize, ~0u);
    return parse_status(file);
  };
  const auto names = [&](const etl::ParseStatus& s, std::size_t b) {
    return s.status == static_cast<ULONG>(ERROR_FILE_CORRUPT) &&
           s.message.rfind("offset " + std::to_string(m.at[b]) + ":", 0) == 0;
  };
  for (const std::size_t first : {std::size_t{10}, kBuffers / 2 + 10, kBuffers - 1}) {
    EXPECT_TRUE(names(damaged({first}), first)) << damaged({first}).message;
    EXPECT_TRUE(names(damaged({first, kBuffers - 1}), first)) << first;
  }
  EXPECT_TRUE(names(damaged({kBuffers - 1, 10}), 10));
  // A header that does not fit the file after a damaged buffer: the damaged one is met first.
  Bytes cut = m.file;
  put<std::uint32_t>(cut, m.at[kBuffers - 2] + etl::kBufferHeaderSize, ~0u);
  put<std::uint32_t>(cut, m.at[kBuffers - 1], 0x7FFFFFFF);  // BufferSize past the file's end
  EXPECT_TRUE(names(parse_status(cut), kBuffers - 2)) << parse_status(cut).message;
  put<std::uint32_t>(cut, m.at[kBuffers - 2] + etl::kBufferHeaderSize,
                     get_u32(m.file, m.at[kBuffers - 2] + etl::kBufferHeaderSize));
  EXPECT_TRUE(names(parse_status(cut), kBuffers - 1)) << parse_status(cut).message;
}

FILETIME as_filetime(std::int64_t t) {
  return {static_cast<DWORD>(t), static_cast<DWORD>(static_cast<std::uint64_t>(t) >> 32)};
}

TEST(EtlSynthetic, TwoFilesMergeByTimeAfterBothHeaders) {
  FileRun a, b;
  open(sample_file(false), a);
  open(sample_file(true, 50, 10), b);
  ASSERT_NE(a.handle, INVALID_PROCESSTRACE_HANDLE);
  ASSERT_NE(b.handle, INVALID_PROCESSTRACE_HANDLE);
  b.logfile.Context = nullptr;  // OpenTrace copied the structure: this changes nothing.
  TRACEHANDLE handles[2] = {a.handle, b.handle};
  EXPECT_EQ(ProcessTrace(handles, 2, nullptr, nullptr), static_cast<ULONG>(ERROR_SUCCESS));
  EXPECT_TRUE(a.delivered.ids.size() == 5 && b.delivered.ids.size() == 5);
  // Each handle's callbacks get its own file; together, ordered by stamp.
  EXPECT_EQ(a.delivered.stamps[1], kStart + 100);
  EXPECT_EQ(b.delivered.stamps[1], kStart + 150);
  EXPECT_EQ(CloseTrace(a.handle), static_cast<ULONG>(ERROR_SUCCESS));
  EXPECT_EQ(CloseTrace(b.handle), static_cast<ULONG>(ERROR_SUCCESS));
  EXPECT_EQ(CloseTrace(b.handle), static_cast<ULONG>(ERROR_INVALID_HANDLE));
}

std::vector<std::pair<int, std::int64_t>> g_merged;
void WINAPI merged(PEVENT_RECORD e) {
  g_merged.emplace_back(static_cast<int>(reinterpret_cast<std::uintptr_t>(e->UserContext)),
                        e->EventHeader.TimeStamp.QuadPart);
}

TEST(EtlSynthetic, TheMergeAlternatesBetweenFilesByStamp) {
  g_merged.clear();
  TRACEHANDLE handles[2];
  for (int i = 0; i < 2; ++i) {
    const std::string path =
        temp_file("etwrt-merge-" + std::to_string(i) + ".etl",
                  sample_file(false, i * 50, static_cast<std::uint16_t>(i * 10)));
    ASSERT_FALSE(path.empty());
    EVENT_TRACE_LOGFILEA l{};
    std::string name = path;
    handles[i] = etwrt::testing::open_file(
        l, name, merged, reinterpret_cast<void*>(static_cast<std::uintptr_t>(i + 1)));
    std::filesystem::remove(path);
    ASSERT_NE(handles[i], INVALID_PROCESSTRACE_HANDLE);
  }
  EXPECT_EQ(ProcessTrace(handles, 2, nullptr, nullptr), static_cast<ULONG>(ERROR_SUCCESS));
  const std::vector<std::pair<int, std::int64_t>> expected = {
      {1, kStart},       {2, kStart},       {1, kStart + 100}, {2, kStart + 150},
      {1, kStart + 200}, {2, kStart + 250}, {1, kStart + 300}, {2, kStart + 350},
      {1, kStart + 400}, {2, kStart + 450}};
  EXPECT_EQ(g_merged, expected);
  for (TRACEHANDLE h : handles) EXPECT_EQ(CloseTrace(h), static_cast<ULONG>(ERROR_SUCCESS));
}

TEST(EtlSynthetic, WindowCancelClassicAndReplay) {
  // StartTime/EndTime: only records stamped inside (bounds included), the header always.
  FileRun w;
  open(sample_file(false), w);
  FILETIME lo = as_filetime(kStart + 200), hi = as_filetime(kStart + 300);
  EXPECT_EQ(ProcessTrace(&w.handle, 1, &lo, &hi), static_cast<ULONG>(ERROR_SUCCESS));
  EXPECT_EQ(w.delivered.ids, (std::vector<USHORT>{0, 2, 3}));
  // ProcessTrace again on the same handle plays the file again.
  w.delivered = {};
  EXPECT_EQ(ProcessTrace(&w.handle, 1, nullptr, nullptr), static_cast<ULONG>(ERROR_SUCCESS));
  EXPECT_EQ(w.delivered.ids.size(), 5u);
  EXPECT_EQ(w.logfile.BuffersRead, 0u);  // The caller's structure is not written after OpenTrace.
  CloseTrace(w.handle);

  // BufferCallback FALSE after the first buffer: ERROR_CANCELLED, nothing more.
  FileRun c;
  c.logfile.BufferCallback = [](PEVENT_TRACE_LOGFILEA l) -> ULONG {
    return l->BuffersRead < 1 ? TRUE : FALSE;
  };
  open(sample_file(false), c);
  EXPECT_EQ(ProcessTrace(&c.handle, 1, nullptr, nullptr), static_cast<ULONG>(ERROR_CANCELLED));
  EXPECT_EQ(c.delivered.ids, (std::vector<USHORT>{0}));
  CloseTrace(c.handle);

  // Without PROCESS_TRACE_MODE_EVENT_RECORD: EventCallback gets EVENT_TRACEs.
  static std::vector<std::pair<UCHAR, ULONG>> classic;
  classic.clear();
  EVENT_TRACE_LOGFILEA l{};
  const std::string path = temp_file("etwrt-classic.etl", sample_file(false));
  ASSERT_FALSE(path.empty());
  std::string name = path;
  l.LogFileName = name.data();
  l.EventCallback = [](PEVENT_TRACE t) {
    classic.emplace_back(t->Header.Class.Type, t->MofLength);
  };
  TRACEHANDLE h = OpenTraceA(&l);
  std::filesystem::remove(path);
  ASSERT_NE(h, INVALID_PROCESSTRACE_HANDLE);
  EXPECT_EQ(ProcessTrace(&h, 1, nullptr, nullptr), static_cast<ULONG>(ERROR_SUCCESS));
  ASSERT_EQ(classic.size(), 5u);
  EXPECT_EQ(classic[0].second, sizeof(TRACE_LOGFILE_HEADER) + 8);  // The header and two names.
  EXPECT_EQ(classic[1].second, 1u);
  CloseTrace(h);
}

TEST(EtlSynthetic, OpenTraceWTakesAUtf16Path) {
  const std::string path = temp_file("etwrt-wide.etl", sample_file(false));
  ASSERT_FALSE(path.empty());
  std::u16string wide(path.begin(), path.end());
  EVENT_TRACE_LOGFILEW l{};
  l.LogFileName = reinterpret_cast<LPWSTR>(wide.data());
  l.ProcessTraceMode = PROCESS_TRACE_MODE_EVENT_RECORD;
  Delivered d;
  l.EventRecordCallback = collect;
  l.Context = &d;
  TRACEHANDLE h = OpenTraceW(&l);
  std::filesystem::remove(path);
  ASSERT_NE(h, INVALID_PROCESSTRACE_HANDLE);
  EXPECT_EQ(l.LogfileHeader.EventsLost, 5u);
  EXPECT_EQ(reinterpret_cast<const char16_t*>(l.LogFileName), wide.c_str());  // Given back.
  EXPECT_EQ(ProcessTrace(&h, 1, nullptr, nullptr), static_cast<ULONG>(ERROR_SUCCESS));
  EXPECT_EQ(d.ids.size(), 5u);
  EXPECT_EQ(CloseTrace(h), static_cast<ULONG>(ERROR_SUCCESS));
}

}  // namespace

// OpenTrace reads a regular file only: a FIFO would block it, /dev/zero never ends, a directory
// is no file. Each is refused at once with the thread's last error set, as any OpenTrace failure.
TEST(EtlSynthetic, OnlyARegularFileIsOpenedAndFailuresSetTheLastError) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("etwrt-etl-open-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string fifo = (dir / "fifo.etl").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const auto open_status = [](const std::string& path) {
    EVENT_TRACE_LOGFILEA logfile{};
    std::string name = path;
    logfile.LogFileName = name.data();
    logfile.ProcessTraceMode = PROCESS_TRACE_MODE_EVENT_RECORD;
    SetLastError(ERROR_SUCCESS);
    const TRACEHANDLE h = OpenTraceA(&logfile);
    EXPECT_EQ(h, INVALID_PROCESSTRACE_HANDLE) << path;
    if (h != INVALID_PROCESSTRACE_HANDLE) CloseTrace(h);
    return GetLastError();
  };
  EXPECT_EQ(open_status(fifo), static_cast<DWORD>(ERROR_BAD_FORMAT));
  EXPECT_EQ(open_status("/dev/zero"), static_cast<DWORD>(ERROR_BAD_FORMAT));
  EXPECT_EQ(open_status(dir.string()), static_cast<DWORD>(ERROR_BAD_FORMAT));
  EXPECT_EQ(open_status((dir / "absent.etl").string()), static_cast<DWORD>(ERROR_FILE_NOT_FOUND));
  std::filesystem::remove_all(dir);
}
