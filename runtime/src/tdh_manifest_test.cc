// tdh.h for manifest events: TdhLoadManifest on runtime/testdata/tdh_test.man (written for this
// test), then TdhGetEventInformation / TdhGetPropertySize / TdhGetProperty on hand-made
// EVENT_RECORDs of its provider. Statuses from the TdhLoadManifest, TdhUnloadManifest and
// TdhGetEventInformation pages (sdk-api-src/content/tdh/); layouts from TRACE_EVENT_INFO and
// EVENT_PROPERTY_INFO; in-types from _TDH_IN_TYPE and the EventManifest InputType page.
#include "tdh_test_record.h"

#include <windows.h>
#include <evntcons.h>
#include <tdh.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

using etwrt::testing::as_info;
using etwrt::testing::Bytes;
using etwrt::testing::TdhRecord;
using etwrt::testing::text16;

constexpr GUID kProvider = {
    0x6E2B9F10, 0x0D4C, 0x4A3B, {0x9B, 0x1E, 0x2C, 0x3D, 0x4E, 0x5F, 0x6A, 0x7B}};

std::u16string wide(const std::string& s) { return std::u16string(s.begin(), s.end()); }

ULONG load(const std::string& path) {
  std::u16string w = wide(path);
  return TdhLoadManifest(reinterpret_cast<PWSTR>(w.data()));
}
ULONG unload(const std::string& path) {
  std::u16string w = wide(path);
  return TdhUnloadManifest(reinterpret_cast<PWSTR>(w.data()));
}

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

// A manifest event of kProvider: its Id, Version and user data.
class Record : public TdhRecord {
 public:
  Record(USHORT id, UCHAR version, Bytes data) : TdhRecord(std::move(data)) {
    get()->EventHeader.ProviderId = kProvider;
    get()->EventHeader.EventDescriptor.Id = id;
    get()->EventHeader.EventDescriptor.Version = version;
  }
};

void put(Bytes& b, std::uint64_t v, std::size_t n) {
  // Bytes past the eighth are 0 (a shift by 64 or more is undefined).
  for (std::size_t i = 0; i < n; ++i) {
    b.push_back(i < 8 ? static_cast<std::uint8_t>(v >> (8 * i)) : std::uint8_t{0});
  }
}

class TdhManifest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(load(ETWRT_TDH_TEST_MANIFEST), ULONG{ERROR_SUCCESS}); }
  void TearDown() override { unload(ETWRT_TDH_TEST_MANIFEST); }
};

TEST_F(TdhManifest, NamesOfTheEventFromTheManifest) {
  Bytes data;
  for (std::size_t n : {1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 4, 16, 8, 8, 16}) put(data, 0, n);
  Record r(1, 0, data);
  const Bytes info = r.info();
  const TRACE_EVENT_INFO& t = as_info(info);
  EXPECT_EQ(t.DecodingSource, DecodingSourceXMLFile);
  EXPECT_EQ(text16(info, t.ProviderNameOffset), u"Etwh-Test-Manifest");
  EXPECT_EQ(text16(info, t.EventNameOffset), u"AllScalars");
  EXPECT_EQ(text16(info, t.LevelNameOffset), u"Information");
  EXPECT_EQ(text16(info, t.TaskNameOffset), u"Transfer");
  EXPECT_EQ(text16(info, t.OpcodeNameOffset), u"Start");
  EXPECT_EQ(text16(info, t.ChannelNameOffset), u"Etwh-Test-Manifest/Operational");
  EXPECT_EQ(text16(info, t.EventMessageOffset), u"Scalars %1 and %2");
  // KeywordsNameOffset: a list of strings ended by two NULs (TRACE_EVENT_INFO page).
  ASSERT_NE(t.KeywordsNameOffset, 0u);
  EXPECT_EQ(text16(info, t.KeywordsNameOffset), u"Net");
  EXPECT_EQ(text16(info, t.KeywordsNameOffset + 8), u"Disk I/O");  // from the string table
  EXPECT_EQ(info[t.KeywordsNameOffset + 8 + 18] | info[t.KeywordsNameOffset + 8 + 19], 0);
  ASSERT_EQ(t.PropertyCount, 15u);
  EXPECT_EQ(t.TopLevelPropertyCount, 15u);
  const USHORT in_types[] = {TDH_INTYPE_INT8,    TDH_INTYPE_UINT8,    TDH_INTYPE_INT16,
                             TDH_INTYPE_UINT16,  TDH_INTYPE_INT32,    TDH_INTYPE_UINT32,
                             TDH_INTYPE_INT64,   TDH_INTYPE_UINT64,   TDH_INTYPE_FLOAT,
                             TDH_INTYPE_DOUBLE,  TDH_INTYPE_BOOLEAN,  TDH_INTYPE_GUID,
                             TDH_INTYPE_POINTER, TDH_INTYPE_FILETIME, TDH_INTYPE_SYSTEMTIME};
  for (ULONG i = 0; i < 15; ++i) {
    EXPECT_EQ(t.EventPropertyInfoArray[i].nonStructType.InType, in_types[i]) << i;
  }
  EXPECT_EQ(text16(info, t.EventPropertyInfoArray[5].NameOffset), u"U32");
  EXPECT_EQ(t.EventPropertyInfoArray[5].nonStructType.OutType, TDH_OUTTYPE_HEXINT32);
}

