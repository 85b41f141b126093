// The trace-file reader against the corpus of .etl files recorded on real Windows
// (../shared/etl-corpus, SOURCES.md): each file plays through OpenTraceA / ProcessTrace with
// its stated record count, the header event first, FILETIME stamps in order inside the header's
// span, and the fields the baselines show where TDH decodes them. SKIPPED without the corpus.
#include <windows.h>
#include <evntcons.h>
#include <evntrace.h>
#include <tdh.h>

#include <gtest/gtest.h>

#include "corpus_test_files.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

using etwrt::etl::testing::corpus_file;
const fs::path kCorpus = etwrt::etl::testing::corpus_dir();

bool same_guid(const GUID& a, const GUID& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// What one ProcessTrace delivered: every record's header and, for the first few TraceLogging
// events, their decoded properties.
struct Played {
  std::vector<EVENT_HEADER> headers;
  std::vector<ETW_BUFFER_CONTEXT> contexts;
  std::map<USHORT, std::size_t> item_types;  // Extended items delivered, by ExtType.
  std::vector<std::vector<std::byte>> first_user_data;
  std::map<std::u16string, std::map<std::u16string, std::vector<std::byte>>> tl_properties;
  ULONG status = ERROR_SUCCESS;
  TRACE_LOGFILE_HEADER header{};
  std::u16string logger_name;  // Where LogfileHeader.LoggerName pointed until CloseTrace.
  ULONG buffers_read = 0;
};

std::u16string wide_at(const std::vector<BYTE>& info, ULONG offset) {
  if (offset == 0) return {};
  std::u16string s;
  for (auto* p = reinterpret_cast<const char16_t*>(info.data() + offset); *p != 0; ++p) {
    s.push_back(*p);
  }
  return s;
}

// TDH's properties of a TraceLogging or self-describing event, by name (first event of each
// event name only).
void decode_tl(PEVENT_RECORD e, Played& out) {
  ULONG size = 0;
  if (TdhGetEventInformation(e, 0, nullptr, nullptr, &size) != ERROR_INSUFFICIENT_BUFFER) return;
  std::vector<BYTE> info(size);
  auto* t = reinterpret_cast<TRACE_EVENT_INFO*>(info.data());
  if (TdhGetEventInformation(e, 0, nullptr, t, &size) != ERROR_SUCCESS) return;
  const std::u16string event = wide_at(info, t->EventNameOffset);
  if (out.tl_properties.contains(event)) return;
  auto& props = out.tl_properties[event];
  // A property's value by one descriptor, or a struct member's by two ("a.b").
  const auto get = [&](std::vector<PROPERTY_DATA_DESCRIPTOR> path, const std::u16string& key) {
    ULONG bytes = 0;
    const auto n = static_cast<ULONG>(path.size());
    if (TdhGetPropertySize(e, 0, nullptr, n, path.data(), &bytes) != ERROR_SUCCESS) return;
    std::vector<std::byte> value(bytes);
    if (TdhGetProperty(e, 0, nullptr, n, path.data(), bytes,
                       reinterpret_cast<PBYTE>(value.data())) == ERROR_SUCCESS) {
      props[key] = value;
    }
  };
  std::vector<std::u16string> names(t->PropertyCount);
  for (ULONG i = 0; i < t->PropertyCount; ++i) {
    names[i] = wide_at(info, t->EventPropertyInfoArray[i].NameOffset);
  }
  const auto descriptor = [&](ULONG i) {
    PROPERTY_DATA_DESCRIPTOR d{};
    d.PropertyName = reinterpret_cast<ULONGLONG>(names[i].c_str());
    d.ArrayIndex = ~ULONG{0};
    return d;
  };
  for (ULONG i = 0; i < t->TopLevelPropertyCount; ++i) {
    const EVENT_PROPERTY_INFO& p = t->EventPropertyInfoArray[i];
    if ((p.Flags & PropertyStruct) == 0) {
      get({descriptor(i)}, names[i]);
      continue;
    }
    for (ULONG m = p.structType.StructStartIndex;
         m < ULONG{p.structType.StructStartIndex} + p.structType.NumOfStructMembers; ++m) {
      get({descriptor(i), descriptor(m)}, names[i] + u"." + names[m]);
    }
  }
}

void WINAPI on_event(PEVENT_RECORD e) {
  auto& out = *static_cast<Played*>(e->UserContext);
  out.headers.push_back(e->EventHeader);
  out.contexts.push_back(e->BufferContext);
  if (out.first_user_data.empty()) {
    auto* p = static_cast<const std::byte*>(e->UserData);
    out.first_user_data.emplace_back(p, p + e->UserDataLength);
  }
  for (USHORT i = 0; i < e->ExtendedDataCount; ++i) ++out.item_types[e->ExtendedData[i].ExtType];
  if (e->ExtendedDataCount > 0) decode_tl(e, out);
}

ULONG WINAPI count_buffers(PEVENT_TRACE_LOGFILEA l) {
  static_cast<Played*>(l->Context)->buffers_read = l->BuffersRead;
  return TRUE;
}

Played play(const fs::path& path, ULONG mode = PROCESS_TRACE_MODE_EVENT_RECORD) {
  Played out;
  EVENT_TRACE_LOGFILEA logfile{};
  std::string name = path.string();
  logfile.LogFileName = name.data();
  logfile.ProcessTraceMode = mode;
  logfile.EventRecordCallback = on_event;
  logfile.BufferCallback = count_buffers;
  logfile.Context = &out;
  TRACEHANDLE h = OpenTraceA(&logfile);
  if (h == INVALID_PROCESSTRACE_HANDLE) {
    out.status = ERROR_INVALID_HANDLE;
    return out;
  }
  out.header = logfile.LogfileHeader;
  out.logger_name = reinterpret_cast<const char16_t*>(logfile.LogfileHeader.LoggerName);
  out.status = ProcessTrace(&h, 1, nullptr, nullptr);
  EXPECT_EQ(CloseTrace(h), static_cast<ULONG>(ERROR_SUCCESS));
  return out;
}

struct CorpusFile {
  const char* name;
  const char* member;
  std::size_t records;
  std::size_t after_end;  // Records stamped after the header's EndTime (see below).
};

// SOURCES.md's table. The files one session recorded have every record inside [StartTime, EndTime].
// The two that were relogged or merged do not: SelfDescribingSingleEvent's last 6 records (the
// system and SysConfig rundown, one stamp) come 13.5 ms after its EndTime, and net.4.5.2.x64's
// merged streams run 2.5 s past the EndTime of its header (the raw stamps themselves, as a separate
// script reading the bytes found them: the counts are the data's, not the reader's).
const CorpusFile kFiles[] = {
    {"AMSITrace.etl", "", 21, 0},
    {"lxcore_kernel.etl", "", 4, 0},
    {"powershell.etl", "", 114, 0},
    {"Process.etl", "", 10344, 0},
    {"KernelNetwork.etl", "", 8924, 0},
    {"SelfDescribingSingleEvent.etl", "", 23, 6},
    {"primitive-types.etl.zip", "primitive-types.etl", 7, 0},
    {"gcevents.etl.zip", "gcevents/PerfViewData.etl", 71, 0},
    {"net.4.5.2.x64.etl.zip", "net.4.5.2.x64.etl", 179474, 32946},
};

#define SKIP_WITHOUT_CORPUS()                                                     \
  if (!fs::exists(kCorpus / "SOURCES.md")) {                                      \
    GTEST_SKIP() << "no .etl corpus at " << kCorpus << " (../shared/etl-corpus)"; \
  }

TEST(EtlCorpus, EveryFilePlaysWithItsRecordCountHeaderFirstInOrderInsideItsSpan) {
  SKIP_WITHOUT_CORPUS();
  for (const CorpusFile& f : kFiles) {
    SCOPED_TRACE(f.name);
    const fs::path path = corpus_file(f.name, f.member);
    ASSERT_FALSE(path.empty());
    const Played p = play(path);
    ASSERT_EQ(p.status, static_cast<ULONG>(ERROR_SUCCESS));
    EXPECT_EQ(p.headers.size(), f.records);
    ASSERT_FALSE(p.headers.empty());
    // The header event: EventTraceGuid, Opcode 0, the classic header, TRACE_LOGFILE_HEADER.
    const EVENT_HEADER& first = p.headers.front();
    EXPECT_TRUE(same_guid(first.ProviderId, EventTraceGuid));
    EXPECT_EQ(first.EventDescriptor.Opcode, 0);
    EXPECT_NE(first.Flags & EVENT_HEADER_FLAG_CLASSIC_HEADER, 0);
    ASSERT_GE(p.first_user_data[0].size(), sizeof(TRACE_LOGFILE_HEADER));
    EXPECT_EQ(std::memcmp(p.first_user_data[0].data(), &p.header, 0x38), 0);
    // Stamps: FILETIMEs from the header's StartTime to its EndTime, never decreasing. Bounds:
    // StartTime <= stamp <= EndTime, both inclusive, the header event's own stamp included.
    const std::int64_t start = p.header.StartTime.QuadPart;
    const std::int64_t end = p.header.EndTime.QuadPart;
    std::int64_t last = 0;
    std::size_t before_start = 0, after_end = 0, backwards = 0;
    for (const EVENT_HEADER& h : p.headers) {
      const std::int64_t t = h.TimeStamp.QuadPart;
      before_start += t < start;
      after_end += t > end;
      if (t < last) ++backwards;
      last = t;
      EXPECT_NE(h.Flags & (EVENT_HEADER_FLAG_32_BIT_HEADER | EVENT_HEADER_FLAG_64_BIT_HEADER), 0);
    }
    EXPECT_EQ(before_start, 0u) << "StartTime " << start;
    EXPECT_EQ(after_end, f.after_end) << "EndTime " << end;
    EXPECT_EQ(p.headers.front().TimeStamp.QuadPart, start);
    EXPECT_EQ(backwards, 0u);
    // Every Windows file here says in its header's BuffersWritten how many buffers it holds, its
    // header buffer included (the circular one too, which never wrapped): what etwrt's logger
    // writes (docs/etwrt/conformance.md, "Choices where the documents are silent").
    EXPECT_EQ(p.buffers_read, p.header.BuffersWritten);
  }
}

TEST(EtlCorpus, HeaderFieldsAsTheFileSaysThem) {
  SKIP_WITHOUT_CORPUS();
  const Played amsi = play(corpus_file("AMSITrace.etl"));
  EXPECT_EQ(amsi.header.EventsLost, 3u);
  EXPECT_EQ(amsi.header.BufferSize, 65536u);
  EXPECT_EQ(amsi.header.PointerSize, 8u);
  EXPECT_EQ(amsi.header.NumberOfProcessors, 8u);
  EXPECT_EQ(amsi.header.VersionDetail.SubVersion, 1);
  EXPECT_EQ(amsi.header.VersionDetail.SubMinorVersion, 5);
  EXPECT_EQ(amsi.logger_name, u"AMSITraceSession");
  // primitive-types.baseline.txt: BufferSize=8,192; ProviderVersion=19,043; CPUSpeed=2,304.
  const Played prim = play(corpus_file("primitive-types.etl.zip", "primitive-types.etl"));
  EXPECT_EQ(prim.header.BufferSize, 8192u);
  EXPECT_EQ(prim.header.ProviderVersion, 19043u);
  EXPECT_EQ(prim.header.CpuSpeedInMHz, 2304u);
  EXPECT_EQ(prim.header.ReservedFlags, 1u);
}

TEST(EtlCorpus, ProcessStartAndStopOfProcessEtl) {
  SKIP_WITHOUT_CORPUS();
  // Microsoft-Windows-Kernel-Process {22fb2cd6-0e7b-422b-a0c7-2fad1fd0e716}: Tx's ProcessTest.
  const GUID kernel_process{
      0x22fb2cd6, 0x0e7b, 0x422b, {0xa0, 0xc7, 0x2f, 0xad, 0x1f, 0xd0, 0xe7, 0x16}};
  const Played p = play(corpus_file("Process.etl"));
  int starts = 0, stops = 0;
  for (const EVENT_HEADER& h : p.headers) {
    if (!same_guid(h.ProviderId, kernel_process)) continue;
    starts += h.EventDescriptor.Id == 1;
    stops += h.EventDescriptor.Id == 2;
  }
  EXPECT_EQ(starts, 4);
  EXPECT_EQ(stops, 4);
}

std::u16string as_text(const std::vector<std::byte>& v) {
  std::u16string s(v.size() / 2, u'\0');
  std::memcpy(s.data(), v.data(), s.size() * 2);
  while (!s.empty() && s.back() == 0) s.pop_back();
  return s;
}

template <typename T>
T as(const std::vector<std::byte>& v) {
  T x{};
  if (v.size() == sizeof x) std::memcpy(&x, v.data(), sizeof x);
  return x;
}

TEST(EtlCorpus, TraceLoggingPrimitiveTypesDecodeAsTheBaselineShows) {
  SKIP_WITHOUT_CORPUS();
  const Played p = play(corpus_file("primitive-types.etl.zip", "primitive-types.etl"));
  ASSERT_EQ(p.headers.size(), 7u);
  // The two records of the header buffer, then the five events; the baseline's first
  // PrimitiveTypesTest event is 2,942.306 ms after the session's start, on processor 2, by
  // PID 33984 and TID 21768.
  const EVENT_HEADER& first = p.headers[2];
  EXPECT_NEAR((first.TimeStamp.QuadPart - p.header.StartTime.QuadPart) / 10000.0, 2942.306, 0.001);
  EXPECT_EQ(first.ProcessId, 33984u);
  EXPECT_EQ(first.ThreadId, 21768u);
  EXPECT_EQ(p.contexts[2].ProcessorNumber, 2);
  ASSERT_TRUE(p.tl_properties.contains(u"PrimitiveTypesTest"));
  const auto& f = p.tl_properties.at(u"PrimitiveTypesTest");
  ASSERT_TRUE(f.contains(u"string_type"));
  const std::vector<std::byte>& s = f.at(u"string_type");  // An ANSI string, with its NUL.
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(s.data()), s.size()),
            std::string("Mercury", 8));
  EXPECT_EQ(as<std::int32_t>(f.at(u"boolean_type")), 0);
  EXPECT_EQ(as<std::int16_t>(f.at(u"int16_type")), -51);
  EXPECT_EQ(as<std::int32_t>(f.at(u"int32_type")), -102);
  EXPECT_EQ(as<std::uint16_t>(f.at(u"uint16_type")), 51);
  EXPECT_EQ(as<std::uint32_t>(f.at(u"uint32_type")), 102u);
  EXPECT_EQ(as<std::int64_t>(f.at(u"int64_type")), -204);
  EXPECT_EQ(as<std::uint64_t>(f.at(u"uint64_type")), 204u);
  const GUID g = as<GUID>(f.at(u"guid_type"));
  EXPECT_EQ(g.Data1, 0x0ad614c4u);  // guid_type=0ad614c4-0ef4-4225-8...
  EXPECT_EQ(g.Data2, 0x0ef4);
  EXPECT_EQ(g.Data3, 0x4225);
  EXPECT_EQ(f.at(u"file_time_type").size(), 8u);
  EXPECT_EQ(f.at(u"system_time_type").size(), 16u);
}

