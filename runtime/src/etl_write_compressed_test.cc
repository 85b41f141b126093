// EVENT_TRACE_COMPRESSED_MODE file sessions against a real broker: the logger writes layout 2.0
// (each data buffer's header, then its records compressed as MS-XCA's plain LZ77, the buffers
// one after the other), and every event reads back through the consumer API. The buffer chain
// is walked here by hand, the records decoded by the reader (whose decompressor shares no code
// with the logger's compressor).
#include "test_broker_home.h"
#include "test_check_layout.h"
#include "test_consumer.h"
#include "test_properties.h"

#include <windows.h>
#include <evntcons.h>
#include <evntprov.h>
#include <evntrace.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <stdio.h>
#include <sys/wait.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

using etwrt::testing::check_layout;
using etwrt::testing::PrivateBrokerHome;
using etwrt::testing::TraceProperties;

const GUID kProvider = {
    0x6a1d8b52, 0x3cae, 0x4d74, {0x90, 0x25, 0x7b, 0x31, 0xa4, 0xe8, 0x2f, 0x69}};

struct Read {
  ULONG events = 0, in_order = 0;
  bool header_first = false;
  ULONG next = 0;  // the payload index expected next
};

void WINAPI on_event(PEVENT_RECORD e) {
  auto& r = *static_cast<Read*>(e->UserContext);
  if (IsEqualGUID(e->EventHeader.ProviderId, EventTraceGuid) && r.events == 0) {
    r.header_first = true;
    return;
  }
  if (!IsEqualGUID(e->EventHeader.ProviderId, kProvider) || e->UserDataLength < 4) return;
  ULONG index = 0;
  std::memcpy(&index, e->UserData, 4);
  ++r.events;
  if (index == r.next) ++r.in_order;
  r.next = index + 1;
}

template <typename T>
T load(const std::vector<char>& d, std::size_t at) {
  T v;
  std::memcpy(&v, d.data() + at, sizeof v);
  return v;
}