TEST_F(TdhManifest, ScalarValuesBySize) {
  // Each field's bytes all hold its position (1 for I8, 2 for U8, ...).
  const std::size_t sizes[] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 4, 16, 8, 8, 16};
  Bytes with;
  for (std::size_t i = 0; i < 15; ++i) with.insert(with.end(), sizes[i], std::uint8_t(i + 1));
  Record r(1, 0, with);
  EXPECT_EQ(r.property({u"I8"}), std::make_pair(ULONG{ERROR_SUCCESS}, Bytes{1}));
  EXPECT_EQ(r.property({u"U16"}), std::make_pair(ULONG{ERROR_SUCCESS}, Bytes(2, 4)));
  EXPECT_EQ(r.property({u"U64"}), std::make_pair(ULONG{ERROR_SUCCESS}, Bytes(8, 8)));
  EXPECT_EQ(r.property({u"G"}), std::make_pair(ULONG{ERROR_SUCCESS}, Bytes(16, 12)));
  EXPECT_EQ(r.property({u"P"}), std::make_pair(ULONG{ERROR_SUCCESS}, Bytes(8, 13)));
  EXPECT_EQ(r.property({u"ST"}), std::make_pair(ULONG{ERROR_SUCCESS}, Bytes(16, 15)));
  EXPECT_EQ(r.property({u"Nope"}).first, ULONG{ERROR_NOT_FOUND});
  // A 32-bit provider's pointers are 4 bytes (EVENT_HEADER_FLAG_32_BIT_HEADER).
  Bytes short_data(with);
  short_data.erase(short_data.begin() + 1 + 1 + 2 + 2 + 4 + 4 + 8 + 8 + 4 + 8 + 4 + 16,
                   short_data.begin() + 1 + 1 + 2 + 2 + 4 + 4 + 8 + 8 + 4 + 8 + 4 + 16 + 4);
  Record r32(1, 0, short_data);
  r32.get()->EventHeader.Flags = EVENT_HEADER_FLAG_32_BIT_HEADER;
  EXPECT_EQ(r32.property({u"P"}).second, Bytes(4, 13));
  // The payload too short for the template.
  Record cut(1, 0, Bytes(with.begin(), with.end() - 1));
  EXPECT_EQ(cut.property({u"I8"}).first, ULONG{ERROR_EVT_INVALID_EVENT_DATA});
}

