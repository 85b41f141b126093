// Tests of the data plane: record layout, pool configuration, writers (threads and
// processes), the reader's order and flush, exact loss accounting, and dead peers.
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <chrono>
#include <cstring>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "dataplane_layout.h"
#include "etwrt/dataplane.h"
#include "evntcons.h"
#include "test_records.h"

namespace etwrt::dataplane {
namespace {

constexpr GUID kActivity{0xaaaaaaaa, 0xbbbb, 0xcccc, {9, 8, 7, 6, 5, 4, 3, 2}};
constexpr GUID kRelated{0x12345678, 0x9abc, 0xdef0, {0x10, 0x20, 0x30, 0x40, 0, 0, 0, 1}};

// kProvider's event `desc` with both activity IDs (kActivity, kRelated) and the provider's
// traits: every extended item an event can carry but its schema.
EventInput with_every_id(const EVENT_DESCRIPTOR& desc, std::span<const std::byte> traits) {
  EventInput in;
  in.provider_id = &kProvider;
  in.descriptor = &desc;
  in.activity_id = &kActivity;
  in.related_activity_id = &kRelated;
  in.provider_traits = traits;
  return in;
}

// kProvider's event `desc` with nothing optional (no activity IDs, traits or data), encoded
// at time 5 by process 6, thread 7.
std::vector<std::byte> encoded_minimal(const EVENT_DESCRIPTOR& desc) {
  EventInput minimal;
  minimal.provider_id = &kProvider;
  minimal.descriptor = &desc;
  std::vector<std::byte> bytes(encoded_size(minimal));
  encode_record(minimal, 5, 6, 7, bytes.data());
  return bytes;
}

// The buffer a writer of the pool is filling (kNoBuffer: none), as recovery tests find it.
uint32_t writing_buffer(Pool::Shared& s) {
  uint32_t owned = kNoBuffer;
  for (uint32_t i = 0; i < s.allocated.load(); ++i)
    if (phase_of(s.descs()[i].state.load()) == kWriting) owned = i;
  return owned;
}

// Records 0 to 4 of writer 1, all committed to the buffer `w` still fills: that buffer
// (kNoBuffer when a write failed or no buffer is being filled).
uint32_t commit_five(Pool& pool, Writer& w) {
  for (uint64_t i = 0; i < 5; ++i) {
    if (write_seq(w, 1, i) != WriteResult::written) return kNoBuffer;
  }
  return writing_buffer(*pool.shared());
}

TEST(DataplaneRecordLayout, RoundTripKeepsEveryField) {
  EVENT_DESCRIPTOR desc{0x1234, 2, 11, 5, 1, 0x77, 0x8000000000000003ull};
  const std::byte traits[] = {std::byte{9},    std::byte{0}, std::byte{'a'},
                              std::byte{0},    std::byte{5}, std::byte{0},
                              std::byte{0x80}, std::byte{1}, std::byte{2}};
  const char part1[] = "hello";
  const uint32_t part2 = 0xdeadbeef;
  const EVENT_DATA_DESCRIPTOR data[] = {describe(part1, sizeof part1), describe(nullptr, 0),
                                        describe(&part2, sizeof part2)};
  EventInput in = with_every_id(desc, traits);
  in.user_data = data;
  const size_t size = encoded_size(in);
  ASSERT_EQ(size % 8, 0u);
  EXPECT_EQ(size, align8(80 + (8 + 16) + (8 + align8(sizeof traits)) + sizeof part1 + 4));
  std::vector<std::byte> buffer(size + 16, std::byte{0xee});
  encode_record(in, 123456789, 42, 43, buffer.data());
  EXPECT_EQ(buffer[size], std::byte{0xee}) << "wrote past its size";

  RecordView r;
  size_t record_size = 0;
  ASSERT_TRUE(decode_record(std::span(buffer.data(), size), r, record_size));
  EXPECT_EQ(record_size, size);
  EXPECT_TRUE(r.provider_id == kProvider);
  EXPECT_EQ(std::memcmp(&r.descriptor, &desc, sizeof desc), 0);
  EXPECT_EQ(r.timestamp_ns, 123456789u);
  EXPECT_EQ(r.process_id, 42u);
  EXPECT_EQ(r.thread_id, 43u);
  EXPECT_TRUE(r.activity_id == kActivity);
  EXPECT_TRUE(r.has_related_activity_id);
  EXPECT_TRUE(r.related_activity_id == kRelated);
  EXPECT_EQ(r.flags & EVENT_HEADER_FLAG_EXTENDED_INFO, EVENT_HEADER_FLAG_EXTENDED_INFO);
  ASSERT_EQ(r.provider_traits.size(), sizeof traits);
  EXPECT_EQ(std::memcmp(r.provider_traits.data(), traits, sizeof traits), 0);
  ASSERT_EQ(r.user_data.size(), sizeof part1 + sizeof part2);
  EXPECT_EQ(std::memcmp(r.user_data.data(), part1, sizeof part1), 0);
  EXPECT_EQ(std::memcmp(r.user_data.data() + sizeof part1, &part2, sizeof part2), 0);
  // `encoded` is the whole record: a copy of those bytes decodes to the same record (what the
  // consumer's hub keeps between the reader's poll and the callback).
  ASSERT_EQ(r.encoded.data(), buffer.data());
  ASSERT_EQ(r.encoded.size(), size);
  const std::vector<std::byte> copy(r.encoded.begin(), r.encoded.end());
  RecordView again;
  ASSERT_TRUE(decode_record(copy, again, record_size));
  EXPECT_EQ(again.timestamp_ns, r.timestamp_ns);
  EXPECT_TRUE(again.related_activity_id == kRelated);
  EXPECT_EQ(std::memcmp(again.user_data.data(), part1, sizeof part1), 0);

  // The view is reused from record to record: a minimal record after this one leaves none of
  // its optional parts behind.
  const std::vector<std::byte> small = encoded_minimal(desc);
  ASSERT_TRUE(decode_record(small, r, record_size));
  EXPECT_FALSE(r.has_related_activity_id);
  EXPECT_TRUE(r.related_activity_id == GUID{});
  EXPECT_TRUE(r.provider_traits.empty());
  EXPECT_TRUE(r.event_schema.empty());
  EXPECT_FALSE(r.has_timestamp_override);
  EXPECT_TRUE(r.user_data.empty());
  EXPECT_EQ(r.encoded.size(), small.size());
}

TEST(DataplaneRecordLayout, SchemaAndTimestampOverrideRoundTrip) {
  const EVENT_DESCRIPTOR desc{};
  const std::byte schema[] = {std::byte{5}, std::byte{0}, std::byte{0}, std::byte{'E'},
                              std::byte{0}};
  const uint64_t stamp = 0x0102030405060708ull;
  EventInput in;
  in.provider_id = &kProvider;
  in.descriptor = &desc;
  in.event_schema = schema;
  in.timestamp_override = &stamp;
  const size_t size = encoded_size(in);
  EXPECT_EQ(size, 80u + (8 + 8) + (8 + 8));
  std::vector<std::byte> buffer(size);
  encode_record(in, 77, 1, 2, buffer.data());
  RecordView r;
  size_t record_size = 0;
  ASSERT_TRUE(decode_record(buffer, r, record_size));
  EXPECT_EQ(r.timestamp_ns, 77u);  // the record's own stamp still orders delivery
  ASSERT_TRUE(r.has_timestamp_override);
  EXPECT_EQ(r.timestamp_override, stamp);
  ASSERT_EQ(r.event_schema.size(), sizeof schema);
  EXPECT_EQ(std::memcmp(r.event_schema.data(), schema, sizeof schema), 0);
  EXPECT_TRUE(r.provider_traits.empty());
}

TEST(DataplaneRecordLayout, MinimalRecordHasNoExtendedData) {
  const EVENT_DESCRIPTOR desc{};
  EventInput in;
  in.provider_id = &kProvider;
  in.descriptor = &desc;
  std::vector<std::byte> buffer(encoded_size(in));
  ASSERT_EQ(buffer.size(), 80u);
  encode_record(in, 1, 2, 3, buffer.data());
  RecordView r;
  size_t size = 0;
  ASSERT_TRUE(decode_record(buffer, r, size));
  EXPECT_FALSE(r.has_related_activity_id);
  EXPECT_TRUE(r.provider_traits.empty());
  EXPECT_TRUE(r.user_data.empty());
  EXPECT_EQ(r.flags & EVENT_HEADER_FLAG_EXTENDED_INFO, 0);
  EXPECT_TRUE(r.activity_id == GUID{});
}

TEST(DataplaneRecordLayout, DecodeRejectsInconsistentLengths) {
  const EVENT_DESCRIPTOR desc{};
  const uint64_t value = 5;
  const EVENT_DATA_DESCRIPTOR data = describe(&value, sizeof value);
  EventInput in;
  in.provider_id = &kProvider;
  in.descriptor = &desc;
  in.related_activity_id = &kRelated;
  in.user_data = std::span(&data, 1);
  std::vector<std::byte> buffer(encoded_size(in));
  encode_record(in, 1, 2, 3, buffer.data());
  RecordView r;
  size_t size = 0;
  // Truncated: fewer bytes than the record says.
  EXPECT_FALSE(decode_record(std::span(buffer.data(), buffer.size() - 8), r, size));
  // A size that is not a multiple of 8.
  std::vector<std::byte> bad = buffer;
  bad[0] = std::byte{static_cast<unsigned char>(buffer.size() - 1)};
  EXPECT_FALSE(decode_record(bad, r, size));
  // User data claiming more than the record holds.
  bad = buffer;
  const uint32_t huge = 4096;
  std::memcpy(bad.data() + offsetof(RecordHeader, user_data_size), &huge, sizeof huge);
  EXPECT_FALSE(decode_record(bad, r, size));
  // An extended item of an unknown type.
  bad = buffer;
  bad[80] = std::byte{0x42};
  EXPECT_FALSE(decode_record(bad, r, size));
  EXPECT_TRUE(decode_record(buffer, r, size));
}

// decode_event_record fills what a consumer's EventRecordCallback gets straight from the
// record's bytes: every header field, the visible items in their order (the override is no
// item: it replaces TimeStamp, which the caller converts), UserData into the record.
TEST(DataplaneRecordLayout, EventRecordDecodeFillsEveryField) {
  EVENT_DESCRIPTOR desc{0x1234, 2, 11, 5, 1, 0x77, 0x8000000000000003ull};
  const std::byte traits[] = {std::byte{9}, std::byte{0}, std::byte{'a'}, std::byte{0}};
  const std::byte schema[] = {std::byte{5}, std::byte{0}, std::byte{0}, std::byte{'E'},
                              std::byte{0}};
  const uint64_t stamp = 0x0102030405060708ull;
  const char part[] = "hello";
  const EVENT_DATA_DESCRIPTOR data = describe(part, sizeof part);
  EventInput in = with_every_id(desc, traits);
  in.event_schema = schema;
  in.timestamp_override = &stamp;
  in.user_data = std::span(&data, 1);
  std::vector<std::byte> buffer(encoded_size(in));
  encode_record(in, 123456789, 42, 43, buffer.data());

  EventRecordOut out;
  std::memset(&out, 0xee, sizeof out);  // Nothing may be left from before.
  size_t size = 0;
  ASSERT_TRUE(decode_event_record(buffer, out, size));
  EXPECT_EQ(size, buffer.size());
  const EVENT_RECORD& r = out.record;
  const EVENT_HEADER& h = r.EventHeader;
  EXPECT_EQ(h.Size, sizeof(EVENT_HEADER));
  EXPECT_EQ(h.HeaderType, 0);
  EXPECT_EQ(h.Flags, EVENT_HEADER_FLAG_64_BIT_HEADER | EVENT_HEADER_FLAG_EXTENDED_INFO);
  EXPECT_EQ(h.EventProperty, 0);
  EXPECT_EQ(h.ProcessId, 42u);
  EXPECT_EQ(h.ThreadId, 43u);
  EXPECT_EQ(h.TimeStamp.QuadPart, 123456789);
  EXPECT_TRUE(h.ProviderId == kProvider);
  EXPECT_EQ(std::memcmp(&h.EventDescriptor, &desc, sizeof desc), 0);
  EXPECT_EQ(h.ProcessorTime, 0u);
  EXPECT_TRUE(h.ActivityId == kActivity);
  EXPECT_EQ(r.BufferContext.ProcessorIndex, 0);
  EXPECT_EQ(r.BufferContext.LoggerId, 0);
  EXPECT_EQ(r.UserContext, nullptr);
  ASSERT_EQ(r.ExtendedDataCount, 3);
  ASSERT_EQ(r.ExtendedData, out.items);
  const USHORT types[] = {EVENT_HEADER_EXT_TYPE_RELATED_ACTIVITYID,
                          EVENT_HEADER_EXT_TYPE_PROV_TRAITS, EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL};
  const size_t sizes[] = {sizeof(GUID), sizeof traits, sizeof schema};
  const void* contents[] = {&kRelated, traits, schema};
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    const EVENT_HEADER_EXTENDED_DATA_ITEM& item = r.ExtendedData[i];
    EXPECT_EQ(item.ExtType, types[i]);
    EXPECT_EQ(item.Reserved1, 0);
    ASSERT_EQ(item.DataSize, sizes[i]);
    const auto* p = reinterpret_cast<const std::byte*>(item.DataPtr);
    EXPECT_TRUE(p > buffer.data() && p + sizes[i] <= buffer.data() + buffer.size());
    EXPECT_EQ(std::memcmp(p, contents[i], sizes[i]), 0);
  }
  EXPECT_TRUE(out.has_timestamp_override);
  EXPECT_EQ(out.timestamp_override, stamp);
  ASSERT_EQ(r.UserDataLength, sizeof part);
  EXPECT_EQ(out.user_data_size, sizeof part);
  EXPECT_EQ(std::memcmp(r.UserData, part, sizeof part), 0);

