// Each record says which processor its writer ran on: what a consumer's BufferContext shows
// (ETW_BUFFER_CONTEXT page: ProcessorNumber is "The number of the CPU on which the provider
// process was running") and where a trace file puts the record (a buffer per processor).
#include <sys/rseq.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "dataplane_layout.h"
#include "etwrt/dataplane.h"
#include "evntcons.h"
#include "test_processors.h"
#include "test_records.h"

namespace etwrt::dataplane {
namespace {

// Run by ctest once as it is and once with glibc's rseq registration off
// (etwrt_dataplane_processor_without_rseq), where the processor comes from sched_getcpu.
TEST(DataplaneProcessor, EachRecordSaysTheProcessorItsWriterRanOn) {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables != nullptr &&
      std::string(tunables).find("glibc.pthread.rseq=0") != std::string::npos) {
    EXPECT_EQ(__rseq_size, 0u) << "this run is to take the path without rseq";
  }
  const std::vector<int> cpus = etwrt::testing::allowed_processors(8);
  ASSERT_FALSE(cpus.empty());
  if (cpus.size() == 1) std::printf("only processor %d is allowed: one is checked\n", cpus[0]);
  Pool pool = Pool::create(small_config(16, 2, 64), "processors");
  constexpr uint64_t kEach = 300;  // more than one buffer's worth
  for (size_t i = 0; i < cpus.size(); ++i) {
    bool pinned = false;
    std::thread writer([&] {
      pinned = etwrt::testing::pin_to(cpus[i]);
      if (!pinned) return;
      Writer w(pool);
      for (uint64_t seq = 0; seq < kEach; ++seq) write_seq(w, static_cast<uint32_t>(i), seq);
    });
    writer.join();
    ASSERT_TRUE(pinned) << "could not pin a thread to processor " << cpus[i];
  }
  Reader reader(pool);
  std::map<uint32_t, uint64_t> checked;  // per writer
  const auto check = [&](const RecordView& r) {
    const Payload p = payload_of(r);
    ASSERT_LT(p.writer, cpus.size());
    const int cpu = cpus[p.writer];
    EXPECT_EQ(r.processor, cpu) << "writer " << p.writer << " event " << p.seq;
    EventRecordOut out;
    size_t size = 0;
    ASSERT_TRUE(decode_event_record(r.encoded, out, size));
    EXPECT_EQ(out.record.BufferContext.ProcessorNumber, cpu);
    EXPECT_EQ(out.record.BufferContext.ProcessorIndex, cpu);
    EXPECT_EQ(out.record.EventHeader.Flags & EVENT_HEADER_FLAG_PROCESSOR_INDEX, 0);
    StoredRecord stored;
    ASSERT_TRUE(decode_stored_record(r.encoded, stored, size));
    uint16_t at_offset = 0;
    std::memcpy(&at_offset, stored.header + kStoredProcessor, sizeof at_offset);
    EXPECT_EQ(at_offset, cpu);
    ++checked[p.writer];
  };
  while (reader.poll(check, true) != 0) {
  }
  for (size_t i = 0; i < cpus.size(); ++i) EXPECT_EQ(checked[static_cast<uint32_t>(i)], kEach);
}

// A processor past 255 does not fit ProcessorNumber's byte: the index is given, and the flag
// that says to read it (GetEventProcessorIndex, evntcons.h).
TEST(DataplaneProcessor, AnIndexPast255IsGivenWithTheProcessorIndexFlag) {
  const EVENT_DESCRIPTOR desc{};
  EventInput in;
  in.provider_id = &kProvider;
  in.descriptor = &desc;
  for (const uint16_t processor :
       {uint16_t{0}, uint16_t{7}, uint16_t{255}, uint16_t{256}, uint16_t{300}, uint16_t{0xFFFF}}) {
    SCOPED_TRACE(processor);
    std::vector<std::byte> buffer(encoded_size(in));
    encode_record(in, 1, 2, 3, buffer.data(), processor);
    EventRecordOut out;
    size_t size = 0;
    ASSERT_TRUE(decode_event_record(buffer, out, size));
    EXPECT_EQ(out.record.BufferContext.ProcessorIndex, processor);
    EXPECT_EQ(out.record.EventHeader.Flags & EVENT_HEADER_FLAG_PROCESSOR_INDEX,
              processor > 255 ? EVENT_HEADER_FLAG_PROCESSOR_INDEX : 0);
    RecordView view;
    ASSERT_TRUE(decode_record(buffer, view, size));
    EXPECT_EQ(view.processor, processor);
  }
}

// The header's last two bytes are reserved (0): a record with anything there is not one this
// layout writes, and both decoders refuse it.
TEST(DataplaneProcessor, ARecordWhoseReservedFieldIsSetIsRefused) {
  const EVENT_DESCRIPTOR desc{};
  EventInput in;
  in.provider_id = &kProvider;
  in.descriptor = &desc;
  std::vector<std::byte> buffer(encoded_size(in));
  encode_record(in, 1, 2, 3, buffer.data(), 1);
  buffer[offsetof(RecordHeader, reserved) + 1] = std::byte{1};
  RecordView view;
  EventRecordOut out;
  size_t size = 0;
  EXPECT_FALSE(decode_record(buffer, view, size));
  EXPECT_FALSE(decode_event_record(buffer, out, size));
}

}  // namespace
}  // namespace etwrt::dataplane