TEST_F(TdhManifest, StringsBinaryAndCountsFromFields) {
  Bytes d;
  for (char16_t c : std::u16string(u"h\u00e9!")) put(d, c, 2);
  put(d, 0, 2);  // Wide, NUL-terminated
  for (char c : std::string("ab")) put(d, static_cast<std::uint8_t>(c), 1);
  put(d, 0, 1);    // Narrow
  put(d, 2, 2);    // Chars = 2
  put(d, 'x', 2);  // WideN: 2 characters, no NUL
  put(d, 'y', 2);
  for (char c : std::string("abc")) put(d, static_cast<std::uint8_t>(c), 1);  // Fixed, 3
  put(d, 4, 2);                                                               // Counted: 4 bytes
  put(d, 'o', 2);
  put(d, 'k', 2);
  put(d, 3, 4);         // Size = 3
  put(d, 0xCAFEBA, 3);  // Blob
  put(d, 2, 1);         // N = 2
  put(d, 0x1111, 2);    // Values[0]
  put(d, 0x2222, 2);    // Values[1]
  Record r(2, 1, d);
  const Bytes info = r.info();
  const TRACE_EVENT_INFO& t = as_info(info);
  EXPECT_EQ(t.EventNameOffset, 0u);  // no name attribute
  EXPECT_EQ(text16(info, t.LevelNameOffset), u"Very chatty");
  EXPECT_EQ(text16(info, t.OpcodeNameOffset), u"Retry");
  EXPECT_EQ(t.TaskNameOffset, 0u);
  ASSERT_EQ(t.PropertyCount, 10u);
  const EVENT_PROPERTY_INFO& wide_n = t.EventPropertyInfoArray[3];
  EXPECT_EQ(wide_n.Flags & PropertyParamLength, PropertyParamLength);
  EXPECT_EQ(wide_n.lengthPropertyIndex, 2);
  const EVENT_PROPERTY_INFO& fixed = t.EventPropertyInfoArray[4];
  EXPECT_EQ(fixed.Flags & PropertyParamFixedLength, PropertyParamFixedLength);
  EXPECT_EQ(fixed.length, 3);
  const EVENT_PROPERTY_INFO& blob = t.EventPropertyInfoArray[7];
  EXPECT_EQ(blob.nonStructType.InType, TDH_INTYPE_BINARY);
  EXPECT_EQ(blob.lengthPropertyIndex, 6);
  const EVENT_PROPERTY_INFO& values = t.EventPropertyInfoArray[9];
  EXPECT_EQ(values.Flags & PropertyParamCount, PropertyParamCount);
  EXPECT_EQ(values.countPropertyIndex, 8);

  EXPECT_EQ(r.property({u"Wide"}).second, Bytes({'h', 0, 0xE9, 0, '!', 0, 0, 0}));
  EXPECT_EQ(r.property({u"Narrow"}).second, Bytes({'a', 'b', 0}));
  EXPECT_EQ(r.property({u"WideN"}).second, Bytes({'x', 0, 'y', 0}));
  EXPECT_EQ(r.property({u"Fixed"}).second, Bytes({'a', 'b', 'c'}));
  EXPECT_EQ(r.property({u"Counted"}).second, Bytes({'o', 0, 'k', 0}));
  EXPECT_EQ(r.property({u"Blob"}).second, Bytes({0xBA, 0xFE, 0xCA}));
  EXPECT_EQ(r.property({u"Values"}).second, Bytes({0x11, 0x11, 0x22, 0x22}));
  EXPECT_EQ(r.property({u"Values"}, 1).second, Bytes({0x22, 0x22}));
  EXPECT_EQ(r.property({u"Values"}, 2).first, ULONG{ERROR_INVALID_PARAMETER});

  // A string whose NUL is missing: the payload does not hold what the manifest says.
  Record open(2, 1, Bytes{'h', 0, 'i', 0});
  EXPECT_EQ(open.property({u"Wide"}).first, ULONG{ERROR_EVT_INVALID_EVENT_DATA});
}

// TdhGetEventInformation page: ERROR_NOT_FOUND when the schema for the event was not found.
TEST_F(TdhManifest, AnEventOfNoLoadedManifestIsNotFound) {
  ULONG size = 0;
  Record other_version(1, 5, Bytes{});
  EXPECT_EQ(TdhGetEventInformation(other_version.get(), 0, nullptr, nullptr, &size),
            ULONG{ERROR_NOT_FOUND});
  Record unknown(99, 0, Bytes{});
  EXPECT_EQ(TdhGetEventInformation(unknown.get(), 0, nullptr, nullptr, &size),
            ULONG{ERROR_NOT_FOUND});
  Record empty(3, 0, Bytes{});
  EXPECT_EQ(TdhGetEventInformation(empty.get(), 0, nullptr, nullptr, &size),
            ULONG{ERROR_INSUFFICIENT_BUFFER});
  ASSERT_EQ(unload(ETWRT_TDH_TEST_MANIFEST), ULONG{ERROR_SUCCESS});
  EXPECT_EQ(TdhGetEventInformation(empty.get(), 0, nullptr, nullptr, &size),
            ULONG{ERROR_NOT_FOUND});
  EXPECT_EQ(empty.property({u"x"}).first, ULONG{ERROR_NOT_FOUND});
}

// TdhLoadManifest / TdhUnloadManifest pages: the statuses they list.
TEST(TdhLoadManifest, StatusesOfTheReferencePage) {
  EXPECT_EQ(TdhLoadManifest(nullptr), ULONG{ERROR_INVALID_PARAMETER});
  EXPECT_EQ(TdhUnloadManifest(nullptr), ULONG{ERROR_INVALID_PARAMETER});
  EXPECT_EQ(load(std::string(MAX_PATH, 'a')), ULONG{ERROR_INVALID_PARAMETER});
  EXPECT_EQ(load(::testing::TempDir() + "no-such.man"), ULONG{ERROR_FILE_NOT_FOUND});
  EXPECT_EQ(unload(::testing::TempDir() + "never-loaded.man"), ULONG{ERROR_FILE_NOT_FOUND});
  EXPECT_EQ(load(write_temp("not-xml.man", "<instrumentationManifest><oops>")),
            ULONG{ERROR_XML_PARSE_ERROR});
  EXPECT_EQ(load(write_temp("not-manifest.man", "<html><body/></html>")),
            ULONG{ERROR_XML_PARSE_ERROR});
  const std::string undefined_task =
      "<instrumentationManifest><instrumentation><events>"
      "<provider name='P' guid='{6E2B9F10-0D4C-4A3B-9B1E-2C3D4E5F6A7C}'><events>"
      "<event value='1' task='Nowhere'/></events></provider></events></instrumentation>"
      "</instrumentationManifest>";
  EXPECT_EQ(load(write_temp("undefined-task.man", undefined_task)), ULONG{ERROR_XML_PARSE_ERROR});
}