  // Reused for a minimal record: none of the optional parts stays behind.
  const std::vector<std::byte> small = encoded_minimal(desc);
  ASSERT_TRUE(decode_event_record(small, out, size));
  EXPECT_EQ(out.record.EventHeader.Flags, EVENT_HEADER_FLAG_64_BIT_HEADER);
  EXPECT_EQ(out.record.ExtendedDataCount, 0);
  EXPECT_EQ(out.record.ExtendedData, nullptr);
  EXPECT_FALSE(out.has_timestamp_override);
  EXPECT_EQ(out.record.UserDataLength, 0);
  EXPECT_TRUE(out.record.EventHeader.ActivityId == GUID{});
}

// A timestamp override is carried as an item in the pool but is none in the EVENT_RECORD: with
// no other item, no EXTENDED_INFO (EVENT_HEADER page: the flag means "The ExtendedData member
// of EVENT_RECORD contains data").
TEST(DataplaneRecordLayout, EventRecordOfAnOverrideAloneHasNoExtendedInfo) {
  const EVENT_DESCRIPTOR desc{};
  const uint64_t stamp = 99;
  EventInput in;
  in.provider_id = &kProvider;
  in.descriptor = &desc;
  in.timestamp_override = &stamp;
  std::vector<std::byte> buffer(encoded_size(in));
  encode_record(in, 5, 6, 7, buffer.data());
  EventRecordOut out;
  size_t size = 0;
  ASSERT_TRUE(decode_event_record(buffer, out, size));
  EXPECT_EQ(out.record.EventHeader.Flags, EVENT_HEADER_FLAG_64_BIT_HEADER);
  EXPECT_EQ(out.record.ExtendedDataCount, 0);
  EXPECT_EQ(out.record.ExtendedData, nullptr);
  ASSERT_TRUE(out.has_timestamp_override);
  EXPECT_EQ(out.timestamp_override, stamp);
}

// The encoder writes each item at most once, in one order: both decoders refuse anything else
// (a record that would otherwise hand a consumer two related activity IDs, or none of either).
TEST(DataplaneRecordLayout, DecodeRejectsItemsRepeatedOrOutOfOrder) {
  const EVENT_DESCRIPTOR desc{};
  const std::byte traits[16] = {std::byte{16}};  // As long as a GUID: the items can swap types.
  EventInput in = with_every_id(desc, traits);
  std::vector<std::byte> buffer(encoded_size(in));
  encode_record(in, 1, 2, 3, buffer.data());
  const size_t first = 80;
  const size_t second = 80 + 8 + 16;
  const auto set_type = [](std::vector<std::byte>& b, size_t at, uint16_t type) {
    std::memcpy(b.data() + at + offsetof(ExtItemHeader, ext_type), &type, sizeof type);
  };
  RecordView view;
  EventRecordOut out;
  size_t size = 0;
  ASSERT_TRUE(decode_record(buffer, view, size));
  ASSERT_TRUE(decode_event_record(buffer, out, size));
  std::vector<std::byte> swapped = buffer;
  set_type(swapped, first, EVENT_HEADER_EXT_TYPE_PROV_TRAITS);
  set_type(swapped, second, EVENT_HEADER_EXT_TYPE_RELATED_ACTIVITYID);
  EXPECT_FALSE(decode_record(swapped, view, size));
  EXPECT_FALSE(decode_event_record(swapped, out, size));
  std::vector<std::byte> repeated = buffer;
  set_type(repeated, second, EVENT_HEADER_EXT_TYPE_RELATED_ACTIVITYID);
  EXPECT_FALSE(decode_record(repeated, view, size));
  EXPECT_FALSE(decode_event_record(repeated, out, size));
}

TEST(DataplanePoolConfigValidation, RejectsEachBadValueByName) {
  const auto message = [](const PoolConfig& c) {
    try {
      Pool::create(c, "bad");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(small_config(0, 1, 1)).find("BufferSize"), std::string::npos);
  EXPECT_NE(message(small_config(1, 0, 1)).find("MinimumBuffers"), std::string::npos);
  EXPECT_NE(message(small_config(1, 4, 2)).find("less than MinimumBuffers"), std::string::npos);
  EXPECT_NE(message(small_config(1, 1, 70000)).find("exceeds"), std::string::npos);
}

TEST(DataplanePoolAttach, SharesStateThroughTheFdAndRejectsForeignFds) {
  Pool pool = Pool::create(small_config(4, 2, 8), "attach");
  Pool peer = Pool::attach(pool.fd());
  EXPECT_EQ(peer.config().maximum_buffers, 8u);
  EXPECT_EQ(peer.buffer_bytes(), 4096u);
  {
    Writer w(peer);
    ASSERT_EQ(write_seq(w, 1, 0), WriteResult::written);
  }
  Reader reader(pool);
  Collector col;
  drain(reader, col);
  EXPECT_EQ(col.count, 1u);

  const int foreign = memfd_create("foreign", MFD_CLOEXEC);
  ASSERT_GE(foreign, 0);
  ASSERT_EQ(ftruncate(foreign, 1 << 16), 0);
  try {
    Pool::attach(foreign);
    ADD_FAILURE() << "attached a zero-filled memfd";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("magic"), std::string::npos) << e.what();
  }
  close(foreign);
}

TEST(DataplaneWriter, SingleThreadDeliversEverythingInOrder) {
  Pool pool = Pool::create(small_config(16, 2, 64), "single");
  constexpr uint64_t kEvents = 5000;
  {
    Writer w(pool);
    for (uint64_t i = 0; i < kEvents; ++i) ASSERT_EQ(write_seq(w, 1, i), WriteResult::written);
  }
  const Counters before = pool.query();
  EXPECT_EQ(before.events_committed, kEvents);
  EXPECT_GT(before.number_of_buffers, 2u) << "should have grown past MinimumBuffers";
  EXPECT_EQ(before.buffers_written, before.number_of_buffers - before.free_buffers);
  Reader reader(pool);
  Collector col;
  drain(reader, col);
  ASSERT_EQ(col.count, kEvents);
  for (uint64_t i = 0; i < kEvents; ++i) ASSERT_EQ(col.seqs[1][i], i);
  EXPECT_EQ(reader.order_inversions(), 0u);
  const Counters after = pool.query();
  EXPECT_EQ(after.free_buffers, after.number_of_buffers) << "reader must free what it read";
  expect_balanced(pool, kEvents);
}

TEST(DataplaneWriter, TooLargeEventIsCountedAsLost) {
  Pool pool = Pool::create(small_config(1, 1, 2), "large");
  Writer w(pool);
  std::vector<std::byte> big(2000);
  const EVENT_DESCRIPTOR desc{};
  const EVENT_DATA_DESCRIPTOR data = describe(big.data(), static_cast<uint32_t>(big.size()));
  EventInput in;
  in.provider_id = &kProvider;
  in.descriptor = &desc;
  in.user_data = std::span(&data, 1);
  EXPECT_EQ(w.write(in), WriteResult::too_large);
  EXPECT_EQ(pool.query().events_lost, 1u);
}

// One event to several sessions (EventWrite): encoded once into the first pool, then copied.
// Each pool must deliver every field the encoding wrote, the one timestamp, and balance; a
// copy that does not fit (a pool with smaller buffers) is counted lost in that pool alone.
TEST(DataplaneWriter, CopiedRecordIsDeliveredAsEncodedInEveryPool) {
  Pool first = Pool::create(small_config(64, 2, 8), "copy-first");
  Pool second = Pool::create(small_config(64, 2, 8), "copy-second");
  Pool tiny = Pool::create(small_config(1, 1, 2), "copy-tiny");
  ASSERT_TRUE(second.clock_key() == first.clock_key());
  const std::byte traits[] = {std::byte{4}, std::byte{0}, std::byte{'p'}, std::byte{0}};
  static constexpr EVENT_DESCRIPTOR desc{9, 2, 11, 3, 12, 13, 0x8000000000000001ull};
  constexpr uint64_t kEvents = 300;  // several buffers of `second`: the copy's slow path too
  std::vector<std::byte> big(1000);  // too large for `tiny`'s 1 KB buffers
  {
    Writer w1(first);
    Writer w2(second);
    Writer w3(tiny);
    for (uint64_t i = 0; i < kEvents; ++i) {
      Payload payload{5, 0, i, {i, ~i}};
      EVENT_DATA_DESCRIPTOR data[2] = {describe(&payload, sizeof payload),
                                       describe(big.data(), i % 2 == 0 ? 0u : 1000u)};
      EventInput in = with_every_id(desc, traits);
      in.user_data = std::span<const EVENT_DATA_DESCRIPTOR>(data, 2);
      const uint64_t stamp = first.now_ns();
      ASSERT_EQ(w1.write(in, stamp), WriteResult::written);
      const std::span<const std::byte> encoded = w1.last_record();
      ASSERT_EQ(encoded.size(), encoded_size(in));
      ASSERT_EQ(w2.write_copy(encoded), WriteResult::written);
      if (i % 2 != 0) {
        ASSERT_EQ(w3.write_copy(encoded), WriteResult::too_large);
      }
    }
  }
  std::vector<std::vector<uint64_t>> stamps;  // per pool, in delivery order
  for (Pool* pool : {&first, &second}) {
    Reader reader(*pool);
    std::vector<RecordView> seen;
    std::vector<std::vector<std::byte>> payloads;
    while (reader.poll(
               [&](const RecordView& r) {
                 seen.push_back(r);
                 payloads.emplace_back(r.user_data.begin(), r.user_data.end());
               },
               true) != 0) {
    }
    ASSERT_EQ(seen.size(), kEvents);
    for (uint64_t i = 0; i < kEvents; ++i) {
      const RecordView& r = seen[i];
      EXPECT_EQ(std::memcmp(&r.descriptor, &desc, sizeof desc), 0);
      EXPECT_EQ(std::memcmp(&r.provider_id, &kProvider, sizeof(GUID)), 0);
      EXPECT_EQ(std::memcmp(&r.activity_id, &kActivity, sizeof(GUID)), 0);
      EXPECT_TRUE(r.has_related_activity_id);
      EXPECT_EQ(r.process_id, static_cast<uint32_t>(getpid()));
      ASSERT_EQ(payloads[i].size(), sizeof(Payload) + (i % 2 == 0 ? 0 : 1000));
      Payload p;
      std::memcpy(&p, payloads[i].data(), sizeof p);
      EXPECT_EQ(p.seq, i);
      EXPECT_EQ(p.filler[1], ~i);
    }
    stamps.emplace_back();
    for (const RecordView& r : seen) stamps.back().push_back(r.timestamp_ns);
    expect_balanced(*pool, kEvents);
  }
  EXPECT_EQ(stamps[0], stamps[1]) << "one clock reading stamps the event in both sessions";
  const Counters small = tiny.query();
  EXPECT_EQ(small.events_lost, kEvents / 2);
  EXPECT_EQ(small.events_committed, 0u);
}

TEST(DataplaneWriter, ThreadsWithConcurrentReaderBalanceExactly) {
  Pool pool = Pool::create(small_config(4, 2, 16), "threads");
  constexpr int kThreads = 3;
  constexpr uint64_t kEvents = 40000;
  std::atomic<int> done{0};
  Collector col;
  std::atomic<uint64_t> written{0};
  {
    Reader reader(pool, ReaderOptions{.eager_partial = true});
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        Writer w(pool);
        uint64_t ok = 0;
        for (uint64_t i = 0; i < kEvents; ++i) ok += write_seq(w, t, i) == WriteResult::written;
        written += ok;
        w.release();
        ++done;
      });
    }
    while (done.load() < kThreads) reader.poll(col.callback());
    for (auto& t : threads) t.join();
    drain(reader, col);
  }
  col.expect_per_writer_increasing();
  EXPECT_EQ(col.count, pool.query().events_delivered);
  EXPECT_EQ(written.load(), pool.query().events_committed);
  expect_balanced(pool, kThreads * kEvents);
}

