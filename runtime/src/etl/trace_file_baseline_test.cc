// The trace-file reader against PerfView's baselines of the corpus (../shared/etl-corpus,
// SOURCES.md): the first events of each name, with their values, compared field by field with
// what ProcessTrace delivers and TDH decodes. The baseline is TraceEvent's rendering, so each of
// its values is parsed (decimal with separators, 0x hex, a map's name, True/False, text cut to
// 20 characters and "...", dates as yy/MM/dd HH:mm:ss.ff in the trace's local time) and compared
// with the decoded bytes, not the other way round. The CLR's events need its manifest
// (dotnet/runtime's src/coreclr/vm/ClrEtwAll.man, not in the repository): ETWRT_CLR_MANIFEST
// names it, and those tests SKIP with the reason without it. SKIPPED without the corpus.
#include <windows.h>
#include <evntcons.h>
#include <evntrace.h>
#include <tdh.h>

#include <gtest/gtest.h>

#include "corpus_test_files.h"
#include "test_consumer.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace {

namespace fs = std::filesystem;
using etwrt::etl::testing::corpus_file;

// One EVENT line of a baseline: "EVENT <ms>: <provider/name> PID=..; TID=..; PName=..;
// ProceNum=..; DataLen=..; <field>=<value>; ...".
struct BaselineEvent {
  std::string line;
  std::string name;
  long long micros = 0;  // The stamp after the session's start, in microseconds.
  std::map<std::string, std::string> meta;
  std::vector<std::pair<std::string, std::string>> fields;
  bool seen = false;
};

std::string without_commas(std::string s) {
  std::erase(s, ',');
  return s;
}

std::vector<BaselineEvent> read_baseline(const fs::path& path) {
  std::vector<BaselineEvent> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("EVENT ", 0) != 0) continue;
    BaselineEvent e;
    e.line = line;
    const std::size_t colon = line.find(": ");
    e.micros = std::llround(std::stod(without_commas(line.substr(6, colon - 6))) * 1000);
    const std::size_t space = line.find(" PID=", colon + 2);
    e.name = line.substr(colon + 2, space - colon - 2);
    static const std::vector<std::string> kMeta = {"PID", "TID", "PName", "ProceNum", "DataLen"};
    for (std::size_t at = space + 1; at < line.size();) {
      const std::size_t end = line.find("; ", at);
      const std::string item = line.substr(at, end - at);
      const std::size_t eq = item.find('=');
      const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
      if (std::find(kMeta.begin(), kMeta.end(), key) != kMeta.end()) {
        e.meta[key] = value;
      } else {
        e.fields.emplace_back(key, value);
      }
      if (end == std::string::npos) break;
      at = end + 2;
    }
    out.push_back(std::move(e));
  }
  return out;
}

// "yy/MM/dd HH:mm:ss.ff", as the baselines print dates.
std::string date_text(int year, int month, int day, int hour, int minute, int second, int ms) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%02d/%02d/%02d %02d:%02d:%02d.%02d", year % 100, month, day, hour,
                minute, second, ms / 10);
  return buf;
}

// A FILETIME in UTC: the baselines' dates are UTC (the header's StartTime and EndTime as
// printed are its FILETIMEs in UTC, whatever the trace's time zone).
std::string filetime_text(std::int64_t ft) {
  const std::time_t secs = static_cast<std::time_t>(ft / 10000000 - 11644473600LL);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return date_text(tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                   static_cast<int>(ft % 10000000 / 10000));
}

// "Mercury" against "Mercury"; "C:\Dev\runtime\artif..." against a longer text by its start.
bool same_text(const std::string& got, const std::string& want) {
  if (want.size() >= 3 && want.compare(want.size() - 3, 3, "...") == 0) {
    return got.compare(0, want.size() - 3, want, 0, want.size() - 3) == 0;
  }
  return got == want;
}

std::string narrow(const char16_t* p, std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n && p[i] != 0; ++i) s.push_back(static_cast<char>(p[i]));
  return s;
}

std::string wide_at(const std::vector<BYTE>& info, ULONG offset) {
  if (offset == 0) return {};
  const auto* p = reinterpret_cast<const char16_t*>(info.data() + offset);
  return narrow(p, std::char_traits<char16_t>::length(p));
}

