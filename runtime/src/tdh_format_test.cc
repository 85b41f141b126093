// TdhFormatProperty (sdk-api-src/content/tdh/nf-tdh-tdhformatproperty.md) on values made by
// hand: each in-type and out-type etwrt formats, the buffer protocol (ERROR_INSUFFICIENT_BUFFER
// with the size, the size 0 and NULL buffer query), UserDataConsumed, ERROR_EVT_INVALID_EVENT_DATA
// for data shorter than the value. The texts the pages leave open are docs/etwrt/conformance.md,
// "TDH formatting". TdhGetEventMapInformation (nf-tdh-tdhgeteventmapinformation.md) and
// EVENT_MAP_INFO (ns-tdh-event_map_info.md) on testdata/tdh_samples.man; the tdh.h layouts against
// the SDK's.
#include "tdh_test_record.h"

#include <windows.h>
#include <evntcons.h>
#include <tdh.h>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace {

using etwrt::testing::Bytes;
using etwrt::testing::TdhRecord;

// Sizes and offsets of the SDK's tdh.h (as mingw-w64's tdh.h lays them out too).
static_assert(sizeof(EVENT_MAP_ENTRY) == 8);
static_assert(offsetof(EVENT_MAP_ENTRY, Value) == 4 && offsetof(EVENT_MAP_ENTRY, InputOffset) == 4);
static_assert(sizeof(EVENT_MAP_INFO) == 24);
static_assert(offsetof(EVENT_MAP_INFO, Flag) == 4 && offsetof(EVENT_MAP_INFO, EntryCount) == 8);
static_assert(offsetof(EVENT_MAP_INFO, FormatStringOffset) == 12);
static_assert(offsetof(EVENT_MAP_INFO, MapEntryArray) == 16);
static_assert(sizeof(EVENT_PROPERTY_INFO) == 24);
static_assert(offsetof(EVENT_PROPERTY_INFO, structType.StructStartIndex) == 8);
static_assert(offsetof(EVENT_PROPERTY_INFO, structType.NumOfStructMembers) == 10);
static_assert(offsetof(EVENT_PROPERTY_INFO, nonStructType.MapNameOffset) == 12);
static_assert(offsetof(EVENT_PROPERTY_INFO, count) == 16);
static_assert(offsetof(EVENT_PROPERTY_INFO, length) == 18);
static_assert(TDH_INTYPE_COUNTEDSTRING == 300 && TDH_INTYPE_WBEMSID == 310);
static_assert(TDH_INTYPE_SIZET == 308 && TDH_INTYPE_HEXDUMP == 309);
static_assert(TDH_OUTTYPE_REDUCEDSTRING == 300 && TDH_OUTTYPE_NOPRINT == 301);

std::string narrow(const std::vector<WCHAR>& s) {
  std::string out;
  for (WCHAR c : s) {
    if (c == 0) break;
    out.push_back(c < 0x80 ? static_cast<char>(c) : '?');
  }
  return out;
}

struct Formatted {
  ULONG status = 0;
  std::string text;
  USHORT consumed = 0;
};

TRACE_EVENT_INFO g_info{};

// TdhFormatProperty as the page says to call it: the size first (NULL buffer, size 0).
Formatted format(USHORT in, USHORT out, Bytes data, USHORT length = 0, ULONG pointer = 8,
                 EVENT_MAP_INFO* map = nullptr) {
  Formatted f;
  ULONG size = 0;
  f.status =
      TdhFormatProperty(&g_info, map, pointer, in, out, length, static_cast<USHORT>(data.size()),
                        data.data(), &size, nullptr, &f.consumed);
  if (f.status != ERROR_INSUFFICIENT_BUFFER) return f;
  std::vector<WCHAR> text(size / sizeof(WCHAR));
  f.status =
      TdhFormatProperty(&g_info, map, pointer, in, out, length, static_cast<USHORT>(data.size()),
                        data.data(), &size, text.data(), &f.consumed);
  f.text = narrow(text);
  return f;
}