TEST(DataplaneWriter, ForkedProcessesShareOnePool) {
  Pool pool = Pool::create(small_config(64, 2, 64), "fork");
  constexpr int kChildren = 2;
  constexpr uint64_t kEvents = 50000;
  // Attached before the children exist, so that they never write without a consumer.
  Reader reader(pool, ReaderOptions{.eager_partial = true});
  std::map<uint32_t, uint32_t> writer_of_pid;
  std::vector<pid_t> children;
  for (int c = 0; c < kChildren; ++c) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // Its own mapping from the fd, at another address: the pool holds no pointers.
      Pool mine = Pool::attach(pool.fd());
      if (mine.shared() == pool.shared()) _exit(3);
      Writer w(mine);
      for (uint64_t i = 0; i < kEvents; ++i) write_seq(w, 100 + c, i);
      w.release();
      _exit(0);
    }
    children.push_back(pid);
    writer_of_pid[static_cast<uint32_t>(pid)] = 100 + c;
  }
  Collector col;
  uint64_t wrong_pid = 0;
  const auto callback = [&](const RecordView& r) {
    const auto it = writer_of_pid.find(r.process_id);
    if (it == writer_of_pid.end() || it->second != payload_of(r).writer) ++wrong_pid;
    col.callback()(r);
  };
  size_t exited = 0;
  while (exited < children.size()) {
    reader.poll(callback);
    int status = 0;
    for (pid_t& pid : children) {
      if (pid > 0 && waitpid(pid, &status, WNOHANG) == pid) {
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        pid = -1;
        ++exited;
      }
    }
  }
  while (reader.poll(callback, true) != 0) {
  }
  EXPECT_EQ(wrong_pid, 0u) << "records must carry their writer's process id";
  col.expect_per_writer_increasing();
  EXPECT_EQ(col.count, pool.query().events_delivered);
  expect_balanced(pool, kChildren * kEvents);
  EXPECT_EQ(pool.query().writer_recoveries, 0u);
  const Counters c = pool.query();
  if (c.events_lost == 0 && c.realtime_events_lost == 0) {
    EXPECT_EQ(col.seqs[100].size(), kEvents);
    EXPECT_EQ(col.seqs[101].size(), kEvents);
  }
}