// The name a value map gives `value`, or "" (the map's entries as TDH lists them).
std::string map_name(PEVENT_RECORD e, const std::vector<BYTE>& info, ULONG map_offset,
                     std::uint64_t value) {
  if (map_offset == 0) return {};
  std::u16string name;
  for (auto* p = reinterpret_cast<const char16_t*>(info.data() + map_offset); *p != 0; ++p) {
    name.push_back(*p);
  }
  ULONG size = 0;
  auto* wname = reinterpret_cast<PWSTR>(name.data());
  if (TdhGetEventMapInformation(e, wname, nullptr, &size) != ERROR_INSUFFICIENT_BUFFER) return {};
  std::vector<BYTE> buf(size);
  auto* map = reinterpret_cast<EVENT_MAP_INFO*>(buf.data());
  if (TdhGetEventMapInformation(e, wname, map, &size) != ERROR_SUCCESS) return {};
  for (ULONG i = 0; i < map->EntryCount; ++i) {
    if (map->MapEntryArray[i].Value != value) continue;
    std::string text = wide_at(buf, map->MapEntryArray[i].OutputOffset);
    while (!text.empty() && text.back() == ' ') text.pop_back();
    return text;
  }
  return {};
}

// What TDH decodes of one top-level property, compared with the baseline's text: "" when they
// agree, else what differs.
std::string compare_property(PEVENT_RECORD e, const std::vector<BYTE>& info, ULONG index,
                             const std::string& want) {
  const auto* t = reinterpret_cast<const TRACE_EVENT_INFO*>(info.data());
  const EVENT_PROPERTY_INFO& p = t->EventPropertyInfoArray[index];
  std::u16string name;
  for (auto* c = reinterpret_cast<const char16_t*>(info.data() + p.NameOffset); *c != 0; ++c) {
    name.push_back(*c);
  }
  PROPERTY_DATA_DESCRIPTOR d{};
  d.PropertyName = reinterpret_cast<ULONGLONG>(name.c_str());
  d.ArrayIndex = ~ULONG{0};
  ULONG size = 0;
  if (TdhGetPropertySize(e, 0, nullptr, 1, &d, &size) != ERROR_SUCCESS) return "no size";
  std::vector<BYTE> v(size + 2);
  if (TdhGetProperty(e, 0, nullptr, 1, &d, size, v.data()) != ERROR_SUCCESS) return "no value";
  std::string got;
  std::uint64_t u = 0;
  std::memcpy(&u, v.data(), std::min<std::size_t>(size, 8));
  const USHORT in = p.nonStructType.InType;
  if (want == "True" || want == "False") {  // A boolean, whatever its in-type and out-type.
    return (u != 0) == (want == "True") ? "" : "'" + std::to_string(u) + "'";
  }
  switch (in) {
    case TDH_INTYPE_UNICODESTRING:
      got = narrow(reinterpret_cast<const char16_t*>(v.data()), size / 2);
      break;
    case TDH_INTYPE_ANSISTRING:
      got.assign(reinterpret_cast<const char*>(v.data()),
                 strnlen(reinterpret_cast<const char*>(v.data()), size));
      break;
    case TDH_INTYPE_BOOLEAN: got = u != 0 ? "True" : "False"; break;
    case TDH_INTYPE_GUID: {
      GUID g;
      std::memcpy(&g, v.data(), sizeof g);
      char buf[40];
      std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                    static_cast<unsigned>(g.Data1), g.Data2, g.Data3, g.Data4[0], g.Data4[1],
                    g.Data4[2], g.Data4[3], g.Data4[4], g.Data4[5], g.Data4[6], g.Data4[7]);
      got = buf;
      break;
    }
    case TDH_INTYPE_FILETIME: got = filetime_text(static_cast<std::int64_t>(u)); break;
    case TDH_INTYPE_SYSTEMTIME: {
      // Compared to the second: the baseline prints ".03" as the hundredths of every
      // SYSTEMTIME of primitive-types, whose bytes say the milliseconds of the FILETIME beside
      // it (790 with 14:59:35.79, 230 with 14:59:36.23, ...), a rendering of TraceEvent's.
      WORD st[8];
      std::memcpy(st, v.data(), sizeof st);
      got = date_text(st[0], st[1], st[3], st[4], st[5], st[6], st[7]).substr(0, 17);
      return got == want.substr(0, 17) ? "" : "'" + got + "'";
    }
    default: {  // Integers: the baseline's number (or map name) against the bytes' value.
      if (size < 8 && (in == TDH_INTYPE_INT8 || in == TDH_INTYPE_INT16 || in == TDH_INTYPE_INT32)) {
        const int shift = 64 - 8 * static_cast<int>(size);
        u = static_cast<std::uint64_t>(static_cast<std::int64_t>(u << shift) >> shift);
      }
      const std::string digits = without_commas(want);
      char* end = nullptr;
      std::uint64_t expected = 0;
      if (digits.rfind("0x", 0) == 0) {
        expected = std::strtoull(digits.c_str() + 2, &end, 16);
      } else {
        expected = static_cast<std::uint64_t>(std::strtoll(digits.c_str(), &end, 10));
      }
      if (!digits.empty() && end != nullptr && *end == 0) {
        // Compared in the property's width: TraceEvent prints an HRESULT as an int.
        const std::uint64_t mask =
            size >= 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * size)) - 1;
        return (expected & mask) == (u & mask) ? "" : "value " + std::to_string(u);
      }
      got = map_name(e, info, p.nonStructType.MapNameOffset, u);
      if (got.empty()) {
        got = "(value " + std::to_string(u) + " of in-type " + std::to_string(in) + ", out-type " +
              std::to_string(p.nonStructType.OutType) + ", no map name)";
      }
    }
  }
  return same_text(got, want) ? "" : "'" + got + "'";
}