// TdhLoadManifestFromBinary page: ERROR_INVALID_PARAMETER, ERROR_FILE_NOT_FOUND, and
// ERROR_RESOURCE_NOT_FOUND "The file does not contain any eventing metadata resources" (etwrt
// reads none: the samples of "Retrieving Event Data Using TDH" take a -b: option that calls it).
TEST(TdhLoadManifestFromBinary, StatusesOfTheReferencePage) {
  EXPECT_EQ(TdhLoadManifestFromBinary(nullptr), ULONG{ERROR_INVALID_PARAMETER});
  std::u16string path = wide(::testing::TempDir() + "no-such.dll");
  EXPECT_EQ(TdhLoadManifestFromBinary(reinterpret_cast<PWSTR>(path.data())),
            ULONG{ERROR_FILE_NOT_FOUND});
  path = wide(write_temp("provider.dll", "MZ not a provider"));
  EXPECT_EQ(TdhLoadManifestFromBinary(reinterpret_cast<PWSTR>(path.data())),
            ULONG{ERROR_RESOURCE_NOT_FOUND});
}

// The "Enumerating Providers" sample's loop (TdhEnumerateProviders page): ask with a size of 0,
// grow the buffer to the size returned, ask again; each provider's GUID, its name at
// ProviderNameOffset, SchemaSource 0 for "XML manifest". Here the loaded manifests' providers.
std::vector<std::pair<std::u16string, ULONG>> enumerate_providers_named(const GUID& guid) {
  std::vector<unsigned char> buffer;
  ULONG size = 0;
  ULONG status = TdhEnumerateProviders(nullptr, &size);
  while (status == ERROR_INSUFFICIENT_BUFFER) {
    buffer.assign(size, 0);
    status =
        TdhEnumerateProviders(reinterpret_cast<PPROVIDER_ENUMERATION_INFO>(buffer.data()), &size);
  }
  EXPECT_EQ(status, ULONG{ERROR_SUCCESS});
  std::vector<std::pair<std::u16string, ULONG>> found;
  if (status != ERROR_SUCCESS) return found;
  const auto* info = reinterpret_cast<const PROVIDER_ENUMERATION_INFO*>(buffer.data());
  for (ULONG i = 0; i < info->NumberOfProviders; ++i) {
    const TRACE_PROVIDER_INFO& p = info->TraceProviderInfoArray[i];
    if (std::memcmp(&p.ProviderGuid, &guid, sizeof guid) != 0) continue;
    EXPECT_LT(p.ProviderNameOffset, size);
    found.emplace_back(reinterpret_cast<const char16_t*>(buffer.data() + p.ProviderNameOffset),
                       p.SchemaSource);
  }
  return found;
}

TEST(TdhEnumerateProviders, TheLoadedManifestsProvidersAsTheSampleReadsThem) {
  ULONG size = 0;
  EXPECT_EQ(TdhEnumerateProviders(nullptr, nullptr), ULONG{ERROR_INVALID_PARAMETER});
  ASSERT_EQ(load(ETWRT_TDH_TEST_MANIFEST), ULONG{ERROR_SUCCESS});
  EXPECT_EQ(TdhEnumerateProviders(nullptr, &size), ULONG{ERROR_INSUFFICIENT_BUFFER});
  EXPECT_GE(size, sizeof(PROVIDER_ENUMERATION_INFO));
  const auto found = enumerate_providers_named(kProvider);
  ASSERT_EQ(found.size(), 1u);  // once, though the manifest has several events
  EXPECT_EQ(found[0].first, u"Etwh-Test-Manifest");
  EXPECT_EQ(found[0].second, 0u);  // an XML manifest
  ASSERT_EQ(unload(ETWRT_TDH_TEST_MANIFEST), ULONG{ERROR_SUCCESS});
  EXPECT_TRUE(enumerate_providers_named(kProvider).empty());
}

}  // namespace