TEST(DataplaneLoss, NoConsumerKeepsEventsUntilFullThenLosesNewOnes) {
  Pool pool = Pool::create(small_config(1, 1, 3), "noconsumer");
  constexpr uint64_t kEvents = 200;
  uint64_t written = 0, lost = 0;
  Writer w(pool);
  for (uint64_t i = 0; i < kEvents; ++i) {
    const WriteResult r = write_seq(w, 1, i);
    written += r == WriteResult::written;
    lost += r == WriteResult::lost;
  }
  w.release();
  ASSERT_GT(lost, 0u) << "a 3 KB pool must overflow";
  const Counters c = pool.query();
  EXPECT_EQ(c.events_lost, lost);
  EXPECT_EQ(c.realtime_buffers_lost, 0u) << "nothing is reclaimed without a consumer";
  EXPECT_EQ(c.number_of_buffers, 3u);
  EXPECT_EQ(c.free_buffers, 0u);
  Reader reader(pool);
  Collector col;
  drain(reader, col);
  // The first events were kept, the later ones lost: delivery is exactly 0..written-1.
  ASSERT_EQ(col.count, written);
  for (uint64_t i = 0; i < written; ++i) ASSERT_EQ(col.seqs[1][i], i);
  expect_balanced(pool, kEvents);
  // The writer that found no buffer notices the ones the reader freed.
  EXPECT_EQ(write_seq(w, 1, kEvents), WriteResult::written);
}