// One file played with TDH: every delivered event that a baseline line names (by its stamp, to
// the microsecond it prints, PID, TID and user data length) is compared field by field.
struct Judged {
  std::vector<BaselineEvent>* baseline;
  std::string provider_prefix;  // Lines of these providers only.
  std::int64_t start = 0;
  std::size_t fields = 0;                // Baseline fields TDH decodes under their name.
  std::vector<std::string> differences;  // Values (or ProceNum, DataLen) that disagree.
  std::vector<std::string> undecoded;    // Events TDH has no description of.
  std::vector<std::string> unnamed;      // Baseline fields TDH lists under no such name.
  std::vector<std::string> unmapped;     // Values whose map has no name for them.
};

void judge_event(PEVENT_RECORD e, Judged& j, BaselineEvent& b) {
  const std::string at = b.name + " @" + std::to_string(b.micros) + "us: ";
  const auto check_meta = [&](const char* key, unsigned long long got) {
    if (b.meta.contains(key) && without_commas(b.meta[key]) != std::to_string(got)) {
      j.differences.push_back(at + key + " " + std::to_string(got) + " not " + b.meta[key]);
    }
  };
  check_meta("ProceNum", e->BufferContext.ProcessorNumber);
  ULONG size = 0;
  std::vector<BYTE> info;
  const auto* t = reinterpret_cast<const TRACE_EVENT_INFO*>(info.data());
  if (TdhGetEventInformation(e, 0, nullptr, nullptr, &size) == ERROR_INSUFFICIENT_BUFFER) {
    info.resize(size);
    t = reinterpret_cast<const TRACE_EVENT_INFO*>(info.data());
  }
  if (info.empty() || TdhGetEventInformation(e, 0, nullptr, const_cast<TRACE_EVENT_INFO*>(t),
                                             &size) != ERROR_SUCCESS) {
    j.undecoded.push_back(at + "Id " + std::to_string(e->EventHeader.EventDescriptor.Id) +
                          " version " + std::to_string(e->EventHeader.EventDescriptor.Version));
    return;
  }
  for (const auto& [key, value] : b.fields) {
    ULONG index = t->TopLevelPropertyCount;
    for (ULONG i = 0; i < t->TopLevelPropertyCount; ++i) {
      if (wide_at(info, t->EventPropertyInfoArray[i].NameOffset) == key) index = i;
    }
    if (index == t->TopLevelPropertyCount) {
      j.unnamed.push_back(at + key);
      continue;
    }
    ++j.fields;
    const std::string diff = compare_property(e, info, index, value);
    if (diff.find("no map name") != std::string::npos) {
      j.unmapped.push_back(at + key + "=" + value + ": " + diff);
    } else if (!diff.empty()) {
      j.differences.push_back(at + key + "=" + value + ": got " + diff);
    }
  }
}

void WINAPI on_event(PEVENT_RECORD e) {
  auto& j = *static_cast<Judged*>(e->UserContext);
  const long long us = std::llround((e->EventHeader.TimeStamp.QuadPart - j.start) / 10.0);
  for (BaselineEvent& b : *j.baseline) {
    if (b.seen || b.name.rfind(j.provider_prefix, 0) != 0 || std::llabs(b.micros - us) > 1 ||
        b.meta["PID"] != std::to_string(e->EventHeader.ProcessId) ||
        b.meta["TID"] != std::to_string(e->EventHeader.ThreadId) ||
        without_commas(b.meta["DataLen"]) != std::to_string(e->UserDataLength)) {
      continue;
    }
    b.seen = true;
    judge_event(e, j, b);
    return;
  }
}

