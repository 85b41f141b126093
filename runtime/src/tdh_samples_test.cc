// The documentation's two ways of decoding an event with TDH, followed call for call on etwrt:
// "Using TdhFormatProperty to Consume Event Data" (property length and array size from
// EVENT_PROPERTY_INFO or from the property they name, TdhGetEventMapInformation with the
// MapNameOffset name and the trailing space removed, TdhFormatProperty asked for its size then
// called, the data pointer moved by UserDataConsumed, structs' members in turn) and "Using
// TdhGetProperty to Consume Event Data" (PROPERTY_DATA_DESCRIPTOR pairs for struct members, with
// the struct's element and the member's array index). The code is this project's; the call
// sequence is the samples'. Events are those of testdata/tdh_samples.man, which has the features
// of the "Defining Event Data Templates" page's template example (maps, a binary sized by a
// field, a struct array counted by a field) and more in-types and out-types. Every field of every
// event must come out as the expected text, and both ways must agree.
#include "tdh_test_record.h"
#include "test_consumer.h"
#include "test_properties.h"
#include "tl_test_metadata.h"

#include <windows.h>
#include <evntcons.h>
#include <evntprov.h>
#include <evntrace.h>
#include <tdh.h>

#include <gtest/gtest.h>

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace {

using etwrt::testing::Bytes;
using etwrt::testing::TdhRecord;

constexpr GUID kProvider = {
    0x3B0E84C2, 0x7D1A, 0x4F6E, {0xA2, 0xC5, 0x90, 0xD1, 0xE3, 0xF4, 0xA5, 0xB6}};

std::u16string wide(const std::string& s) { return std::u16string(s.begin(), s.end()); }

std::string narrow(const WCHAR* s) {
  std::string out;
  for (; *s != 0; ++s) out.push_back(static_cast<char>(*s));
  return out;
}

const WCHAR* text_at(const void* base, ULONG offset) {
  return reinterpret_cast<const WCHAR*>(static_cast<const BYTE*>(base) + offset);
}

void put(Bytes& b, std::uint64_t v, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void put16(Bytes& b, const std::u16string& s) {
  for (char16_t c : s) put(b, c, 2);
  put(b, 0, 2);
}

class Record : public TdhRecord {
 public:
  Record(USHORT id, Bytes data) : TdhRecord(std::move(data)) {
    get()->EventHeader.ProviderId = kProvider;
    get()->EventHeader.EventDescriptor.Id = id;
  }
};

std::vector<BYTE> event_info(EVENT_RECORD* e) {
  ULONG size = 0;
  EXPECT_EQ(TdhGetEventInformation(e, 0, nullptr, nullptr, &size),
            ULONG{ERROR_INSUFFICIENT_BUFFER});
  std::vector<BYTE> info(size);
  EXPECT_EQ(TdhGetEventInformation(e, 0, nullptr, reinterpret_cast<TRACE_EVENT_INFO*>(info.data()),
                                   &size),
            ULONG{ERROR_SUCCESS});
  return info;
}

// TdhGetPropertySize then TdhGetProperty of a top-level UINT16 or UINT32 property, as the
// samples read a length or a count.
ULONG integer_property(EVENT_RECORD* e, const WCHAR* name) {
  PROPERTY_DATA_DESCRIPTOR d{};
  d.PropertyName = reinterpret_cast<ULONGLONG>(name);
  d.ArrayIndex = ~ULONG{0};  // ULONG_MAX of Windows, where ULONG is 32 bits
  ULONG size = 0, value = 0;
  EXPECT_EQ(TdhGetPropertySize(e, 0, nullptr, 1, &d, &size), ULONG{ERROR_SUCCESS});
  EXPECT_LE(size, sizeof value);
  EXPECT_EQ(TdhGetProperty(e, 0, nullptr, 1, &d, size, reinterpret_cast<BYTE*>(&value)),
            ULONG{ERROR_SUCCESS});
  return value;
}

// The samples' GetArraySize and GetPropertyLength.
USHORT array_size(EVENT_RECORD* e, const TRACE_EVENT_INFO* info, USHORT i) {
  const EVENT_PROPERTY_INFO& p = info->EventPropertyInfoArray[i];
  if ((p.Flags & PropertyParamCount) == 0) return p.count;
  return static_cast<USHORT>(integer_property(
      e, text_at(info, info->EventPropertyInfoArray[p.countPropertyIndex].NameOffset)));
}
USHORT property_length(EVENT_RECORD* e, const TRACE_EVENT_INFO* info, USHORT i) {
  const EVENT_PROPERTY_INFO& p = info->EventPropertyInfoArray[i];
  if ((p.Flags & PropertyParamLength) == 0) {
    // The sample gives up on a length of 0 but for strings, structs and a Binary IPv6 address.
    const USHORT in = p.nonStructType.InType;
    const bool may_be_0 = (p.Flags & PropertyStruct) != 0 || in == TDH_INTYPE_UNICODESTRING ||
                          in == TDH_INTYPE_ANSISTRING ||
                          (in == TDH_INTYPE_BINARY && p.nonStructType.OutType == TDH_OUTTYPE_IPV6);
    EXPECT_TRUE(p.length > 0 || may_be_0) << "the sample stops: length 0 for in-type " << in;
    return p.length;
  }
  return static_cast<USHORT>(integer_property(
      e, text_at(info, info->EventPropertyInfoArray[p.lengthPropertyIndex].NameOffset)));
}

// The samples' GetMapInfo: the map named at MapNameOffset (an offset of 0 names the text at
// the structure's start, which names no map), its manifest texts' trailing space removed.
std::vector<BYTE> map_info(EVENT_RECORD* e, const TRACE_EVENT_INFO* info, USHORT i) {
  auto* name = const_cast<WCHAR*>(
      text_at(info, info->EventPropertyInfoArray[i].nonStructType.MapNameOffset));
  ULONG size = 0;
  const ULONG s = TdhGetEventMapInformation(e, name, nullptr, &size);
  if (s == ERROR_NOT_FOUND) return {};
  EXPECT_EQ(s, ULONG{ERROR_INSUFFICIENT_BUFFER});
  std::vector<BYTE> map(size);
  auto* m = reinterpret_cast<EVENT_MAP_INFO*>(map.data());
  EXPECT_EQ(TdhGetEventMapInformation(e, name, m, &size), ULONG{ERROR_SUCCESS});
  for (ULONG k = 0; k < m->EntryCount; ++k) {
    auto* text = reinterpret_cast<WCHAR*>(map.data() + m->MapEntryArray[k].OutputOffset);
    std::size_t n = 0;
    while (text[n] != 0) ++n;
    EXPECT_EQ(text[n - 1], WCHAR{' '});  // the TdhGetEventMapInformation page's trailing space
    text[n - 1] = 0;
  }
  return map;
}

// TdhFormatProperty asked for its size with no buffer, then called with one.
std::string format(const TRACE_EVENT_INFO* info, std::vector<BYTE>& map, USHORT in, USHORT out,
                   USHORT length, const BYTE* data, std::size_t left, USHORT& consumed) {
  auto* ti = const_cast<TRACE_EVENT_INFO*>(info);
  auto* m = map.empty() ? nullptr : reinterpret_cast<EVENT_MAP_INFO*>(map.data());
  auto* d = const_cast<BYTE*>(data);
  const auto n = static_cast<USHORT>(left);
  ULONG size = 0;
  EXPECT_EQ(TdhFormatProperty(ti, m, 8, in, out, length, n, d, &size, nullptr, &consumed),
            ULONG{ERROR_INSUFFICIENT_BUFFER});
  std::vector<WCHAR> text(size / sizeof(WCHAR));
  const ULONG s = TdhFormatProperty(ti, m, 8, in, out, length, n, d, &size, text.data(), &consumed);
  EXPECT_EQ(s, ULONG{ERROR_SUCCESS});
  return s == ERROR_SUCCESS ? narrow(text.data()) : "<" + std::to_string(s) + ">";
}

// "Using TdhFormatProperty": walks the user data property by property.
struct FormatWay {
  EVENT_RECORD* e;
  const TRACE_EVENT_INFO* info;
  const BYTE* at;
  const BYTE* end;
  std::vector<std::string> lines;

  void print(USHORT i) {
    const EVENT_PROPERTY_INFO& p = info->EventPropertyInfoArray[i];
    const USHORT length = property_length(e, info, i);
    const USHORT count = array_size(e, info, i);
    for (USHORT k = 0; k < count; ++k) {
      if ((p.Flags & PropertyStruct) != 0) {
        const USHORT last = p.structType.StructStartIndex + p.structType.NumOfStructMembers;
        for (USHORT j = p.structType.StructStartIndex; j < last; ++j) print(j);
        continue;
      }
      std::vector<BYTE> map = map_info(e, info, i);
      USHORT consumed = 0;
      const std::string text = format(info, map, p.nonStructType.InType, p.nonStructType.OutType,
                                      length, at, static_cast<std::size_t>(end - at), consumed);
      lines.push_back(narrow(text_at(info, p.NameOffset)) + ": " + text);
      at += consumed;
    }
  }
};

std::vector<std::string> by_format_property(EVENT_RECORD* e) {
  const std::vector<BYTE> buffer = event_info(e);
  const auto* info = reinterpret_cast<const TRACE_EVENT_INFO*>(buffer.data());
  const auto* data = static_cast<const BYTE*>(e->UserData);
  FormatWay way{e, info, data, data + e->UserDataLength, {}};
  for (USHORT i = 0; i < info->TopLevelPropertyCount; ++i) way.print(i);
  EXPECT_EQ(way.at, way.end) << "the user data is not consumed to its end";
  return way.lines;
}

// "Using TdhGetProperty": each value by its descriptors, then made text by TdhFormatProperty.
struct GetPropertyWay {
  EVENT_RECORD* e;
  const TRACE_EVENT_INFO* info;
  std::vector<std::string> lines;

  void print(USHORT i, const WCHAR* struct_name, USHORT struct_index) {
    const EVENT_PROPERTY_INFO& p = info->EventPropertyInfoArray[i];
    const USHORT count = array_size(e, info, i);
    for (USHORT k = 0; k < count; ++k) {
      if ((p.Flags & PropertyStruct) != 0) {
        const USHORT last = p.structType.StructStartIndex + p.structType.NumOfStructMembers;
        for (USHORT j = p.structType.StructStartIndex; j < last; ++j)
          print(j, text_at(info, p.NameOffset), k);
        continue;
      }
      PROPERTY_DATA_DESCRIPTOR d[2] = {};
      ULONG n = 1;
      d[0].PropertyName = reinterpret_cast<ULONGLONG>(text_at(info, p.NameOffset));
      d[0].ArrayIndex = k;
      if (struct_name != nullptr) {
        d[1] = d[0];
        d[0].PropertyName = reinterpret_cast<ULONGLONG>(struct_name);
        d[0].ArrayIndex = struct_index;
        n = 2;
      }
      ULONG size = 0;
      ASSERT_EQ(TdhGetPropertySize(e, 0, nullptr, n, d, &size), ULONG{ERROR_SUCCESS});
      std::vector<BYTE> value(size);
      ASSERT_EQ(TdhGetProperty(e, 0, nullptr, n, d, size, value.data()), ULONG{ERROR_SUCCESS});
      std::vector<BYTE> map = map_info(e, info, i);
      const USHORT length = (p.Flags & PropertyParamLength) != 0 ? size : p.length;
      USHORT consumed = 0;
      const std::string text = format(info, map, p.nonStructType.InType, p.nonStructType.OutType,
                                      length, value.data(), size, consumed);
      EXPECT_EQ(consumed, size) << narrow(text_at(info, p.NameOffset));
      lines.push_back(narrow(text_at(info, p.NameOffset)) + ": " + text);
    }
  }
};

std::vector<std::string> by_get_property(EVENT_RECORD* e) {
  const std::vector<BYTE> buffer = event_info(e);
  const auto* info = reinterpret_cast<const TRACE_EVENT_INFO*>(buffer.data());
  GetPropertyWay way{e, info, {}};
  for (USHORT i = 0; i < info->TopLevelPropertyCount; ++i) way.print(i, nullptr, 0);
  return way.lines;
}

class TdhSamples : public ::testing::Test {
 protected:
  void SetUp() override {
    std::u16string path = wide(ETWRT_TDH_SAMPLES_MANIFEST);
    ASSERT_EQ(TdhLoadManifest(reinterpret_cast<PWSTR>(path.data())), ULONG{ERROR_SUCCESS});
  }
  void TearDown() override {
    std::u16string path = wide(ETWRT_TDH_SAMPLES_MANIFEST);
    TdhUnloadManifest(reinterpret_cast<PWSTR>(path.data()));
  }

  static void expect_both_ways(Record& r, const std::vector<std::string>& expected) {
    EXPECT_EQ(by_format_property(r.get()), expected);
    EXPECT_EQ(by_get_property(r.get()), expected);
  }
};

// TRACE_EVENT_INFO and EVENT_PROPERTY_INFO pages: the top-level properties first, a struct's
// members after them (StructStartIndex, NumOfStructMembers), PropertyParamCount/Length with the
// index of the property that holds the count or length, MapNameOffset naming the map.
TEST_F(TdhSamples, EventInformationOfStructsCountsAndMaps) {
  Record r(2, Bytes{});
  const std::vector<BYTE> buffer = event_info(r.get());
  const auto* info = reinterpret_cast<const TRACE_EVENT_INFO*>(buffer.data());
  ASSERT_EQ(info->TopLevelPropertyCount, 7u);
  ASSERT_EQ(info->PropertyCount, 9u);
  const EVENT_PROPERTY_INFO* p = info->EventPropertyInfoArray;
  EXPECT_EQ(p[1].Flags, PropertyParamLength);
  EXPECT_EQ(p[1].lengthPropertyIndex, 0);
  EXPECT_EQ(p[2].Flags, PropertyParamFixedLength);
  EXPECT_EQ(p[2].length, 6);
  EXPECT_EQ(p[3].length, 4);  // a Boolean is 4 bytes
  EXPECT_EQ(p[6].Flags, PropertyStruct | PropertyParamCount);
  EXPECT_EQ(p[6].countPropertyIndex, 5);
  EXPECT_EQ(p[6].structType.StructStartIndex, 7);
  EXPECT_EQ(p[6].structType.NumOfStructMembers, 2);
  EXPECT_EQ(narrow(text_at(info, p[7].NameOffset)), "Code");
  EXPECT_EQ(p[7].nonStructType.OutType, TDH_OUTTYPE_HEXINT16);
  EXPECT_EQ(narrow(text_at(info, p[8].NameOffset)), "Label");
  EXPECT_EQ(p[0].nonStructType.MapNameOffset, 0u);

  Record mapped(1, Bytes{});
  const std::vector<BYTE> mapped_buffer = event_info(mapped.get());
  const auto* m = reinterpret_cast<const TRACE_EVENT_INFO*>(mapped_buffer.data());
  EXPECT_EQ(narrow(text_at(m, m->EventPropertyInfoArray[0].nonStructType.MapNameOffset)),
            "Permissions");
  EXPECT_EQ(narrow(text_at(m, m->EventPropertyInfoArray[2].nonStructType.MapNameOffset)),
            "Direction");
}

// PROPERTY_DATA_DESCRIPTOR page: a struct member is named by two descriptors, the struct's with the
// element's index; an index past the array is ERROR_INVALID_PARAMETER, a member of no struct or
// a name the struct lacks ERROR_NOT_FOUND.
TEST_F(TdhSamples, StructMembersByTwoDescriptors) {
  Bytes d;
  put(d, 0, 4);  // Size 0: no Payload
  for (int b = 1; b <= 6; ++b) put(d, b, 1);
  put(d, 0, 4);
  put16(d, u"f");
  put(d, 2, 2);
  put(d, 0x11, 2);
  put16(d, u"a");
  put(d, 0x22, 2);
  put16(d, u"bc");
  Record r(2, d);
  EXPECT_EQ(r.property({u"Entries", u"Code"}),
            std::make_pair(ULONG{ERROR_SUCCESS}, Bytes{0x11, 0}));
  EXPECT_EQ(r.property({u"Entries", u"Label"}, 0).second, Bytes({'a', 0, 0, 0}));
  EXPECT_EQ(r.property({u"Payload"}), std::make_pair(ULONG{ERROR_SUCCESS}, Bytes{}));
  EXPECT_EQ(r.property({u"Entries"}).second.size(), 2u + 4 + 2 + 6);  // the whole array
  auto member = [&](ULONG element, const char16_t* name) {
    PROPERTY_DATA_DESCRIPTOR desc[2] = {};
    desc[0].PropertyName = reinterpret_cast<ULONGLONG>(u"Entries");
    desc[0].ArrayIndex = element;
    desc[1].PropertyName = reinterpret_cast<ULONGLONG>(name);
    desc[1].ArrayIndex = ~ULONG{0};
    ULONG size = 0;
    const ULONG s = TdhGetPropertySize(r.get(), 0, nullptr, 2, desc, &size);
    return std::make_pair(s, size);
  };
  EXPECT_EQ(member(1, u"Label"), std::make_pair(ULONG{ERROR_SUCCESS}, ULONG{6}));
  EXPECT_EQ(member(1, u"Code"), std::make_pair(ULONG{ERROR_SUCCESS}, ULONG{2}));
  EXPECT_EQ(member(2, u"Code").first, ULONG{ERROR_INVALID_PARAMETER});
  EXPECT_EQ(member(0, u"Nope").first, ULONG{ERROR_NOT_FOUND});
  EXPECT_EQ(r.property({u"File", u"Code"}).first, ULONG{ERROR_NOT_FOUND});
  // A count that promises more elements than the payload holds.
  Bytes cut(d.begin(), d.end() - 4);
  Record short_record(2, cut);
  EXPECT_EQ(short_record.property({u"Entries", u"Code"}).first,
            ULONG{ERROR_EVT_INVALID_EVENT_DATA});
}

// Payloads of any bytes for the events with structs and counts from fields: every path gives a
// status the pages list (ERROR_EVT_INVALID_EVENT_DATA when the payload does not hold what the
// template says), never a read past the payload (ci/sanitizers runs this).
TEST_F(TdhSamples, ArbitraryPayloadsGiveAStatus) {
  etwrt::testing::Lcg next(99);
  const std::vector<std::vector<std::u16string>> paths = {
      {u"Payload"}, {u"Entries"}, {u"Entries", u"Label"}, {u"Corners", u"Y"}, {u"Samples"}};
  for (int round = 0; round < 3000; ++round) {
    Bytes d(next() % 96);
    for (auto& b : d) b = static_cast<std::uint8_t>(next() % 3 == 0 ? next() : next() % 4);
    Record r(static_cast<USHORT>(2 + round % 2), d);
    for (const auto& path : paths) {
      const ULONG status = r.property(path, next() % 3 == 0 ? ~ULONG{0} : next() % 3).first;
      ASSERT_TRUE(status == ERROR_SUCCESS || status == ERROR_EVT_INVALID_EVENT_DATA ||
                  status == ERROR_INVALID_PARAMETER || status == ERROR_NOT_FOUND)
          << status;
    }
  }
}

TEST_F(TdhSamples, ValueMapAndBitMap) {
  Bytes d;
  put(d, 0x43, 4);  // Read | Write | Delete
  put(d, 2, 4);     // Outbound
  put(d, 3, 1);     // Loopback, through a UInt8
  Record r(1, d);
  expect_both_ways(r, {"Access: Read | Write | Delete", "Way: Outbound", "Hint: Loopback"});
}

TEST_F(TdhSamples, LengthFromAFieldAndAStructArrayCountedByAField) {
  Bytes d;
  put(d, 3, 4);  // Size
  for (int b : {0x0A, 0x0B, 0xFC}) put(d, b, 1);
  for (int b = 1; b <= 6; ++b) put(d, b, 1);  // Tag, fixed length 6
  put(d, 1, 4);                               // Secure
  put16(d, u"C:\\logs\\a.etl");
  put(d, 2, 2);  // EntryCount
  put(d, 0x1F, 2);
  put16(d, u"first");
  put(d, 0xBEEF, 2);
  put16(d, u"second");
  Record r(2, d);
  expect_both_ways(r, {"Size: 3", "Payload: 0x0A0BFC", "Tag: 0x010203040506", "Secure: true",
                       "File: C:\\logs\\a.etl", "EntryCount: 2", "Code: 0x1F", "Label: first",
                       "Code: 0xBEEF", "Label: second"});
}

TEST_F(TdhSamples, AddressesTimesAndFixedArrays) {
  Bytes d;
  for (int b : {192, 168, 1, 20}) put(d, b, 1);  // Address
  put(d, 0x901F, 2);                             // Port 8080 in network order
  for (int b : {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}) put(d, b, 1);
  put(d, 0x6E2B9F10, 4);  // Session
  put(d, 0x0D4C, 2);
  put(d, 0x4A3B, 2);
  for (int b : {0x9B, 0x1E, 0x2C, 0x3D, 0x4E, 0x5F, 0x6A, 0x7B}) put(d, b, 1);
  put(d, 0x01DA6B0BB380EE87, 8);                                  // 2024-02-29 12:34:56.1234567
  for (int v : {2023, 12, 0, 31, 23, 59, 58, 250}) put(d, v, 2);  // Logged
  put(d, 5, 4);                                                   // Result
  put(d, 0xDEADBEEF00, 8);                                        // Mask
  put(d, 0x7FF612345678, 8);                                      // Where
  put(d, 0x3FD0000000000000, 8);                                  // Ratio 0.25
  put(d, static_cast<std::uint32_t>(-42), 4);                     // Delta
  for (char c : std::string("host-a")) put(d, static_cast<std::uint8_t>(c), 1);
  put(d, 0, 1);
  for (int v : {1, -2, 300}) put(d, static_cast<std::uint16_t>(v), 2);
  for (int v : {1, 2, -3, 4}) put(d, static_cast<std::uint32_t>(v), 4);
  Record r(3, d);
  expect_both_ways(r, {"Address: 192.168.1.20", "Port: 8080", "Peer: 2001:db8::1",
                       "Session: {6E2B9F10-0D4C-4A3B-9B1E-2C3D4E5F6A7B}",
                       "Created: 2024-02-29T12:34:56.1234567Z", "Logged: 2023-12-31T23:59:58.250Z",
                       "Result: 0x5", "Mask: 0xDEADBEEF00", "Where: 0x7FF612345678", "Ratio: 0.25",
                       "Delta: -42", "Host: host-a", "Samples: 1", "Samples: -2", "Samples: 300",
                       "X: 1", "Y: 2", "X: -3", "Y: 4"});
}

// The TdhFormatProperty sample's way on a TraceLogging event (TDH decodes those from their
// EVENT_SCHEMA_TL item): fixed-size fields carry their length (EVENT_PROPERTY_INFO page), a
// struct's members follow the top level, a binary's length is its "<name>.Length" property.
TEST(TdhSamplesTraceLogging, FormatPropertyWayDecodesEveryField) {
  const Bytes meta = etwrt::testing::TlMetadata("E")
                         .field("a", 7)       // INT32
                         .field("pt", 24, 2)  // struct of 2
                         .field("x", 6)
                         .field("y", 6)
                         .field("blob", 14)  // Binary: blob.Length then bytes
                         .field("s", 1)      // UNICODESTRING
                         .bytes();
  TdhRecord r(Bytes{0xFF, 0xFF, 0xFF, 0xFF, 2, 0, 3, 0, 2, 0, 0xAB, 0xCD, 'o', 0, 'k', 0, 0, 0});
  EVENT_HEADER_EXTENDED_DATA_ITEM item{};
  item.ExtType = EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL;
  item.DataSize = static_cast<USHORT>(meta.size());
  item.DataPtr = reinterpret_cast<ULONGLONG>(meta.data());
  r.get()->ExtendedDataCount = 1;
  r.get()->ExtendedData = &item;
  EXPECT_EQ(by_format_property(r.get()),
            (std::vector<std::string>{"a: -1", "x: 2", "y: 3", "blob.Length: 2", "blob: 0xABCD",
                                      "s: ok"}));
}

// The samples decode inside their EventRecordCallback: the same, on events a provider wrote
// with EventWrite (each field its own EVENT_DATA_DESCRIPTOR, as the "Defining Event Data
// Templates" page advises for struct members) and a realtime session delivered.
using Decoded = std::pair<std::vector<std::string>, std::vector<std::string>>;

std::optional<Decoded> decode_delivered(PEVENT_RECORD e) {
  if (std::memcmp(&e->EventHeader.ProviderId, &kProvider, sizeof(GUID)) != 0) return std::nullopt;
  return Decoded{by_format_property(e), by_get_property(e)};
}

// A broker of the test's own (a home in a fresh folder, ended with the test), the caller's
// ETWRT_HOME put back afterwards.
class PrivateHome {
 public:
  PrivateHome() {
    char pattern[] = "/tmp/etwrt-tdh-samples-XXXXXX";
    if (::mkdtemp(pattern) != nullptr) dir = pattern;
    const char* before = ::getenv("ETWRT_HOME");
    had_home_ = before != nullptr;
    if (had_home_) home_kept_ = before;
    ::setenv("ETWRT_HOME", (dir + "/home").c_str(), 1);
    ::setenv("ETWRT_BROKER_OWNER_PID", std::to_string(::getpid()).c_str(), 1);
  }
  ~PrivateHome() {
    std::ifstream in(dir + "/home/broker.pid");
    pid_t pid = 0;
    if (in >> pid && pid > 0) ::kill(pid, SIGTERM);
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
    if (had_home_) {
      ::setenv("ETWRT_HOME", home_kept_.c_str(), 1);
    } else {
      ::unsetenv("ETWRT_HOME");
    }
  }
  std::string dir;

 private:
  bool had_home_ = false;
  std::string home_kept_;
};

// The Records event written as the "Writing Manifest-based Events" sample writes its event:
// each field, struct members included, its own EVENT_DATA_DESCRIPTOR.
ULONG write_records_event(REGHANDLE provider) {
  const ULONG size = 2, secure = 0;
  const BYTE payload[] = {0xAB, 0xCD}, tag[] = {9, 8, 7, 6, 5, 4};
  const std::u16string file = u"D:\\x.log", first = u"one";
  const USHORT entries = 1, code = 0x7;
  std::vector<EVENT_DATA_DESCRIPTOR> d(8);
  EventDataDescCreate(&d[0], &size, 4);
  EventDataDescCreate(&d[1], payload, 2);
  EventDataDescCreate(&d[2], tag, 6);
  EventDataDescCreate(&d[3], &secure, 4);
  EventDataDescCreate(&d[4], file.c_str(), static_cast<ULONG>(2 * (file.size() + 1)));
  EventDataDescCreate(&d[5], &entries, 2);
  EventDataDescCreate(&d[6], &code, 2);
  EventDataDescCreate(&d[7], first.c_str(), static_cast<ULONG>(2 * (first.size() + 1)));
  EVENT_DESCRIPTOR event;
  EventDescCreate(&event, 2, 0, 0, 4, 0, 1, 0);
  return EventWrite(provider, &event, static_cast<ULONG>(d.size()), d.data());
}

// The samples' provider registered, and the session `name` of properties `p` started with it
// enabled (level 5).
void register_and_start(const char* name, etwrt::testing::TraceProperties& p, REGHANDLE& provider,
                        TRACEHANDLE& session) {
  ASSERT_EQ(EventRegister(&kProvider, nullptr, nullptr, &provider), ULONG{ERROR_SUCCESS});
  ASSERT_EQ(StartTraceA(&session, name, p.get()), ULONG{ERROR_SUCCESS});
  ASSERT_EQ(EnableTraceEx2(session, &kProvider, 1, 5, 0, 0, 10000, nullptr), ULONG{ERROR_SUCCESS});
}

const std::vector<std::string> kRecordsDecoded = {
    "Size: 2",         "Payload: 0xABCD", "Tag: 0x090807060504", "Secure: false",
    "File: D:\\x.log", "EntryCount: 1",   "Code: 0x7",           "Label: one"};

TEST_F(TdhSamples, DeliveredEventsDecodeInTheCallback) {
  PrivateHome home;
  ASSERT_FALSE(home.dir.empty());
  REGHANDLE provider = 0;
  TRACEHANDLE session = 0;
  etwrt::testing::TraceProperties p;
  ASSERT_NO_FATAL_FAILURE(register_and_start("tdh-samples", p, provider, session));
  std::vector<Decoded> seen;
  {
    etwrt::testing::ThreadConsumer<Decoded> consumer("tdh-samples", &decode_delivered);
    EXPECT_EQ(write_records_event(provider), ULONG{ERROR_SUCCESS});
    consumer.wait_for(1);
    EXPECT_EQ(ControlTraceA(session, nullptr, p.get(), EVENT_TRACE_CONTROL_STOP),
              ULONG{ERROR_SUCCESS});
    consumer.join();
    seen = consumer.events();
  }
  EventUnregister(provider);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].first, kRecordsDecoded);
  EXPECT_EQ(seen[0].second, kRecordsDecoded);
}