TEST(DataplaneLoss, SlowConsumerLosesWholeBuffersAndTheCountBalances) {
  Pool pool = Pool::create(small_config(1, 2, 4), "slow");
  Reader reader(pool);
  Collector col;
  LossReport reported;
  uint64_t reports = 0;
  const Reader::LossCallback on_loss = [&](const LossReport& r) {
    EXPECT_TRUE(r.realtime_buffers_lost != 0 || r.realtime_events_lost != 0 || r.events_lost != 0)
        << "a report without loss";
    reported.realtime_buffers_lost += r.realtime_buffers_lost;
    reported.realtime_events_lost += r.realtime_events_lost;
    reported.events_lost += r.events_lost;
    ++reports;
  };
  constexpr uint64_t kEvents = 3000;
  {
    Writer w(pool);
    for (uint64_t i = 0; i < kEvents; ++i) {
      ASSERT_EQ(write_seq(w, 1, i), WriteResult::written) << "realtime reclaims, never drops";
      // The consumer takes one batch now and then: far slower than the writer.
      if (i % 500 == 499) reader.poll(col.callback(), false, on_loss);
    }
  }
  while (reader.poll(col.callback(), true, on_loss) != 0) {
  }
  reader.poll(col.callback(), true, on_loss);  // reports what the drain itself saw
  const Counters c = pool.query();
  EXPECT_GT(c.realtime_buffers_lost, 0u);
  EXPECT_GT(c.realtime_events_lost, 0u);
  EXPECT_EQ(c.events_lost, 0u);
  EXPECT_EQ(col.count, c.events_delivered);
  col.expect_per_writer_increasing();
  // The newest events survive a reclaim: the last one written is delivered.
  EXPECT_EQ(col.seqs[1].back(), kEvents - 1);
  expect_balanced(pool, kEvents);
  // Every loss was announced to the consumer, exactly.
  EXPECT_GT(reports, 0u);
  EXPECT_EQ(reported.realtime_buffers_lost, c.realtime_buffers_lost);
  EXPECT_EQ(reported.realtime_events_lost, c.realtime_events_lost);
  EXPECT_EQ(reported.events_lost, c.events_lost);
}

TEST(DataplaneLoss, NonRealtimeSessionWithSlowConsumerLosesNewEvents) {
  Pool pool = Pool::create(small_config(1, 2, 2, /*realtime=*/false), "file");
  Reader reader(pool);
  Collector col;
  constexpr uint64_t kEvents = 1000;
  uint64_t lost = 0;
  Writer w(pool);
  for (uint64_t i = 0; i < kEvents; ++i) lost += write_seq(w, 1, i) == WriteResult::lost;
  EXPECT_GT(lost, 0u);
  // Only the reader freeing buffers can end the writer's drought (it attached before).
  drain(reader, col);
  EXPECT_EQ(write_seq(w, 1, kEvents), WriteResult::written);
  w.release();
  drain(reader, col);
  EXPECT_EQ(pool.query().realtime_buffers_lost, 0u);
  expect_balanced(pool, kEvents + 1);
}

TEST(DataplaneReader, MergesWritersInTimestampOrder) {
  Pool pool = Pool::create(small_config(32, 4, 64), "order");
  constexpr int kThreads = 3;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Writer w(pool);
      for (uint64_t i = 0; i < 3000; ++i) write_seq(w, t, i);
    });
  }
  for (auto& t : threads) t.join();
  Reader reader(pool);
  Collector col;
  drain(reader, col);
  ASSERT_EQ(col.count, kThreads * 3000u);
  for (size_t i = 1; i < col.timestamps.size(); ++i)
    ASSERT_LE(col.timestamps[i - 1], col.timestamps[i]) << "at " << i;
  EXPECT_EQ(reader.order_inversions(), 0u);
}

TEST(DataplaneReader, TakingOneBufferPerPollKeepsTimestampOrder) {
  Pool pool = Pool::create(small_config(16, 4, 128), "order-limited");
  constexpr int kThreads = 3;
  constexpr uint64_t kEvents = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Writer w(pool);
      for (uint64_t i = 0; i < kEvents; ++i) write_seq(w, t, i);
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_EQ(pool.query().events_lost, 0u) << "the pool must hold every event";
  ReaderOptions options;
  options.max_claim_per_poll = 1;
  Reader reader(pool, options);
  Collector col;
  // A poll may deliver nothing (what it took is newer than a buffer it left), but each one
  // takes the oldest remaining buffer, so this ends well before the bound.
  for (int polls = 0; polls < 100000 && col.count < kThreads * kEvents; ++polls)
    reader.poll(col.callback());
  ASSERT_EQ(col.count, kThreads * kEvents);
  for (size_t i = 1; i < col.timestamps.size(); ++i)
    ASSERT_LE(col.timestamps[i - 1], col.timestamps[i]) << "at " << i;
  EXPECT_EQ(reader.order_inversions(), 0u);
  col.expect_per_writer_increasing();
}

// A record inside committed data that does not frame (its size) or does not decode (a length
// past its end): the records before it are delivered; it and the rest of its buffer's commit
// are skipped and counted lost (one RealTimeBuffersLost, announced at the next poll), never
// guessed at; the accounting identity holds.
TEST(DataplaneReader, CorruptRecordEndsItsBufferCountedLost) {
  for (const bool framing : {true, false}) {
    SCOPED_TRACE(framing ? "size field" : "user data length");
    Pool pool = Pool::create(small_config(4, 2, 4), "corrupt");
    Writer w(pool);
    const uint32_t owned = commit_five(pool, w);
    ASSERT_NE(owned, kNoBuffer);
    Pool::Shared& s = *pool.shared();
    const uint32_t record = 80 + sizeof(Payload);
    ASSERT_EQ(bytes_of(s.descs()[owned].commit.load()), 5 * record);
    std::byte* third = s.data(owned) + 2 * record;
    const uint32_t bad = framing ? 7 : 4096;
    std::memcpy(
        third + (framing ? offsetof(RecordHeader, size) : offsetof(RecordHeader, user_data_size)),
        &bad, sizeof bad);
    w.release();
    Reader reader(pool);
    Collector col;
    LossReport lost;
    const Reader::LossCallback on_loss = [&](const LossReport& l) {
      lost.realtime_buffers_lost += l.realtime_buffers_lost;
      lost.realtime_events_lost += l.realtime_events_lost;
      lost.events_lost += l.events_lost;
    };
    while (reader.poll(col.callback(), true, on_loss) != 0) {
    }
    EXPECT_EQ(col.seqs[1], (std::vector<uint64_t>{0, 1}));
    EXPECT_EQ(reader.corrupt_buffers(), 1u);
    EXPECT_EQ(lost.realtime_buffers_lost, 1u);
    EXPECT_EQ(lost.realtime_events_lost, 3u);
    EXPECT_EQ(lost.events_lost, 0u);
    expect_balanced(pool, 5);
  }
}

TEST(DataplaneReader, PartialBuffersOnlyOnFlushWhileTheWriterKeepsWriting) {
  Pool pool = Pool::create(small_config(64, 2, 4), "flush");
  Writer w(pool);
  Reader reader(pool);
  Collector col;
  for (uint64_t i = 0; i < 3; ++i) ASSERT_EQ(write_seq(w, 1, i), WriteResult::written);
  EXPECT_EQ(reader.poll(col.callback()), 0u) << "no flush yet: the buffer is not full";
  pool.request_flush();
  EXPECT_EQ(reader.poll(col.callback()), 3u);
  // The writer still owns the buffer and appends after what was read.
  for (uint64_t i = 3; i < 5; ++i) ASSERT_EQ(write_seq(w, 1, i), WriteResult::written);
  EXPECT_EQ(reader.poll(col.callback()), 2u) << "a pinned buffer keeps being read";
  w.release();
  EXPECT_EQ(reader.poll(col.callback()), 0u);
  ASSERT_EQ(col.seqs[1], (std::vector<uint64_t>{0, 1, 2, 3, 4}));
  const Counters c = pool.query();
  EXPECT_EQ(c.free_buffers, c.number_of_buffers) << "the handed-off buffer is freed once read";
  EXPECT_EQ(c.buffers_written, 1u);
}