std::string text(USHORT in, USHORT out, Bytes data, USHORT length = 0, ULONG pointer = 8) {
  const Formatted f = format(in, out, std::move(data), length, pointer);
  EXPECT_EQ(f.status, ULONG{ERROR_SUCCESS});
  return f.text;
}

Bytes le(std::uint64_t v, std::size_t n) {
  Bytes b;
  for (std::size_t i = 0; i < n; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  return b;
}

TEST(TdhFormatProperty, IntegersInDecimalAndHexOutTypes) {
  EXPECT_EQ(text(TDH_INTYPE_INT8, 0, {0xFE}), "-2");
  EXPECT_EQ(text(TDH_INTYPE_UINT8, 0, {0xFE}), "254");
  EXPECT_EQ(text(TDH_INTYPE_INT16, 0, le(0x8000, 2)), "-32768");
  EXPECT_EQ(text(TDH_INTYPE_INT32, 0, le(0xFFFFFFFF, 4)), "-1");
  EXPECT_EQ(text(TDH_INTYPE_UINT32, 0, le(0xFFFFFFFF, 4)), "4294967295");
  EXPECT_EQ(text(TDH_INTYPE_INT64, 0, le(~0ull, 8)), "-1");
  EXPECT_EQ(text(TDH_INTYPE_UINT64, 0, le(~0ull, 8)), "18446744073709551615");
  EXPECT_EQ(text(TDH_INTYPE_UINT8, TDH_OUTTYPE_HEXINT8, {0xAB}), "0xAB");
  EXPECT_EQ(text(TDH_INTYPE_UINT16, TDH_OUTTYPE_HEXINT16, le(0xBEEF, 2)), "0xBEEF");
  EXPECT_EQ(text(TDH_INTYPE_UINT32, TDH_OUTTYPE_HEXINT32, le(0xA, 4)), "0xA");
  EXPECT_EQ(text(TDH_INTYPE_UINT64, TDH_OUTTYPE_HEXINT64, le(0x1234567890ull, 8)), "0x1234567890");
  EXPECT_EQ(text(TDH_INTYPE_HEXINT32, 0, le(0x80070005, 4)), "0x80070005");
  EXPECT_EQ(text(TDH_INTYPE_HEXINT64, 0, le(0xFFull << 56, 8)), "0xFF00000000000000");
  EXPECT_EQ(text(TDH_INTYPE_UINT32, TDH_OUTTYPE_HRESULT, le(0x80004005, 4)), "0x80004005");
  EXPECT_EQ(text(TDH_INTYPE_UINT32, TDH_OUTTYPE_PID, le(4242, 4)), "4242");
  EXPECT_EQ(text(TDH_INTYPE_UINT8, TDH_OUTTYPE_BOOLEAN, {0}), "false");
}

TEST(TdhFormatProperty, BooleansRealsGuidsPointers) {
  EXPECT_EQ(text(TDH_INTYPE_BOOLEAN, 0, le(0, 4)), "false");
  EXPECT_EQ(text(TDH_INTYPE_BOOLEAN, 0, le(7, 4)), "true");
  EXPECT_EQ(text(TDH_INTYPE_FLOAT, 0, le(0x3FC00000, 4)), "1.5");
  EXPECT_EQ(text(TDH_INTYPE_DOUBLE, 0, le(0xC059000000000000ull, 8)), "-100");
  // A GUID in registry form: Data1-3 little-endian, Data4 in byte order, upper case.
  Bytes g = le(0x01020304, 4);
  for (auto b : le(0x0506, 2)) g.push_back(b);
  for (auto b : le(0x0708, 2)) g.push_back(b);
  for (int b : {0x09, 0x0A, 0xAB, 0xCD, 0xEF, 0x10, 0x20, 0x30}) g.push_back(b);
  EXPECT_EQ(text(TDH_INTYPE_GUID, 0, g), "{01020304-0506-0708-090A-ABCDEF102030}");
  // PointerSize decides a pointer's bytes (TdhFormatProperty page).
  const Formatted p32 = format(TDH_INTYPE_POINTER, 0, le(0x1122334455667788ull, 8), 0, 4);
  EXPECT_EQ(p32.text, "0x55667788");
  EXPECT_EQ(p32.consumed, 4);
  EXPECT_EQ(text(TDH_INTYPE_POINTER, 0, le(0x00007FF6ABCD0000ull, 8)), "0x7FF6ABCD0000");
  EXPECT_EQ(format(TDH_INTYPE_POINTER, 0, le(1, 8), 0, 6).status, ULONG{ERROR_INVALID_PARAMETER});
}

TEST(TdhFormatProperty, TimesAddressesAndSids) {
  EXPECT_EQ(text(TDH_INTYPE_FILETIME, 0, le(0, 8)), "1601-01-01T00:00:00.0000000Z");
  EXPECT_EQ(text(TDH_INTYPE_FILETIME, 0, le(116444736000000001ull, 8)),
            "1970-01-01T00:00:00.0000001Z");
  Bytes st;
  for (int v : {2000, 2, 2, 29, 1, 2, 3, 4}) {
    for (auto b : le(v, 2)) st.push_back(b);
  }
  EXPECT_EQ(text(TDH_INTYPE_SYSTEMTIME, 0, st), "2000-02-29T01:02:03.004Z");
  EXPECT_EQ(text(TDH_INTYPE_UINT32, TDH_OUTTYPE_IPV4, {10, 0, 0, 255}), "10.0.0.255");
  EXPECT_EQ(text(TDH_INTYPE_UINT16, TDH_OUTTYPE_PORT, {0x01, 0xBB}), "443");
  auto v6 = [](std::vector<int> bytes) {
    Bytes b(bytes.begin(), bytes.end());
    return text(TDH_INTYPE_BINARY, TDH_OUTTYPE_IPV6, b);  // length 0: 16 bytes (page)
  };
  EXPECT_EQ(v6({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}), "::1");
  EXPECT_EQ(v6({0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}), "fe80::");
  EXPECT_EQ(v6({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1}), "2001:db8:0:1::1");
  EXPECT_EQ(v6({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 1}), "::ffff:192.0.2.1");
  EXPECT_EQ(v6({0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1}),
            "2001:db8:1:0:1:1:1:1");  // one zero group is not shortened (RFC 5952)
  // S-1-5-21-1-2-3 (revision, 3 sub-authorities, authority 5 big-endian, sub-authorities LE).
  Bytes sid = {1, 4, 0, 0, 0, 0, 0, 5};
  for (ULONG v : {21u, 1u, 2u, 3u}) {
    for (auto b : le(v, 4)) sid.push_back(b);
  }
  const Formatted s = format(TDH_INTYPE_SID, 0, sid);
  EXPECT_EQ(s.text, "S-1-5-21-1-2-3");
  EXPECT_EQ(s.consumed, 24);
  Bytes wbem(16, 0xCC);  // a 64-bit TOKEN_USER, then the SID
  for (std::uint8_t b : sid) wbem.push_back(b);
  EXPECT_EQ(text(TDH_INTYPE_WBEMSID, 0, wbem), "S-1-5-21-1-2-3");
}

TEST(TdhFormatProperty, StringsAndBinaries) {
  const Formatted w = format(TDH_INTYPE_UNICODESTRING, 0, {'h', 0, 'i', 0, 0, 0, 'x', 0});
  EXPECT_EQ(w.text, "hi");
  EXPECT_EQ(w.consumed, 6);  // through the NUL, not past it
  EXPECT_EQ(format(TDH_INTYPE_UNICODESTRING, 0, {'a', 0, 'b', 0}, 1).consumed, 2);
  EXPECT_EQ(text(TDH_INTYPE_ANSISTRING, 0, {'o', 'k', 0}), "ok");
  EXPECT_EQ(text(TDH_INTYPE_MANIFEST_COUNTEDSTRING, 0, {4, 0, 'o', 0, 'k', 0}), "ok");
  EXPECT_EQ(text(TDH_INTYPE_COUNTEDANSISTRING, 0, {2, 0, 'o', 'k'}), "ok");
  EXPECT_EQ(text(TDH_INTYPE_REVERSEDCOUNTEDSTRING, 0, {0, 4, 'o', 0, 'k', 0}), "ok");
  EXPECT_EQ(text(TDH_INTYPE_NONNULLTERMINATEDANSISTRING, 0, {'a', 'b', 'c'}), "abc");
  EXPECT_EQ(text(TDH_INTYPE_UNICODECHAR, 0, {'Z', 0}), "Z");
  EXPECT_EQ(text(TDH_INTYPE_ANSICHAR, 0, {'q'}), "q");
  EXPECT_EQ(text(TDH_INTYPE_BINARY, 0, {0x00, 0xAB, 0x7F}, 3), "0x00AB7F");
  EXPECT_EQ(text(TDH_INTYPE_HEXDUMP, 0, {2, 0, 0, 0, 0xDE, 0xAD}), "0xDEAD");
  EXPECT_EQ(text(TDH_INTYPE_MANIFEST_COUNTEDBINARY, 0, {1, 0, 0x5A}), "0x5A");
}

TEST(TdhFormatProperty, BufferProtocolAndBadData) {
  Bytes v = le(12345, 4);
  ULONG size = 0;
  USHORT consumed = 0;
  EXPECT_EQ(TdhFormatProperty(&g_info, nullptr, 8, TDH_INTYPE_UINT32, 0, 4, 4, v.data(), &size,
                              nullptr, &consumed),
            ULONG{ERROR_INSUFFICIENT_BUFFER});
  EXPECT_EQ(size, 6 * sizeof(WCHAR));  // "12345" and its NUL
  std::vector<WCHAR> buffer(6, 0x7777);
  size = 5 * sizeof(WCHAR);  // one unit short: nothing written, the size again
  EXPECT_EQ(TdhFormatProperty(&g_info, nullptr, 8, TDH_INTYPE_UINT32, 0, 4, 4, v.data(), &size,
                              buffer.data(), &consumed),
            ULONG{ERROR_INSUFFICIENT_BUFFER});
  EXPECT_EQ(size, 6 * sizeof(WCHAR));
  EXPECT_EQ(buffer[0], 0x7777);
  EXPECT_EQ(TdhFormatProperty(&g_info, nullptr, 8, TDH_INTYPE_UINT32, 0, 4, 4, v.data(), &size,
                              buffer.data(), &consumed),
            ULONG{ERROR_SUCCESS});
  EXPECT_EQ(consumed, 4);
  EXPECT_EQ(narrow(buffer), "12345");
  // Data shorter than the value: the page's ERROR_EVT_INVALID_EVENT_DATA.
  EXPECT_EQ(format(TDH_INTYPE_UINT32, 0, {1, 2, 3}).status, ULONG{ERROR_EVT_INVALID_EVENT_DATA});
  EXPECT_EQ(format(TDH_INTYPE_GUID, 0, Bytes(15)).status, ULONG{ERROR_EVT_INVALID_EVENT_DATA});
  EXPECT_EQ(format(TDH_INTYPE_UNICODESTRING, 0, {'a', 0}).status,
            ULONG{ERROR_EVT_INVALID_EVENT_DATA});  // no NUL
  EXPECT_EQ(format(TDH_INTYPE_MANIFEST_COUNTEDSTRING, 0, {9, 0, 'a', 0}).status,
            ULONG{ERROR_EVT_INVALID_EVENT_DATA});
  EXPECT_EQ(format(TDH_INTYPE_SID, 0, {1, 5, 0, 0, 0, 0, 0, 5}).status,
            ULONG{ERROR_EVT_INVALID_EVENT_DATA});
  // Parameters that are not valid.
  EXPECT_EQ(format(999, 0, le(1, 4)).status, ULONG{ERROR_INVALID_PARAMETER});
  EXPECT_EQ(TdhFormatProperty(&g_info, nullptr, 8, TDH_INTYPE_UINT32, 0, 4, 4, v.data(), nullptr,
                              nullptr, &consumed),
            ULONG{ERROR_INVALID_PARAMETER});
  EXPECT_EQ(TdhFormatProperty(nullptr, nullptr, 8, TDH_INTYPE_UINT32, 0, 4, 4, v.data(), &size,
                              nullptr, &consumed),
            ULONG{ERROR_INVALID_PARAMETER});
}

// Any bytes, any in-type, out-type, length and pointer size: a status the page lists, and on
// success a consumed count within the data and a NUL-terminated text (no crash, no overread:
// run under the sanitizers by ci/sanitizers).
TEST(TdhFormatProperty, ArbitraryDataNeverOverreads) {
  etwrt::testing::Lcg next(12345);
  const std::vector<USHORT> in_types = {
      0,  1,  2,  3,  4,  5,  6,   7,   8,   9,   10,  11,  12,  13,  14,  15,  16,  17,  18, 19,
      20, 21, 22, 23, 24, 25, 300, 301, 302, 303, 304, 305, 306, 307, 308, 309, 310, 311, 999};
  const std::vector<USHORT> out_types = {0,
                                         TDH_OUTTYPE_IPV4,
                                         TDH_OUTTYPE_IPV6,
                                         TDH_OUTTYPE_PORT,
                                         TDH_OUTTYPE_HEXINT8,
                                         TDH_OUTTYPE_BOOLEAN};
  for (int round = 0; round < 4000; ++round) {
    Bytes data(next() % 48);
    for (auto& b : data) b = static_cast<std::uint8_t>(next() % 4 == 0 ? 0 : next());
    const USHORT in = in_types[next() % in_types.size()];
    const USHORT out = out_types[next() % out_types.size()];
    const auto length = static_cast<USHORT>(next() % 3 == 0 ? next() % 64 : 0);
    const ULONG pointer = next() % 5 == 0 ? next() : (next() % 2 != 0 ? 8 : 4);
    const Formatted f = format(in, out, data, length, pointer);
    const bool listed = f.status == ERROR_SUCCESS || f.status == ERROR_INVALID_PARAMETER ||
                        f.status == ERROR_EVT_INVALID_EVENT_DATA;
    ASSERT_TRUE(listed) << f.status << " for in-type " << in;
    if (f.status == ERROR_SUCCESS) {
      ASSERT_LE(f.consumed, data.size()) << in;
    }
  }
}

// testdata/tdh_samples.man's maps, through TdhGetEventMapInformation.
class TdhMaps : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::u16string(ETWRT_TDH_SAMPLES_MANIFEST,
                           ETWRT_TDH_SAMPLES_MANIFEST + sizeof(ETWRT_TDH_SAMPLES_MANIFEST) - 1);
    ASSERT_EQ(TdhLoadManifest(reinterpret_cast<PWSTR>(path_.data())), ULONG{ERROR_SUCCESS});
    record_.get()->EventHeader.ProviderId = {
        0x3B0E84C2, 0x7D1A, 0x4F6E, {0xA2, 0xC5, 0x90, 0xD1, 0xE3, 0xF4, 0xA5, 0xB6}};
    record_.get()->EventHeader.EventDescriptor.Id = 1;
  }
  void TearDown() override { TdhUnloadManifest(reinterpret_cast<PWSTR>(path_.data())); }

  ULONG map(const char16_t* name, std::vector<BYTE>& out) {
    std::u16string n(name);
    auto* w = reinterpret_cast<PWSTR>(n.data());
    ULONG size = 0;
    const ULONG s = TdhGetEventMapInformation(record_.get(), w, nullptr, &size);
    if (s != ERROR_INSUFFICIENT_BUFFER) return s;
    out.assign(size, 0);
    ULONG small = size - 1;
    EXPECT_EQ(TdhGetEventMapInformation(record_.get(), w,
                                        reinterpret_cast<EVENT_MAP_INFO*>(out.data()), &small),
              ULONG{ERROR_INSUFFICIENT_BUFFER});
    EXPECT_EQ(small, size);
    return TdhGetEventMapInformation(record_.get(), w,
                                     reinterpret_cast<EVENT_MAP_INFO*>(out.data()), &size);
  }

  static std::string entry(const std::vector<BYTE>& m, ULONG i) {
    const auto* info = reinterpret_cast<const EVENT_MAP_INFO*>(m.data());
    std::string s;
    for (std::size_t at = info->MapEntryArray[i].OutputOffset; m[at] | m[at + 1]; at += 2)
      s.push_back(static_cast<char>(m[at]));
    return s;
  }

  std::u16string path_;
  TdhRecord record_{Bytes{}};
};

