// TraceLogging through libetwrt against a real broker: EVENT_DATA_DESCRIPTOR.Type honoured
// only once asked for (EVENT_DATA_DESCRIPTOR page), the EVENT_SCHEMA_TL item, the timestamp
// override, and tdh.h decoding the delivered events.
#include "test_broker_home.h"
#include "test_consumer.h"
#include "test_properties.h"
#include "tl_test_metadata.h"

#include <windows.h>
#include <evntprov.h>
#include <evntrace.h>
#include <evntcons.h>
#include <tdh.h>

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;
using etwrt::testing::TlMetadata;
using Bytes = std::vector<std::uint8_t>;

const GUID kProvider = {
    0x3f1e7a10, 0x5c2d, 0x4e6f, {0x8a, 0x01, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc}};

// What the consumer saw of one event, tdh's answers included (taken inside the callback).
struct Seen {
  GUID provider{};
  LONGLONG time = 0;
  Bytes data;
  std::vector<std::pair<USHORT, Bytes>> extended;
  ULONG info_status = 0;
  Bytes info;                                       // TRACE_EVENT_INFO
  std::vector<std::pair<ULONG, Bytes>> properties;  // per name asked: status, bytes
};

std::vector<std::u16string> g_ask;  // property names the callback decodes

// kProvider's events, as the consumer saw them and tdh decoded them inside the callback.
std::optional<Seen> read_event(PEVENT_RECORD r) {
  if (r->EventHeader.ProviderId != kProvider) return std::nullopt;
  Seen s;
  s.provider = r->EventHeader.ProviderId;
  s.time = r->EventHeader.TimeStamp.QuadPart;
  const auto* p = static_cast<const std::uint8_t*>(r->UserData);
  s.data.assign(p, p + r->UserDataLength);
  for (USHORT i = 0; i < r->ExtendedDataCount; ++i) {
    const auto& item = r->ExtendedData[i];
    const auto* q = reinterpret_cast<const std::uint8_t*>(item.DataPtr);
    s.extended.emplace_back(item.ExtType, Bytes(q, q + item.DataSize));
  }
  ULONG size = 0;
  s.info_status = TdhGetEventInformation(r, 0, nullptr, nullptr, &size);
  if (s.info_status == ERROR_INSUFFICIENT_BUFFER) {
    s.info.resize(size);
    s.info_status = TdhGetEventInformation(
        r, 0, nullptr, reinterpret_cast<TRACE_EVENT_INFO*>(s.info.data()), &size);
  }
  for (const std::u16string& name : g_ask) {
    PROPERTY_DATA_DESCRIPTOR d{};
    d.PropertyName = reinterpret_cast<ULONGLONG>(name.c_str());
    d.ArrayIndex = ~ULONG{0};  // Windows' ULONG_MAX: the whole property
    ULONG n = 0;
    ULONG status = TdhGetPropertySize(r, 0, nullptr, 1, &d, &n);
    Bytes bytes(n);
    if (status == ERROR_SUCCESS)
      status = TdhGetProperty(r, 0, nullptr, 1, &d, n, n == 0 ? nullptr : bytes.data());
    s.properties.emplace_back(status, bytes);
  }
  return s;
}

// Raw timestamps: the tests compare them with the ones they wrote.
class Consumer : public etwrt::testing::ThreadConsumer<Seen> {
 public:
  explicit Consumer(const std::string& session)
      : ThreadConsumer(session, &read_event, PROCESS_TRACE_MODE_RAW_TIMESTAMP) {}
};

const Bytes* item(const Seen& s, USHORT type) {
  for (const auto& [t, bytes] : s.extended) {
    if (t == type) return &bytes;
  }
  return nullptr;
}

EVENT_DATA_DESCRIPTOR typed(const void* p, std::size_t size, UCHAR type) {
  EVENT_DATA_DESCRIPTOR d;
  EventDataDescCreate(&d, p, static_cast<ULONG>(size));
  d.Type = type;
  return d;
}