// A reader right behind a streaming writer takes back each line the writer goes on to write
// (README "Reading behind a streaming writer"): after a poll of at least streaming_records, and
// for the window after it, records younger than the margin wait. Margin and window are long
// here so that the polls' own timing cannot matter; etwrt's realtime reader uses 10 us.
TEST(DataplaneReader, AStreamingWriterIsReadFromBehindAModerateOneAtOnce) {
  using std::chrono::milliseconds;
  Pool pool = Pool::create(small_config(64, 2, 4), "streaming");
  Writer w(pool);
  ReaderOptions options;
  options.eager_partial = true;
  options.streaming_hold_back_ns = 200'000'000;
  options.streaming_records = 16;
  options.streaming_window_ns = 600'000'000;
  Reader reader(pool, options);
  Collector col;
  uint64_t seq = 0;
  const auto write = [&](int n) {
    for (int i = 0; i < n; ++i) ASSERT_EQ(write_seq(w, 1, seq++), WriteResult::written);
  };
  write(3);
  EXPECT_EQ(reader.poll(col.callback()), 3u) << "a moderate stream is read as committed";
  write(20);
  const auto stream_seen = std::chrono::steady_clock::now();
  EXPECT_EQ(reader.poll(col.callback()), 20u) << "the poll that finds the stream takes it all";
  write(1);
  EXPECT_EQ(reader.poll(col.callback()), 0u) << "from now on, records this young wait";
  std::this_thread::sleep_for(milliseconds(250));
  EXPECT_EQ(reader.poll(col.callback()), 1u) << "older than the margin: delivered";
  write(1);
  EXPECT_EQ(reader.poll(col.callback(), true), 1u) << "a flush takes everything";
  std::this_thread::sleep_until(stream_seen + milliseconds(650));
  write(1);
  EXPECT_EQ(reader.poll(col.callback()), 1u) << "the window ended: read as committed again";
  ASSERT_EQ(col.count, 26u);
  col.expect_per_writer_increasing();
}

// A reader behind its writer (more buffers Full than it takes per poll) with a margin: the
// margin keeps it behind the present, not behind the buffers it left Full, so each poll reads
// the buffers it took to their end and frees them. Taken from the Full buffers' first record
// too, it left every record within the margin of them unread, and those buffers held.
TEST(DataplaneReader, AReaderBehindFinishesWhatItTakesWhateverItsMargin) {
  using std::chrono::milliseconds;
  Pool pool = Pool::create(small_config(1, 8, 8), "behind");
  Writer w(pool);
  uint64_t seq = 0;
  while (pool.query().buffers_written < 6) ASSERT_EQ(write_seq(w, 1, seq++), WriteResult::written);
  std::this_thread::sleep_for(milliseconds(250));  // every record older than both margins
  ReaderOptions options;
  options.eager_partial = true;
  options.hold_back_ns = 100'000'000;
  options.streaming_hold_back_ns = 100'000'000;
  options.max_claim_per_poll = 2;
  Reader reader(pool, options);
  Collector col;
  const uint32_t free_before = pool.query().free_buffers;
  const size_t per_buffer = 1024 / (80 + sizeof(Payload));
  EXPECT_EQ(reader.poll(col.callback()), 2 * per_buffer) << "the two oldest buffers, all read";
  EXPECT_EQ(pool.query().free_buffers, free_before + 2) << "and freed";
  EXPECT_EQ(reader.poll(col.callback()), 2 * per_buffer);
  EXPECT_EQ(pool.query().free_buffers, free_before + 4);
  w.release();
  drain(reader, col);
  ASSERT_EQ(col.count, seq);
  col.expect_per_writer_increasing();
  expect_balanced(pool, seq);
}

TEST(DataplaneReader, FlushTimerDeliversPartialBuffersWithoutRequest) {
  PoolConfig config = small_config(64, 2, 4);
  config.flush_timer_s = 1;
  Pool pool = Pool::create(config, "timer");
  Writer w(pool);
  Reader reader(pool);
  Collector col;
  ASSERT_EQ(write_seq(w, 1, 0), WriteResult::written);
  // Bounded wait (not a timing assertion): the timer must fire within a generous limit.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (col.count == 0 && std::chrono::steady_clock::now() < deadline) {
    reader.poll(col.callback());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(col.count, 1u);
}

TEST(DataplaneReader, SecondLiveReaderIsRefused) {
  Pool pool = Pool::create(small_config(4, 2, 4), "tworeaders");
  Reader first(pool);
  EXPECT_THROW(Reader second(pool), Error);
}