std::vector<Decoded>* g_file_events = nullptr;

VOID WINAPI on_file_record(PEVENT_RECORD e) {
  if (std::optional<Decoded> d = decode_delivered(e); d && g_file_events != nullptr) {
    g_file_events->push_back(*d);
  }
}

// The samples' own shape: OpenTraceW on the .etl file a file session wrote (the
// documentation's controller sample writes one, EVENT_TRACE_FILE_MODE_SEQUENTIAL),
// ProcessTrace on the calling thread, every field decoded in the EventRecordCallback.
TEST_F(TdhSamples, TraceFileEventsDecodeInTheCallback) {
  PrivateHome home;
  ASSERT_FALSE(home.dir.empty());
  const std::string file = home.dir + "/samples.etl";
  etwrt::testing::TraceProperties p(2048);
  p.get()->LogFileMode = EVENT_TRACE_FILE_MODE_SEQUENTIAL;
  p.get()->LogFileNameOffset = sizeof(EVENT_TRACE_PROPERTIES) + 1024;
  std::memcpy(p.bytes.data() + p.get()->LogFileNameOffset, file.c_str(), file.size() + 1);
  REGHANDLE provider = 0;
  TRACEHANDLE session = 0;
  ASSERT_NO_FATAL_FAILURE(register_and_start("tdh-samples-file", p, provider, session));
  EXPECT_EQ(write_records_event(provider), ULONG{ERROR_SUCCESS});
  EXPECT_EQ(ControlTraceA(session, nullptr, p.get(), EVENT_TRACE_CONTROL_STOP),
            ULONG{ERROR_SUCCESS});
  EventUnregister(provider);

  std::u16string wide_file(file.begin(), file.end());
  EVENT_TRACE_LOGFILEW log{};
  log.LogFileName = reinterpret_cast<LPWSTR>(wide_file.data());
  log.ProcessTraceMode = PROCESS_TRACE_MODE_EVENT_RECORD;
  log.EventRecordCallback = &on_file_record;
  TRACEHANDLE trace = OpenTraceW(&log);
  ASSERT_NE(trace, INVALID_PROCESSTRACE_HANDLE);
  std::vector<Decoded> seen;
  g_file_events = &seen;
  EXPECT_EQ(ProcessTrace(&trace, 1, nullptr, nullptr), ULONG{ERROR_SUCCESS});
  g_file_events = nullptr;
  EXPECT_EQ(CloseTrace(trace), ULONG{ERROR_SUCCESS});
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].first, kRecordsDecoded);
  EXPECT_EQ(seen[0].second, kRecordsDecoded);
}

}  // namespace