TEST(EtlCorpus, EventSourceSelfDescribingEventDecodes) {
  SKIP_WITHOUT_CORPUS();
  const Played p = play(corpus_file("SelfDescribingSingleEvent.etl"));
  // PerfView shows the payload as { "b":"Hello", "c":"World!" }: the members of the event's
  // one top-level field, a struct named "a".
  ASSERT_TRUE(p.tl_properties.contains(u"TestEvent"));
  const auto& f = p.tl_properties.at(u"TestEvent");
  ASSERT_TRUE(f.contains(u"a.b"));
  EXPECT_EQ(as_text(f.at(u"a.b")), u"Hello");
  EXPECT_EQ(as_text(f.at(u"a.c")), u"World!");
}

TEST(EtlCorpus, KernelClassicAnd32BitRecordsOfTheMergedFile) {
  SKIP_WITHOUT_CORPUS();
  // net.4.5.2.x64: 3189 SYSTEM64, 2 SYSTEM32, 100157 PERFINFO64, 7956 classic 64-bit and 27
  // 32-bit, 34765 EVENT_HEADER64 and 33378 EVENT_HEADER32 records (their header types, counted
  // from the bytes by a separate script).
  const Played p = play(corpus_file("net.4.5.2.x64.etl.zip", "net.4.5.2.x64.etl"));
  std::size_t bits32 = 0, classic = 0, no_thread = 0, sampled_profile = 0;
  const GUID perfinfo{0xce1dbfb4, 0x137e, 0x4da6, {0x87, 0xb0, 0x3f, 0x59, 0xaa, 0x10, 0x2c, 0xbc}};
  for (const EVENT_HEADER& h : p.headers) {
    bits32 += (h.Flags & EVENT_HEADER_FLAG_32_BIT_HEADER) != 0;
    classic += (h.Flags & EVENT_HEADER_FLAG_CLASSIC_HEADER) != 0;
    // PERFINFO records (no compact ones here): no CPU times, no thread in their header.
    no_thread += (h.Flags & EVENT_HEADER_FLAG_NO_CPUTIME) != 0 && h.ThreadId == 0xFFFFFFFF;
    // PerfInfo SampledProfile (Opcode 46), the CPU samples TraceEvent folds for idle.
    sampled_profile += same_guid(h.ProviderId, perfinfo) && h.EventDescriptor.Opcode == 46;
  }
  EXPECT_EQ(bits32, 33378u + 27u + 2u);
  EXPECT_EQ(classic, 3189u + 2u + 100157u + 7956u + 27u);
  EXPECT_EQ(no_thread, 100157u);
  EXPECT_GT(sampled_profile, 0u);
  EXPECT_GT(p.item_types.count(EVENT_HEADER_EXT_TYPE_STACK_TRACE64), 0u);
}