// The idle reader sleeps on the pool's futex; the writer that commits next wakes it (not
// the timeout, which is far longer than the test may take), and its record is delivered.
TEST(DataplaneIdleWait, CommitWakesTheSleepingReader) {
  Pool pool = Pool::create(PoolConfig{}, "etwrt-test");
  std::atomic<bool> woken{false};
  std::atomic<bool> about_to_sleep{false};
  Collector got;
  std::thread consumer([&] {
    ReaderOptions options;
    options.eager_partial = true;
    Reader reader(pool, options);
    const uint32_t token = reader.prepare_wait();
    if (reader.poll(got.callback()) != 0) return;  // Nothing written yet: never taken.
    about_to_sleep = true;
    woken = reader.wait(token, 60'000'000'000ull);
    while (got.count == 0) reader.poll(got.callback(), true);
  });
  // Writes once the reader announced its sleep and found the pool empty after announcing it,
  // so the commit must be the wake-up (written earlier, that poll could deliver it).
  while (!about_to_sleep.load()) std::this_thread::yield();
  EXPECT_NE(pool.shared()->readers_sleeping.load(), 0u);
  Writer writer(pool);
  ASSERT_EQ(write_seq(writer, 1, 42), WriteResult::written);
  consumer.join();
  EXPECT_TRUE(woken.load());
  ASSERT_EQ(got.count, 1u);
  EXPECT_EQ(got.seqs[1].front(), 42u);
  EXPECT_EQ(pool.shared()->readers_sleeping.load(), 0u);  // The writer cleared it.
}

TEST(DataplaneIdleWait, WakeReaderEndsTheWaitWithoutData) {
  Pool pool = Pool::create(PoolConfig{}, "etwrt-test");
  std::atomic<bool> woken{false};
  std::atomic<bool> armed{false};
  std::thread consumer([&] {
    Reader reader(pool);
    const uint32_t token = reader.prepare_wait();
    armed = true;
    woken = reader.wait(token, 60'000'000'000ull);
  });
  while (!armed.load()) std::this_thread::yield();
  pool.wake_reader();
  consumer.join();
  EXPECT_TRUE(woken.load());
}

// Without a sleeping reader a commit makes no wake-up: the token does not move.
TEST(DataplaneIdleWait, AwakeReaderCostsWritersNoWakeUp) {
  Pool pool = Pool::create(PoolConfig{}, "etwrt-test");
  Reader reader(pool);
  const uint32_t before = pool.shared()->session[0].wake_seq.load();
  Writer writer(pool);
  for (uint64_t i = 0; i < 100; ++i) ASSERT_EQ(write_seq(writer, 1, i), WriteResult::written);
  EXPECT_EQ(pool.shared()->session[0].wake_seq.load(), before);
  const uint32_t token = reader.prepare_wait();
  ASSERT_EQ(write_seq(writer, 1, 100), WriteResult::written);
  EXPECT_NE(pool.shared()->session[0].wake_seq.load(), token);
  EXPECT_TRUE(reader.wait(token, 60'000'000'000ull));
}

// A second consuming process is fed through a relay slot by the reader's holder: it gets
// every record the reader delivers after the slot's activation, fields intact.
TEST(DataplaneRelay, FeedsEveryRecordAfterActivationWithItsFields) {
  Pool pool = Pool::create(small_config(4, 2, 8), "relay");
  Reader reader(pool, ReaderOptions{true, 0, 4});
  RelayFeeder feeder(pool);
  Writer w(pool);
  ASSERT_EQ(write_seq(w, 1, 0), WriteResult::written);  // before the relay: not fed
  Collector first;
  reader.poll(first.callback(), true);
  RelayConsumer relay(pool);
  uint64_t since = 0;
  EXPECT_FALSE(relay.active(since));
  const uint64_t activation = pool.now_ns();
  EXPECT_EQ(feeder.refresh(activation), 1u);
  ASSERT_TRUE(relay.active(since));
  EXPECT_EQ(since, activation);
  // A record with extended data and unusual flags must come through unchanged.
  static constexpr EVENT_DESCRIPTOR desc{9, 2, 3, 4, 5, 6, 0x77};
  const std::byte traits[] = {std::byte{5}, std::byte{0}, std::byte{'a'}, std::byte{0},
                              std::byte{0}};
  Payload payload{2, 0, 99, {1, 2}};
  const EVENT_DATA_DESCRIPTOR data = describe(&payload, sizeof payload);
  EventInput in = with_every_id(desc, traits);
  const std::byte schema[] = {std::byte{3}, std::byte{0}, std::byte{0}};
  const uint64_t stamp = 424242;
  in.event_schema = schema;
  in.timestamp_override = &stamp;
  in.user_data = std::span<const EVENT_DATA_DESCRIPTOR>(&data, 1);
  ASSERT_EQ(w.write(in), WriteResult::written);
  for (uint64_t i = 1; i <= 100; ++i) ASSERT_EQ(write_seq(w, 1, i), WriteResult::written);
  std::vector<RecordView> fed_to_primary;
  size_t n = 0;
  while ((n = reader.poll([&](const RecordView& r) { feeder.push(r); }, true)) > 0) {
  }
  Collector got;
  RecordView special{};
  bool saw_special = false;
  std::vector<LossReport> losses;
  relay.drain(
      [&](const RecordView& r) {
        if (r.descriptor.Id == 9) {
          special = r;
          saw_special = true;
          EXPECT_EQ(r.provider_traits.size(), sizeof traits);
          EXPECT_EQ(std::memcmp(r.provider_traits.data(), traits, sizeof traits), 0);
          EXPECT_EQ(r.event_schema.size(), sizeof schema);
          EXPECT_TRUE(r.has_timestamp_override);
          EXPECT_EQ(r.timestamp_override, stamp);
          return;
        }
        got.callback()(r);
      },
      [&](const LossReport& l) { losses.push_back(l); });
  ASSERT_TRUE(saw_special);
  EXPECT_EQ(special.descriptor.Keyword, 0x77u);
  EXPECT_TRUE(special.has_related_activity_id);
  EXPECT_EQ(std::memcmp(&special.related_activity_id, &kRelated, sizeof(GUID)), 0);
  EXPECT_EQ(std::memcmp(&special.activity_id, &kActivity, sizeof(GUID)), 0);
  EXPECT_NE(special.flags & EVENT_HEADER_FLAG_EXTENDED_INFO, 0);
  ASSERT_EQ(got.count, 100u);
  EXPECT_EQ(got.seqs[1].front(), 1u);
  got.expect_per_writer_increasing();
  EXPECT_TRUE(losses.empty());
  EXPECT_FALSE(relay.ended({}));
  feeder.end();
  EXPECT_TRUE(relay.ended({}));
}

// A consumer that does not drain loses records (only it), counted exactly, and the loss is
// announced ahead of the first record after the gap.
TEST(DataplaneRelay, FullRingDropsForThatConsumerOnlyCountedAndAnnounced) {
  Pool pool = Pool::create(small_config(64, 2, 8), "relayfull");
  Reader reader(pool, ReaderOptions{true, 0, 0});
  RelayFeeder feeder(pool);
  RelayConsumer relay(pool);
  ASSERT_EQ(feeder.refresh(pool.now_ns()), 1u);
  Writer w(pool);
  const uint64_t total = 30000;  // ~3.6 MB of records through a 1 MB ring
  uint64_t primary = 0;
  for (uint64_t i = 0; i < total; ++i) {
    ASSERT_EQ(write_seq(w, 1, i), WriteResult::written);
    if (i % 1000 == 999 || i + 1 == total) {
      while (reader.poll(
                 [&](const RecordView& r) {
                   ++primary;
                   feeder.push(r);
                 },
                 true) > 0) {
      }
      if (i == 19999) {  // drains once in the middle: later records come after a mark
        std::vector<std::string> order;
        relay.drain([&](const RecordView&) { order.push_back("r"); },
                    [&](const LossReport&) { order.push_back("l"); });
        EXPECT_TRUE(std::find(order.begin(), order.end(), "l") == order.end());
      }
    }
  }
  EXPECT_EQ(primary, total);  // the reader's own consumer lost nothing
  uint64_t delivered = 0, lost = 0, lost_buffers = 0;
  bool loss_before_data = false;
  const auto on_loss = [&](const LossReport& l) {
    lost += l.realtime_events_lost;
    lost_buffers += l.realtime_buffers_lost;
    EXPECT_EQ(l.events_lost, 0u);
  };
  relay.drain([&](const RecordView&) { ++delivered; },
              [&](const LossReport& l) {
                on_loss(l);
                loss_before_data = true;
              });
  feeder.end();
  relay.drain([&](const RecordView&) { ++delivered; }, on_loss);  // the final mark, if any
  EXPECT_TRUE(relay.ended(on_loss));
  // Delivered before the middle drain are counted too: the ring held them.
  EXPECT_GT(lost, 0u);
  EXPECT_TRUE(loss_before_data);
  EXPECT_GE(lost_buffers, 1u);
  EXPECT_EQ(relay.delivered() + lost, total);
}

TEST(DataplaneRelay, SlotsAreLimitedAndReleasedSlotsReturnThroughTheFeeder) {
  Pool pool = Pool::create(small_config(4, 2, 4), "relayslots");
  Reader reader(pool);
  RelayFeeder feeder(pool);
  std::vector<std::unique_ptr<RelayConsumer>> relays;
  for (uint32_t i = 0; i < kRelaySlots; ++i)
    relays.push_back(std::make_unique<RelayConsumer>(pool));
  EXPECT_THROW(RelayConsumer extra(pool), Error);
  EXPECT_EQ(feeder.refresh(pool.now_ns()), size_t{kRelaySlots});
  relays.pop_back();
  EXPECT_THROW(RelayConsumer extra(pool), Error);  // released, not yet freed by the feeder
  EXPECT_EQ(feeder.refresh(pool.now_ns()), size_t{kRelaySlots} - 1);
  EXPECT_NO_THROW(RelayConsumer again(pool));
}

TEST(DataplaneRecovery, DeadWriterCommittedRecordsDeliveredTornOneNot) {
  Pool pool = Pool::create(small_config(4, 2, 4), "torn");
  Writer w(pool);
  const uint32_t owned = commit_five(pool, w);
  ASSERT_NE(owned, kNoBuffer);
  // A record the writer began but never committed: bytes past the commit point.
  Pool::Shared& s = *pool.shared();
  const uint32_t committed = bytes_of(s.descs()[owned].commit.load());
  RecordHeader torn{};
  torn.size = 112;
  torn.timestamp_ns = 1;
  std::memcpy(s.data(owned) + committed, &torn, sizeof torn);
  const uint32_t me = static_cast<uint32_t>(getpid());
  EXPECT_EQ(pool.recover_dead_peers([&](uint32_t pid) { return pid != me; }), 1u);
  EXPECT_EQ(pool.query().writer_recoveries, 1u);
  Reader reader(pool);
  Collector col;
  drain(reader, col);
  EXPECT_EQ(col.seqs[1], (std::vector<uint64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(reader.corrupt_buffers(), 0u);
  expect_balanced(pool, 5);
}

TEST(DataplaneRecovery, WriterKilledMidStreamLosesNothingCommitted) {
  Pool pool = Pool::create(small_config(4, 4, 256), "sigkill");
  // The child counts an attempt before making it, so at its death the count is exact or one
  // ahead (the write in progress, possibly a torn record).
  std::atomic<uint64_t>* attempts = shared_counter();
  ASSERT_NE(attempts, nullptr);
  const pid_t child = fork_endless_writer(pool, [&](Writer& w, uint64_t i) {
    attempts->store(i + 1, std::memory_order_relaxed);
    write_seq(w, 7, i);
  });
  ASSERT_GE(child, 0);
  Collector col;
  {
    Reader reader(pool, ReaderOptions{.eager_partial = true});
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (col.count < 20000 && std::chrono::steady_clock::now() < deadline)
      reader.poll(col.callback());
    ASSERT_EQ(kill(child, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFSIGNALED(status));
    pool.recover_dead_peers();
    // Nothing may stay owned by the dead process.
    Pool::Shared& s = *pool.shared();
    for (uint32_t i = 0; i < s.allocated.load(); ++i) {
      const uint64_t state = s.descs()[i].state.load();
      EXPECT_FALSE((phase_of(state) == kWriting || phase_of(state) == kStealing) &&
                   pid_of(state) == static_cast<uint32_t>(child))
          << "buffer " << i;
    }
    drain(reader, col);
  }
  const Counters c = pool.query();
  const uint64_t made = attempts->load();
  const uint64_t accounted = col.count + c.events_lost + c.realtime_events_lost;
  EXPECT_TRUE(accounted == made || accounted + 1 == made)
      << "accounted " << accounted << " attempts " << made;
  EXPECT_EQ(c.events_committed, c.events_delivered + c.realtime_events_lost);
  col.expect_per_writer_increasing();
  if (c.events_lost == 0 && c.realtime_events_lost == 0) {
    // No loss: exactly the committed prefix 0..n-1, the torn record (if any) excluded.
    for (uint64_t i = 0; i < col.seqs[7].size(); ++i) ASSERT_EQ(col.seqs[7][i], i);
  }
  munmap(attempts, sizeof(std::atomic<uint64_t>));
}

// A writer killed at any point of a reclaim: recovery finishes it, so the buffer's records
// are counted lost exactly once and never delivered late (older than what came since).
TEST(DataplaneRecovery, WriterKilledMidReclaimIsCountedOnceAndNeverDelivered) {
  constexpr uint32_t kDead = 0x7ffffff0;
  const auto is_alive = [](uint32_t pid) { return pid != kDead; };
  // How far the dead writer got: 0 = only took the state, 1 = recorded its targets,
  // 2 = stored the totals too, 3 = also cleared commit, 4 = finished (pending cleared).
  for (int reached = 0; reached <= 4; ++reached) {
    SCOPED_TRACE("reached " + std::to_string(reached));
    Pool pool = Pool::create(small_config(4, 2, 2), "midsteal");
    Writer w(pool);
    uint64_t seq = 0;
    Pool::Shared& s = *pool.shared();
    while (phase_of(s.descs()[0].state.load()) != kFull)
      ASSERT_EQ(write_seq(w, 1, seq++), WriteResult::written);
    BufferDesc& d = s.descs()[0];
    const uint32_t held = events_of(d.commit.load());
    ASSERT_GT(held, 0u);
    d.state.store(make_state(kStealing, kDead, 0, 1));
    if (reached >= 1) {
      d.loss[0].steal_target_buffers.store(1);
      d.loss[0].steal_target_events.store(held);
      d.steal_pending.store(1);
    }
    if (reached >= 2) {
      d.loss[0].lost_buffers.store(1);
      d.loss[0].lost_events.store(held);
    }
    if (reached >= 3) d.commit.store(0);
    if (reached >= 4) d.steal_pending.store(0);
    EXPECT_EQ(pool.recover_dead_peers(is_alive), 1u);
    EXPECT_EQ(phase_of(d.state.load()), kFree);
    EXPECT_EQ(pool.recover_dead_peers(is_alive), 0u);  // a second recoverer finds nothing
    w.release();
    Reader reader(pool);
    Collector col;
    drain(reader, col);
    const Counters c = pool.query();
    EXPECT_EQ(c.realtime_buffers_lost, 1u);
    EXPECT_EQ(c.realtime_events_lost, held);
    ASSERT_FALSE(col.seqs[1].empty());
    EXPECT_EQ(col.seqs[1].front(), held);  // the reclaimed records never arrive
    expect_balanced(pool, seq);
  }
}

TEST(DataplaneRecovery, DeadConsumerDoesNotBlockWritersAndNextReaderResumes) {
  Pool pool = Pool::create(small_config(1, 2, 4), "deadreader");
  constexpr uint64_t kEvents = 2000;
  uint64_t seq = 0;
  Writer w(pool);
  for (; seq < 30; ++seq) ASSERT_EQ(write_seq(w, 1, seq), WriteResult::written);
  // A consumer process claims buffers, reads part of them, and dies without detaching.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    Reader reader(pool);
    reader.poll([](const RecordView&) {}, true);
    raise(SIGKILL);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  const uint64_t delivered_to_dead = pool.query().events_delivered;
  EXPECT_EQ(delivered_to_dead, 30u);
  // Writers go on: the dead consumer's claim cannot stall them (reclaims are counted).
  for (; seq < kEvents; ++seq) ASSERT_EQ(write_seq(w, 1, seq), WriteResult::written);
  w.release();
  EXPECT_GT(pool.query().realtime_buffers_lost, 0u);
  // A new reader replaces the dead one (recovery runs at attach) and gets the rest.
  Reader reader(pool);
  Collector col;
  drain(reader, col);
  col.expect_per_writer_increasing();
  EXPECT_EQ(col.seqs[1].back(), kEvents - 1);
  expect_balanced(pool, kEvents);
}

TEST(DataplaneCounters, NumberOfBuffersGrowsFromMinimumToMaximum) {
  Pool pool = Pool::create(small_config(1, 2, 5, false), "grow");
  EXPECT_EQ(pool.query().number_of_buffers, 2u);
  EXPECT_EQ(pool.query().free_buffers, 2u);
  Writer w(pool);
  for (uint64_t i = 0; i < 1000; ++i) write_seq(w, 1, i);
  const Counters c = pool.query();
  EXPECT_EQ(c.number_of_buffers, 5u);
  EXPECT_EQ(c.free_buffers, 0u);
  // A writer that finds no next buffer still hands its full one to delivery.
  EXPECT_EQ(c.buffers_written, 5u);
}

}  // namespace
}  // namespace etwrt::dataplane