TEST_F(TdhMaps, ValueMapAndBitMapWithTheirFlagsAndTrailingSpace) {
  std::vector<BYTE> m;
  ASSERT_EQ(map(u"Direction", m), ULONG{ERROR_SUCCESS});
  const auto* info = reinterpret_cast<const EVENT_MAP_INFO*>(m.data());
  EXPECT_EQ(info->Flag, EVENTMAP_INFO_FLAG_MANIFEST_VALUEMAP);
  EXPECT_EQ(info->MapEntryValueType, EVENTMAP_ENTRY_VALUETYPE_ULONG);
  ASSERT_EQ(info->EntryCount, 3u);
  EXPECT_EQ(info->MapEntryArray[1].Value, 2u);
  EXPECT_EQ(entry(m, 1), "Outbound ");  // the page: "Monday " for "Monday"
  ASSERT_EQ(map(u"Permissions", m), ULONG{ERROR_SUCCESS});
  info = reinterpret_cast<const EVENT_MAP_INFO*>(m.data());
  EXPECT_EQ(info->Flag, EVENTMAP_INFO_FLAG_MANIFEST_BITMAP);
  ASSERT_EQ(info->EntryCount, 4u);
  EXPECT_EQ(info->MapEntryArray[3].Value, 0x40u);
  EXPECT_EQ(entry(m, 3), "Delete ");
}