std::u16string text16(const Bytes& info, ULONG offset) {
  std::u16string s;
  if (offset == 0) return s;
  for (std::size_t i = offset; i + 1 < info.size(); i += 2) {
    const char16_t c = static_cast<char16_t>(info[i] | (info[i + 1] << 8));
    if (c == 0) break;
    s.push_back(c);
  }
  return s;
}

class TraceLoggingApi : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(EventRegister(&kProvider, nullptr, nullptr, &handle_), ERROR_SUCCESS);
    etwrt::testing::TraceProperties p;
    ASSERT_EQ(StartTraceA(&session_, "tl", p.get()), ERROR_SUCCESS);
    ASSERT_EQ(EnableTraceEx2(session_, &kProvider, 1, 5, 0, 0, 10000, nullptr), ERROR_SUCCESS);
  }
  void TearDown() override {
    g_ask.clear();
    EventUnregister(handle_);
  }
  // Writes one event of `data`, stops the session, returns what the consumer saw.
  std::vector<Seen> write_and_collect(std::vector<EVENT_DATA_DESCRIPTOR> data,
                                      ULONG expect = ERROR_SUCCESS) {
    Consumer c("tl");
    EVENT_DESCRIPTOR d;
    EventDescCreate(&d, 1, 0, 11, 4, 0, 0, 0);
    EXPECT_EQ(EventWrite(handle_, &d, static_cast<ULONG>(data.size()), data.data()), expect);
    const std::vector<Seen> seen = c.wait_for(expect == ERROR_SUCCESS ? 1 : 0);
    etwrt::testing::TraceProperties p;
    EXPECT_EQ(ControlTraceA(session_, nullptr, p.get(), EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
    c.join();
    return c.wait_for(seen.size());
  }
  void use_descriptor_type(BOOLEAN on) {
    ASSERT_EQ(EventSetInformation(handle_, EventProviderUseDescriptorType, &on, sizeof on),
              ERROR_SUCCESS);
  }

  // Its own broker, stopped and its folder removed when the test ends.
  etwrt::testing::PrivateBrokerHome home_{"etwrt-tl-test"};
  REGHANDLE handle_ = 0;
  TRACEHANDLE session_ = 0;
  const Bytes meta_ = TlMetadata("Etwh.Tl").field("n", 8).field("s", 2).bytes();
  const Bytes manual_traits_ = {7, 0, 'M', 'a', 'n', 'u', 0};
  const Bytes payload_ = {42, 0, 0, 0, 'h', 'i', 0};
  const std::uint64_t stamp_ = 123456789;
};

TEST_F(TraceLoggingApi, TypeIsIgnoredUntilTheProviderAsks) {
  const auto seen = write_and_collect(
      {typed(meta_.data(), meta_.size(), 1), typed(payload_.data(), payload_.size(), 0)});
  ASSERT_EQ(seen.size(), 1u);
  Bytes both = meta_;
  both.insert(both.end(), payload_.begin(), payload_.end());
  EXPECT_EQ(seen[0].data, both);
  EXPECT_EQ(item(seen[0], EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL), nullptr);
  EXPECT_EQ(seen[0].info_status, static_cast<ULONG>(ERROR_NOT_FOUND));
}

TEST_F(TraceLoggingApi, UseDescriptorTypeFalseLeavesTypeIgnored) {
  use_descriptor_type(FALSE);
  const auto seen = write_and_collect(
      {typed(meta_.data(), meta_.size(), 1), typed(payload_.data(), payload_.size(), 0)});
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].data.size(), meta_.size() + payload_.size());
  EXPECT_EQ(item(seen[0], EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL), nullptr);
}