// A compressed sequential session `name` writing `file` (with `extra_mode`, and
// MaximumFileSize `max_kb` when not 0) takes `events` events of 32 bytes, the first word their
// index, flushed every 500, then stops: how many EventWrite took and what the stop reported lost.
struct Logged {
  ULONG written = 0, lost = 0;
};
Logged log_compressed(const char* name, const std::string& file, ULONG extra_mode, ULONG max_kb,
                      ULONG events) {
  TraceProperties p;
  p.get()->LogFileMode =
      EVENT_TRACE_FILE_MODE_SEQUENTIAL | EVENT_TRACE_COMPRESSED_MODE | extra_mode;
  p.get()->MaximumFileSize = max_kb;
  p.get()->LogFileNameOffset = sizeof(EVENT_TRACE_PROPERTIES) + 512;
  std::memcpy(p.bytes.data() + p.get()->LogFileNameOffset, file.c_str(), file.size() + 1);
  p.get()->BufferSize = 16;  // KB
  p.get()->MinimumBuffers = 64;
  p.get()->MaximumBuffers = 64;
  Logged out;
  TRACEHANDLE h = 0;
  REGHANDLE reg = 0;
  EXPECT_EQ(StartTraceA(&h, name, p.get()), ERROR_SUCCESS);
  EXPECT_EQ(EventRegister(&kProvider, nullptr, nullptr, &reg), ERROR_SUCCESS);
  EXPECT_EQ(
      EnableTraceEx2(h, &kProvider, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 5, 0, 0, 10000, nullptr),
      ERROR_SUCCESS);
  EVENT_DESCRIPTOR d{};
  d.Id = 9;
  d.Level = 4;
  for (ULONG i = 0; i < events; ++i) {
    std::array<ULONG, 8> payload{};
    payload[0] = i;
    EVENT_DATA_DESCRIPTOR data;
    EventDataDescCreate(&data, payload.data(), sizeof payload);
    if (EventWrite(reg, &d, 1, &data) == ERROR_SUCCESS) ++out.written;  // refused: counted lost
    if (i % 500 == 499) ControlTraceA(h, nullptr, p.get(), EVENT_TRACE_CONTROL_FLUSH);
  }
  EventUnregister(reg);
  TraceProperties stop;
  EXPECT_EQ(ControlTraceA(0, name, stop.get(), EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
  out.lost = stop.get()->EventsLost;
  return out;
}

// The file played through OpenTrace/ProcessTrace; its header must report `lost` events lost.
Read read_back(const std::string& file, ULONG lost) {
  Read r;
  EVENT_TRACE_LOGFILEA l{};
  std::string name = file;
  TRACEHANDLE t = etwrt::testing::open_file(l, name, on_event, &r);
  EXPECT_NE(t, INVALID_PROCESSTRACE_HANDLE);
  if (t == INVALID_PROCESSTRACE_HANDLE) return r;
  EXPECT_EQ(l.LogfileHeader.EventsLost, lost);
  EXPECT_EQ(ProcessTrace(&t, 1, nullptr, nullptr), static_cast<ULONG>(ERROR_SUCCESS));
  CloseTrace(t);
  return r;
}

// The data buffers after the 16 KB header buffer, by their BufferSize (their length in the
// file): where the chain ends (a buffer that cannot be one ends it) and how many it holds.
struct Chain {
  std::size_t end = 16384, buffers = 0, compressed = 0;
};
Chain walk_chain(const std::vector<char>& bytes) {
  Chain c;
  while (c.end + 0x48 <= bytes.size()) {
    const auto size = load<std::uint32_t>(bytes, c.end);
    const auto offset = load<std::uint32_t>(bytes, c.end + 0x30);
    const auto flags = load<std::uint16_t>(bytes, c.end + 0x34);
    if (size < 0x48u || c.end + size > bytes.size()) break;
    EXPECT_LE(offset, 16384u);
    if ((flags & 0x40) != 0) ++c.compressed;
    ++c.buffers;
    c.end += size;
  }
  return c;
}

TEST(EtlWriteCompressed, EveryEventReadsBackFromLayout2Buffers) {
  PrivateBrokerHome home("etwrt-etlz");
  const std::string file = home.dir() + "/z.etl";
  constexpr ULONG kEvents = 20000;
  const Logged logged = log_compressed("etl-z", file, 0, 0, kEvents);
  const ULONG written = logged.written, lost = logged.lost;
  EXPECT_EQ(written + lost, kEvents);

  // The bytes: the header buffer (BufferSize, uncompressed, layout 2.0 and the mode in its
  // TRACE_LOGFILE_HEADER), then buffers whose BufferSize is their length in the file, each
  // flagged compressed (0x40) with its records ending (Offset) within the session's BufferSize.
  std::ifstream in(file, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
  ASSERT_GE(bytes.size(), 16384u);
  EXPECT_EQ(load<std::uint32_t>(bytes, 0), 16384u);
  const std::size_t header = 0x48 + 0x20;
  EXPECT_EQ(load<std::uint8_t>(bytes, header + 6), 2) << "layout 2.0";
  EXPECT_EQ(load<std::uint8_t>(bytes, header + 7), 0);
  EXPECT_NE(load<std::uint32_t>(bytes, header + 0x20) & EVENT_TRACE_COMPRESSED_MODE, 0u);
  const Chain chain = walk_chain(bytes);
  const std::size_t buffers = chain.buffers, compressed = chain.compressed;
  EXPECT_EQ(chain.end, bytes.size()) << "the buffers chain to the file's end";
  EXPECT_GT(buffers, 10u);
  EXPECT_EQ(compressed, buffers) << "trace records compress";
  EXPECT_LT(bytes.size(), 16384 + buffers * 16384 / 2) << "well under half the plain size";

  const auto checked = check_layout(file, {{"strict", true},
                                           {"logger_name", "etl-z"},
                                           {"log_file_name", file},
                                           {"buffer_size", 16384},
                                           {"events", written},
                                           {"events_lost", lost}});
  EXPECT_EQ(checked.status, 0) << checked.output;

  const Read r = read_back(file, lost);
  EXPECT_TRUE(r.header_first);
  EXPECT_EQ(r.events, written) << "every event in the file, none lost in the file";
  if (lost == 0) {
    EXPECT_EQ(r.in_order, r.events) << "in the order written";
  }
}

// MaximumFileSize is the file's size: a compressed file holds as many buffers as their
// compressed bytes allow (64 KB here: 3 uncompressed 16 KB buffers after the header, tens
// compressed), then counts the rest lost; every event is in the file or counted lost.
TEST(EtlWriteCompressed, MaximumFileSizeCountsTheCompressedBytes) {
  PrivateBrokerHome home("etwrt-etlzmax");
  const std::string file = home.dir() + "/zmax.etl";
  constexpr ULONG kEvents = 30000;
  const ULONG lost =
      log_compressed("etl-zmax", file, EVENT_TRACE_USE_KBYTES_FOR_SIZE, 64, kEvents).lost;
  EXPECT_GT(lost, 0u) << "the file filled up";

  std::ifstream in(file, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
  EXPECT_LE(bytes.size(), 64u * 1024) << "within MaximumFileSize";
  const Read r = read_back(file, lost);
  EXPECT_EQ(r.events + lost, kEvents) << "every event in the file or counted lost";
  // 3 uncompressed buffers of 16 KB hold 3 * 146 records of 112 bytes.
  EXPECT_GT(r.events, 10u * 146) << "the compressed buffers, not BufferSize, fill the file";
}

// PREALLOCATE (Logging Mode Constants page: "When you stop the session, the log file is reduced
// to the size needed"): a compressed file is cut to the bytes its buffers took, not to whole
// BufferSizes.
TEST(EtlWriteCompressed, APreallocatedFileIsReducedToTheCompressedBytesWritten) {
  PrivateBrokerHome home("etwrt-etlzpre");
  const std::string file = home.dir() + "/zpre.etl";
  constexpr ULONG kEvents = 5000;
  const Logged logged = log_compressed(
      "etl-zpre", file, EVENT_TRACE_FILE_MODE_PREALLOCATE | EVENT_TRACE_USE_KBYTES_FOR_SIZE, 1024,
      kEvents);
  ASSERT_EQ(logged.lost, 0u);
  std::ifstream in(file, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
  EXPECT_LT(bytes.size(), 1024u * 1024 / 4) << "reduced from the 1 MB reserved";
  const Chain chain = walk_chain(bytes);
  EXPECT_EQ(chain.end, bytes.size()) << "the last buffer ends the file";
  EXPECT_EQ(chain.compressed, chain.buffers);
  const auto checked =
      check_layout(file, {{"strict", true}, {"events", kEvents}, {"events_lost", 0}});
  EXPECT_EQ(checked.status, 0) << checked.output;
  EXPECT_EQ(read_back(file, 0).events, kEvents);
}

}  // namespace