TEST_F(TdhMaps, StatusesOfTheReferencePage) {
  std::vector<BYTE> m;
  EXPECT_EQ(map(u"NoSuchMap", m), ULONG{ERROR_NOT_FOUND});
  record_.get()->EventHeader.EventDescriptor.Id = 99;  // no schema for the event
  EXPECT_EQ(map(u"Direction", m), ULONG{ERROR_NOT_FOUND});
  ULONG size = 0;
  EXPECT_EQ(TdhGetEventMapInformation(record_.get(), nullptr, nullptr, &size),
            ULONG{ERROR_INVALID_PARAMETER});
}

// A mapped value with the map's texts as the caller holds them; unmatched values in decimal.
TEST_F(TdhMaps, FormattingThroughAMap) {
  std::vector<BYTE> bits, values;
  ASSERT_EQ(map(u"Permissions", bits), ULONG{ERROR_SUCCESS});
  ASSERT_EQ(map(u"Direction", values), ULONG{ERROR_SUCCESS});
  auto* b = reinterpret_cast<EVENT_MAP_INFO*>(bits.data());
  auto* v = reinterpret_cast<EVENT_MAP_INFO*>(values.data());
  EXPECT_EQ(format(TDH_INTYPE_UINT32, 0, le(0x5, 4), 0, 8, b).text, "Read  | Execute ");
  EXPECT_EQ(format(TDH_INTYPE_UINT32, 0, le(0x80, 4), 0, 8, b).text, "128");
  EXPECT_EQ(format(TDH_INTYPE_UINT16, 0, le(3, 2), 0, 8, v).text, "Loopback ");
  EXPECT_EQ(format(TDH_INTYPE_UINT32, 0, le(9, 4), 0, 8, v).text, "9");
  // Without the map the number itself (page: "If you do not provide the map information").
  EXPECT_EQ(format(TDH_INTYPE_UINT32, 0, le(0x5, 4)).text, "5");
}

}  // namespace