// Plays `path` and judges the baseline's lines of `provider_prefix`; the lines no delivered
// event matched are differences too.
Judged judge(const fs::path& path, std::vector<BaselineEvent>& baseline,
             const std::string& provider_prefix) {
  Judged j;
  j.baseline = &baseline;
  j.provider_prefix = provider_prefix;
  EVENT_TRACE_LOGFILEA logfile{};
  std::string name = path.string();
  TRACEHANDLE h = etwrt::testing::open_file(logfile, name, on_event, &j);
  EXPECT_NE(h, INVALID_PROCESSTRACE_HANDLE);
  if (h == INVALID_PROCESSTRACE_HANDLE) return j;
  j.start = logfile.LogfileHeader.StartTime.QuadPart;
  EXPECT_EQ(ProcessTrace(&h, 1, nullptr, nullptr), static_cast<ULONG>(ERROR_SUCCESS));
  CloseTrace(h);
  for (const BaselineEvent& b : baseline) {
    if (!b.seen && b.name.rfind(provider_prefix, 0) == 0) {
      j.differences.push_back("no delivered event for: " + b.line.substr(0, 120));
    }
  }
  return j;
}

std::string listed(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += "\n  " + x;
  return s;
}

#define SKIP_WITHOUT_CORPUS()                                                 \
  if (!etwrt::etl::testing::corpus_present()) {                               \
    GTEST_SKIP() << "no .etl corpus at " << etwrt::etl::testing::corpus_dir() \
                 << " (../shared/etl-corpus)";                                \
  }

TEST(EtlBaseline, TraceLoggingFieldsOfEveryPrimitiveTypesEventAsTheBaselineShows) {
  SKIP_WITHOUT_CORPUS();
  auto baseline = read_baseline(etwrt::etl::testing::corpus_dir() / "primitive-types.baseline.txt");
  const Judged j = judge(corpus_file("primitive-types.etl.zip", "primitive-types.etl"), baseline,
                         "solar_system/");
  EXPECT_EQ(j.fields, 5u * 12u);  // Five events, twelve fields each.
  EXPECT_TRUE(j.differences.empty()) << listed(j.differences);
}

// The log-file header as OpenTrace gives it, against the baseline's header event line.
std::vector<std::string> header_differences(const fs::path& path, const BaselineEvent& b) {
  EVENT_TRACE_LOGFILEA logfile{};
  std::string name = path.string();
  logfile.LogFileName = name.data();
  logfile.ProcessTraceMode = PROCESS_TRACE_MODE_EVENT_RECORD;
  TRACEHANDLE h = OpenTraceA(&logfile);
  if (h == INVALID_PROCESSTRACE_HANDLE) return {"OpenTraceA failed"};
  const TRACE_LOGFILE_HEADER& x = logfile.LogfileHeader;
  const std::map<std::string, std::string> got = {
      {"BufferSize", std::to_string(x.BufferSize)},
      {"Version", std::to_string(x.Version)},
      {"ProviderVersion", std::to_string(x.ProviderVersion)},
      {"NumberOfProcessors", std::to_string(x.NumberOfProcessors)},
      {"EndTime", filetime_text(x.EndTime.QuadPart)},
      {"TimerResolution", std::to_string(x.TimerResolution)},
      {"MaxFileSize", std::to_string(x.MaximumFileSize)},
      {"LogFileMode", std::to_string(x.LogFileMode)},
      {"BuffersWritten", std::to_string(x.BuffersWritten)},
      {"StartBuffers", std::to_string(x.StartBuffers)},
      {"PointerSize", std::to_string(x.PointerSize)},
      {"EventsLost", std::to_string(x.EventsLost)},
      {"CPUSpeed", std::to_string(x.CpuSpeedInMHz)},
      {"BootTime", filetime_text(x.BootTime.QuadPart)},
      {"PerfFreq", std::to_string(x.PerfFreq.QuadPart)},
      {"StartTime", filetime_text(x.StartTime.QuadPart)},
      {"ReservedFlags", std::to_string(x.ReservedFlags)},
      {"BuffersLost", std::to_string(x.BuffersLost)},
      {"SessionName", narrow(reinterpret_cast<const char16_t*>(x.LoggerName), 1024)},
      {"LogFileName", narrow(reinterpret_cast<const char16_t*>(x.LogFileName), 1024)},
  };
  std::vector<std::string> out;
  for (const auto& [key, want] : b.fields) {
    if (key == "UtcOffsetMinutes") continue;  // TraceEvent's, from TimeZone: not a field.
    if (key == "LogFileName" && want == "[multiple files]") continue;  // A merged trace.
    const auto it = got.find(key);
    const std::string value = it == got.end() ? "(none)" : it->second;
    const bool number = !want.empty() && (std::isdigit(static_cast<unsigned char>(want[0])) != 0) &&
                        want.find('/') == std::string::npos;
    if (number ? without_commas(want) != value : !same_text(value, want)) {
      out.push_back(key + "=" + want + ": got " + value);
    }
  }
  CloseTrace(h);
  return out;
}

