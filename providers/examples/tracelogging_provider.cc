// A TraceLogging-style provider under test: self-describing events (channel 11, event ID 0,
// told apart by name, level and keyword) whose metadata it builds itself in TraceLogging's
// documented encoding and passes as typed data descriptors, as TraceLoggingProvider.h does: the
// provider traits (Type 2, EVENT_DATA_DESCRIPTOR_TYPE_PROVIDER_METADATA), the event's metadata
// (Type 1, EVENT_METADATA: name and field types), then the fields. Its traits (its name and a
// provider group) are set through EventSetInformation(EventProviderSetTraits) right after
// registration, which is also what makes the platform honour the descriptors' Type. Its callback
// does the filter tracking TraceLogging does (level and keywords, no FilterData).
// EXAMPLE_MUTANT_* definitions compile one realistic defect in (mutants/mutants.json); the clean
// target defines none.
#include "etwh/provider_under_test.h"

#include <evntrace.h>  // EVENT_CONTROL_CODE_* (not in every SDK's evntprov.h)

#include <array>
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

namespace {

// {0b9f7a64-3d2e-4f15-8c6a-91e2d4b7a3f0}
constexpr GUID kProviderId = {
    0x0b9f7a64, 0x3d2e, 0x4f15, {0x8c, 0x6a, 0x91, 0xe2, 0xd4, 0xb7, 0xa3, 0xf0}};
// {4d8a1c7e-2b6f-4e93-a5d0-7c3f9e1b2a64}: the provider group it joins.
constexpr GUID kGroupId = {
    0x4d8a1c7e, 0x2b6f, 0x4e93, {0xa5, 0xd0, 0x7c, 0x3f, 0x9e, 0x1b, 0x2a, 0x64}};
constexpr char kProviderName[] = "Etwh.Example.TraceLogging";

// EventProviderSetTraits and EtwProviderTraitTypeGroup by value: not every SDK header names them.
constexpr ULONG kSetTraits = 2;
constexpr std::uint8_t kTraitGroup = 1;
constexpr UCHAR kTraceLoggingChannel = 11;

struct TlEvent {
  const char* name;
  EVENT_DESCRIPTOR descriptor;
};

constexpr TlEvent tl(const char* name, UCHAR level, ULONGLONG keyword) {
  return TlEvent{name, EVENT_DESCRIPTOR{0, 0, kTraceLoggingChannel, level, 0, 0, keyword}};
}

constexpr std::array<TlEvent, 7> kTestEvents = {
    tl("Critical", 1, 0x1), tl("Error", 2, 0x2),    tl("Warning", 3, 0x6), tl("Info", 4, 0x0),
    tl("Verbose", 5, 0x10), tl("InfoBoth", 4, 0x9), tl("Always", 0, 0x20)};
constexpr std::array<TlEvent, 2> kStateEvents = {tl("StateConfig", 0, 0),
                                                 tl("StateCounters", 1, 0)};

std::atomic<bool> g_enabled{false};
std::atomic<UCHAR> g_level{0};
std::atomic<ULONGLONG> g_any{0};
std::atomic<ULONGLONG> g_all{0};
std::atomic<REGHANDLE> g_handle{0};

// TraceLogging's field types (InType) used here.
constexpr std::uint8_t kInUInt32 = 8;
constexpr std::uint8_t kInAnsiString = 2;  // NUL-terminated 8-bit string

// The event's metadata (TraceLogging's encoding): UINT16 its own size, UINT8 tags (none), the
// event name (UTF-8, NUL), then per field its name (NUL) and InType. Fields: "Sequence" (a
// UINT32) and "Detail" (an 8-bit string).
std::vector<std::uint8_t> event_metadata(const char* name) {
  std::vector<std::uint8_t> m = {0, 0, 0};
  const auto add = [&m](const char* text) {
    m.insert(m.end(), text, text + std::strlen(text) + 1);
  };
  add(name);
  add("Sequence");
  m.push_back(kInUInt32);
  add("Detail");
  m.push_back(kInAnsiString);
  m[0] = static_cast<std::uint8_t>(m.size());
  m[1] = static_cast<std::uint8_t>(m.size() >> 8);
  return m;
}

std::vector<std::uint8_t> traits_blob();

void write(const TlEvent& e) {
  static const std::vector<std::uint8_t> traits = traits_blob();
  static std::atomic<std::uint32_t> sequence{0};
  const std::vector<std::uint8_t> metadata = event_metadata(e.name);
  const std::uint32_t seq = sequence.fetch_add(1);
  static const char kDetail[] = "example";
  EVENT_DATA_DESCRIPTOR data[4];
  // Type through Reserved: Type is its low byte (Reserved1 and Reserved2 stay 0), and mingw-w64's
  // header has only Reserved there.
  EventDataDescCreate(&data[0], traits.data(), static_cast<ULONG>(traits.size()));
  data[0].Reserved = EVENT_DATA_DESCRIPTOR_TYPE_PROVIDER_METADATA;
  EventDataDescCreate(&data[1], metadata.data(), static_cast<ULONG>(metadata.size()));
  data[1].Reserved = EVENT_DATA_DESCRIPTOR_TYPE_EVENT_METADATA;
  EventDataDescCreate(&data[2], &seq, sizeof seq);
  EventDataDescCreate(&data[3], kDetail, sizeof kDetail);
  EventWrite(g_handle.load(), &e.descriptor, 4, data);
}

// TraceLoggingProviderEnabled's test.
bool enabled(const EVENT_DESCRIPTOR& d) {
  const ULONGLONG any = g_any.load();
  const ULONGLONG all = g_all.load();
  return g_enabled.load() && d.Level <= g_level.load() &&
         (d.Keyword == 0 || ((d.Keyword & any) != 0 && (d.Keyword & all) == all));
}

void write_state() {
  for (const TlEvent& e : kStateEvents) write(e);
}

VOID NTAPI enable_callback(LPCGUID, ULONG is_enabled, UCHAR level, ULONGLONG match_any,
                           ULONGLONG match_all, PEVENT_FILTER_DESCRIPTOR, PVOID) {
  if (is_enabled == EVENT_CONTROL_CODE_ENABLE_PROVIDER) {
    g_level.store(level);
    g_any.store(match_any);
    g_all.store(match_all);
    g_enabled.store(true);
  } else if (is_enabled == EVENT_CONTROL_CODE_DISABLE_PROVIDER) {
    g_enabled.store(false);
  } else if (is_enabled == EVENT_CONTROL_CODE_CAPTURE_STATE) {
#if !defined(EXAMPLE_MUTANT_NO_CAPTURE_STATE)  // Mutant: the callback ignores CAPTURE_STATE.
    write_state();
#endif
  }
}

// The traits blob (seed 001): UINT16 TraitsSize, the NUL-terminated name, then each trait as
// UINT16 size, UINT8 type, data.
constexpr std::size_t kTraitSize = 3 + sizeof(GUID);
constexpr std::size_t kTraitsSize = 2 + sizeof kProviderName + kTraitSize;

std::vector<std::uint8_t> traits_blob() {
  std::vector<std::uint8_t> blob(kTraitsSize);
  blob[0] = static_cast<std::uint8_t>(kTraitsSize);
  blob[1] = static_cast<std::uint8_t>(kTraitsSize >> 8);
  std::memcpy(blob.data() + 2, kProviderName, sizeof kProviderName);  // with its NUL
  std::uint8_t* trait = blob.data() + 2 + sizeof kProviderName;
  trait[0] = static_cast<std::uint8_t>(kTraitSize);
  trait[1] = static_cast<std::uint8_t>(kTraitSize >> 8);
  trait[2] = kTraitGroup;
  std::memcpy(trait + 3, &kGroupId, sizeof(GUID));
  return blob;
}

class TraceLoggingProvider final : public etwh::ProviderUnderTest {
 public:
  etwh::SubjectDescription describe() const override {
    etwh::SubjectDescription d;
    for (const TlEvent& e : kTestEvents) d.test_events.push_back(e.descriptor);
    for (const TlEvent& e : kStateEvents) d.state_events.push_back(e.descriptor);
    // Every term of the enable formula decides some event, so some events are what lint warns
    // of in a real provider: said here, as a NOLINT comment would.
    const char* state = "state events: every session that asks for state gets them";
    d.intended_lint = {
        {"DESC-KEYWORD-NONZERO", kTestEvents[3].descriptor, "the formula's keyword 0 term"},
        {"DESC-LEVEL-NONZERO", kTestEvents[6].descriptor, "the formula's LOG_ALWAYS level"},
        {"DESC-LEVEL-NONZERO", kStateEvents[0].descriptor, state},
        {"DESC-KEYWORD-NONZERO", kStateEvents[0].descriptor, state},
        {"DESC-KEYWORD-NONZERO", kStateEvents[1].descriptor, state}};
    return d;
  }

  ULONG register_providers(etwh::Registrar& registrar) override {
    REGHANDLE handle = 0;
    ULONG status = registrar.event_register(&kProviderId, &enable_callback, nullptr, &handle);
    if (status != ERROR_SUCCESS) return status;
    g_handle.store(handle);
    std::vector<std::uint8_t> blob = traits_blob();
    status = EventSetInformation(handle, static_cast<EVENT_INFO_CLASS>(kSetTraits), blob.data(),
                                 static_cast<ULONG>(blob.size()));
    if (status != ERROR_SUCCESS) registrar.event_unregister(handle);
    return status;
  }

  ULONG unregister_providers(etwh::Registrar& registrar) override {
    const ULONG status = registrar.event_unregister(g_handle.load());
    g_enabled.store(false);
    return status;
  }

  void write_test_events() override {
    for (const TlEvent& e : kTestEvents) {
      if (enabled(e.descriptor)) write(e);
    }
  }

  void write_state_events() override { write_state(); }
};

}  // namespace

std::unique_ptr<etwh::ProviderUnderTest> etwh::make_provider_under_test() {
  return std::make_unique<TraceLoggingProvider>();
}