TEST_F(TraceLoggingApi, UseDescriptorTypeSortsMetadataTraitsAndTimestamp) {
  use_descriptor_type(TRUE);
  const auto seen = write_and_collect(
      {typed(manual_traits_.data(), manual_traits_.size(), 2), typed(meta_.data(), meta_.size(), 1),
       typed(&stamp_, sizeof stamp_, 3), typed(payload_.data(), payload_.size(), 0)});
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].data, payload_);
  const Bytes* schema = item(seen[0], EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL);
  ASSERT_NE(schema, nullptr);
  EXPECT_EQ(*schema, meta_);
  const Bytes* traits = item(seen[0], EVENT_HEADER_EXT_TYPE_PROV_TRAITS);
  ASSERT_NE(traits, nullptr);
  EXPECT_EQ(*traits, manual_traits_);
  EXPECT_EQ(seen[0].time, static_cast<LONGLONG>(stamp_));  // raw timestamps: as given
}

TEST_F(TraceLoggingApi, TraitsHonourTypeAndDropManualTraits) {
  const Bytes traits = {6, 0, 'S', 'e', 't', 0};
  ASSERT_EQ(
      EventSetInformation(handle_, EventProviderSetTraits, const_cast<std::uint8_t*>(traits.data()),
                          static_cast<ULONG>(traits.size())),
      ERROR_SUCCESS);
  const auto seen = write_and_collect({typed(manual_traits_.data(), manual_traits_.size(), 2),
                                       typed(meta_.data(), meta_.size(), 1),
                                       typed(payload_.data(), payload_.size(), 0)});
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].data, payload_);
  ASSERT_NE(item(seen[0], EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL), nullptr);
  const Bytes* delivered = item(seen[0], EVENT_HEADER_EXT_TYPE_PROV_TRAITS);
  ASSERT_NE(delivered, nullptr);
  EXPECT_EQ(*delivered, traits);
}

TEST_F(TraceLoggingApi, BadTimestampSizeIsRefused) {
  use_descriptor_type(TRUE);
  const std::uint32_t small = 1;
  const auto seen = write_and_collect({typed(&small, sizeof small, 3)}, ERROR_INVALID_PARAMETER);
  EXPECT_TRUE(seen.empty());
}

TEST_F(TraceLoggingApi, TdhDecodesTheDeliveredEvent) {
  use_descriptor_type(TRUE);
  g_ask = {u"n", u"s", u"missing"};
  const Bytes traits = {9, 0, 'E', 't', 'w', 'h', '.', 'P', 0};
  const auto seen = write_and_collect({typed(traits.data(), traits.size(), 2),
                                       typed(meta_.data(), meta_.size(), 1),
                                       typed(payload_.data(), payload_.size(), 0)});
  ASSERT_EQ(seen.size(), 1u);
  ASSERT_EQ(seen[0].info_status, static_cast<ULONG>(ERROR_SUCCESS));
  const auto* info = reinterpret_cast<const TRACE_EVENT_INFO*>(seen[0].info.data());
  EXPECT_EQ(info->DecodingSource, DecodingSourceTlg);
  EXPECT_EQ(text16(seen[0].info, info->EventNameOffset), u"Etwh.Tl");
  EXPECT_EQ(text16(seen[0].info, info->ProviderNameOffset), u"Etwh.P");
  ASSERT_EQ(info->PropertyCount, 2u);
  EXPECT_EQ(info->TopLevelPropertyCount, 2u);
  EXPECT_EQ(text16(seen[0].info, info->EventPropertyInfoArray[0].NameOffset), u"n");
  EXPECT_EQ(info->EventPropertyInfoArray[0].nonStructType.InType, TDH_INTYPE_UINT32);
  EXPECT_EQ(info->EventPropertyInfoArray[1].nonStructType.InType, TDH_INTYPE_ANSISTRING);
  ASSERT_EQ(seen[0].properties.size(), 3u);
  EXPECT_EQ(seen[0].properties[0].first, static_cast<ULONG>(ERROR_SUCCESS));
  EXPECT_EQ(seen[0].properties[0].second, Bytes({42, 0, 0, 0}));
  EXPECT_EQ(seen[0].properties[1].second, Bytes({'h', 'i', 0}));
  EXPECT_EQ(seen[0].properties[2].first, static_cast<ULONG>(ERROR_NOT_FOUND));
}

}  // namespace