TEST(EtlBaseline, LogFileHeaderAsEachBaselineShowsIt) {
  SKIP_WITHOUT_CORPUS();
  const struct {
    const char* zip;
    const char* member;
    const char* baseline;
  } kFiles[] = {
      {"primitive-types.etl.zip", "primitive-types.etl", "primitive-types.baseline.txt"},
      {"gcevents.etl.zip", "gcevents/PerfViewData.etl", "gcevents.baseline.txt"},
      {"net.4.5.2.x64.etl.zip", "net.4.5.2.x64.etl", "net.4.5.2.x64.baseline.txt"},
  };
  for (const auto& f : kFiles) {
    SCOPED_TRACE(f.zip);
    const auto baseline = read_baseline(etwrt::etl::testing::corpus_dir() / f.baseline);
    ASSERT_FALSE(baseline.empty());
    ASSERT_EQ(baseline.front().name, "Windows Kernel/EventTrace");
    EXPECT_GE(baseline.front().fields.size(), 20u);
    const auto diffs = header_differences(corpus_file(f.zip, f.member), baseline.front());
    EXPECT_TRUE(diffs.empty()) << listed(diffs);
  }
}

// The CLR manifest, when ETWRT_CLR_MANIFEST names it: loaded once for the program.
bool clr_manifest_loaded(std::string& why) {
  const char* path = std::getenv("ETWRT_CLR_MANIFEST");
  if (path == nullptr || !fs::exists(path)) {
    why =
        "set ETWRT_CLR_MANIFEST to the CLR's manifest (dotnet/runtime, "
        "src/coreclr/vm/ClrEtwAll.man) to decode the CLR's events";
    return false;
  }
  static const ULONG status = [&] {
    std::u16string w(path, path + std::strlen(path));
    return TdhLoadManifest(reinterpret_cast<PWSTR>(w.data()));
  }();
  why = "TdhLoadManifest(" + std::string(path) + ") failed: " + std::to_string(status);
  return status == ERROR_SUCCESS;
}

TEST(EtlBaseline, ClrEventsDecodeWithTheClrManifestAsTheBaselinesShow) {
  SKIP_WITHOUT_CORPUS();
  std::string why;
  if (!clr_manifest_loaded(why)) GTEST_SKIP() << why;
  const auto report = [](const char* file, const Judged& j) {
    std::printf(
        "%s: %zu CLR fields decoded and compared, %zu differ; %zu events TDH does not "
        "describe, %zu fields under a name TDH does not list, %zu values without a map "
        "name%s%s%s\n",
        file, j.fields, j.differences.size(), j.undecoded.size(), j.unnamed.size(),
        j.unmapped.size(), listed(j.undecoded).c_str(), listed(j.unnamed).c_str(),
        listed(j.unmapped).c_str());
  };
  struct Corpus {
    const char* label;  // the baseline is <label>.baseline.txt
    const char* zip;
    const char* member;
    const char* provider_prefix;
    std::size_t fields_at_least;
  };
  for (const Corpus& c : {Corpus{"gcevents", "gcevents.etl.zip", "gcevents/PerfViewData.etl",
                                 "Microsoft-Windows-DotNETRuntime/", 100},
                          Corpus{"net.4.5.2.x64", "net.4.5.2.x64.etl.zip", "net.4.5.2.x64.etl",
                                 "Microsoft-Windows-DotNETRuntime", 500}}) {
    SCOPED_TRACE(c.label);
    auto baseline =
        read_baseline(etwrt::etl::testing::corpus_dir() / (std::string(c.label) + ".baseline.txt"));
    const Judged j = judge(corpus_file(c.zip, c.member), baseline, c.provider_prefix);
    report(c.label, j);
    EXPECT_TRUE(j.differences.empty()) << listed(j.differences);
    EXPECT_GE(j.fields, c.fields_at_least);
  }
}

}  // namespace