TEST(EtlCorpus, ClrGcEventsCountAndStampAsTheBaselineShows) {
  SKIP_WITHOUT_CORPUS();
  // Microsoft-Windows-DotNETRuntime {e13c0d23-ccbc-4e12-931b-d9cc2eee27e4}; gcevents.baseline.txt
  // counts 69 of its events by name; by the CLR manifest's ids: GC/Start 1, GC/Stop 2,
  // GC/CreateSegment 5, GC/AllocationTick 10, GC/MarkWithType 202, Runtime/Start 187.
  const GUID clr{0xe13c0d23, 0xccbc, 0x4e12, {0x93, 0x1b, 0xd9, 0xcc, 0x2e, 0xee, 0x27, 0xe4}};
  const Played p = play(corpus_file("gcevents.etl.zip", "gcevents/PerfViewData.etl"));
  std::map<USHORT, int> by_id;
  const EVENT_HEADER* first = nullptr;
  std::size_t index = 0, first_index = 0;
  for (const EVENT_HEADER& h : p.headers) {
    if (same_guid(h.ProviderId, clr)) {
      ++by_id[h.EventDescriptor.Id];
      if (first == nullptr) {
        first = &h;
        first_index = index;
      }
    }
    ++index;
  }
  int total = 0;
  for (const auto& [id, n] : by_id) total += n;
  EXPECT_EQ(total, 69);
  EXPECT_EQ(by_id[1], 2);
  EXPECT_EQ(by_id[2], 2);
  EXPECT_EQ(by_id[5], 7);
  EXPECT_EQ(by_id[10], 12);
  EXPECT_EQ(by_id[202], 13);
  EXPECT_EQ(by_id[187], 1);
  // "EVENT 8,184.674: Microsoft-Windows-DotNETRuntime/Runtime/Start PID=179596; TID=168672;
  // ProceNum=4".
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->EventDescriptor.Id, 187);
  EXPECT_NEAR((first->TimeStamp.QuadPart - p.header.StartTime.QuadPart) / 10000.0, 8184.674, 0.001);
  EXPECT_EQ(first->ProcessId, 179596u);
  EXPECT_EQ(first->ThreadId, 168672u);
  EXPECT_EQ(p.contexts[first_index].ProcessorNumber, 4);
}

}  // namespace
