// A manifest-style provider under test: the code a provider author writes around the header
// mc.exe generates from their manifest (manifest_provider_events.h, in that shape). The
// generated control callback keeps the sessions' level and keywords and the enable bits; the
// author's own callback (MCGEN_PRIVATE_ENABLE_CALLBACK_V2, called by the generated one) copies
// the part of FilterData it needs (a list of event IDs to skip), writes the state events on
// CAPTURE_STATE and ignores control codes it does not know; each write goes through the
// generated EventWrite macro, which checks the event's enable bit. Each EXAMPLE_MUTANT_*
// definition compiles one realistic defect in (mutants/mutants.json); the clean target defines
// none.
#include "etwh/provider_under_test.h"

#include <windows.h>
#include <evntprov.h>

// The author's callback, called by the generated one after it updated the context.
extern "C" VOID NTAPI ExampleManifestEnableCallback(LPCGUID SourceId, ULONG ControlCode,
                                                    UCHAR Level, ULONGLONG MatchAnyKeyword,
                                                    ULONGLONG MatchAllKeyword,
                                                    PEVENT_FILTER_DESCRIPTOR FilterData,
                                                    PVOID CallbackContext);
#define MCGEN_PRIVATE_ENABLE_CALLBACK_V2 ExampleManifestEnableCallback
#include "manifest_provider_events.h"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

// The Id of the EVENT_FILTER_HEADER block this provider reads (its own filter format).
constexpr USHORT kSkipIdsFilter = 0x7e57;
constexpr std::size_t kMaxSkipped = 32;

// The event IDs the last ENABLE asked to skip. The callback must not block (CB-FAST), so no
// lock: each field is atomic.
struct SkipList {
  std::array<std::atomic<USHORT>, kMaxSkipped> ids{};
  std::atomic<std::size_t> count{0};
#if defined(EXAMPLE_MUTANT_FILTER_POINTER_KEPT)
  std::atomic<const std::uint8_t*> kept_filter{nullptr};
  std::atomic<ULONG> kept_size{0};
#endif
};

SkipList g_skip;

// Calls `f(id)` for each event ID in the blocks of a FilterData chain that carry our filter.
template <typename F>
void for_each_skipped_id(const std::uint8_t* chain, ULONG size, F f) {
  ULONG at = 0;
  while (size - at >= sizeof(EVENT_FILTER_HEADER)) {
    EVENT_FILTER_HEADER header;
    std::memcpy(&header, chain + at, sizeof header);
    if (header.Size < sizeof header || header.Size > size - at) return;  // malformed: stop
    if (header.Id == kSkipIdsFilter) {
      for (ULONG k = sizeof header; k + sizeof(USHORT) <= header.Size; k += sizeof(USHORT)) {
        f(static_cast<USHORT>(chain[at + k] | (chain[at + k + 1] << 8)));
      }
    }
    if (header.NextOffset == 0) return;
    at += header.NextOffset;
  }
}

// Copies what it needs of FilterData: the platform reuses that memory once we return.
void record_filter(PEVENT_FILTER_DESCRIPTOR filter) {
  std::size_t n = 0;
  if (filter != nullptr && filter->Type == EVENT_FILTER_TYPE_SCHEMATIZED && filter->Ptr != 0) {
    const auto* chain =
        reinterpret_cast<const std::uint8_t*>(static_cast<std::uintptr_t>(filter->Ptr));
#if defined(EXAMPLE_MUTANT_FILTER_POINTER_KEPT)
    // Mutant: keeps the pointer and reads the list at write time, after the callback returned.
    g_skip.kept_filter.store(chain);
    g_skip.kept_size.store(filter->Size);
    return;
#endif
    for_each_skipped_id(chain, filter->Size, [&](USHORT id) {
      if (n < kMaxSkipped) g_skip.ids[n++].store(id);
    });
  }
#if defined(EXAMPLE_MUTANT_FILTER_POINTER_KEPT)
  g_skip.kept_filter.store(nullptr);
  g_skip.kept_size.store(0);
#endif
  g_skip.count.store(n);
}

bool skipped(USHORT id) {
#if defined(EXAMPLE_MUTANT_FILTER_POINTER_KEPT)
  bool found = false;
  if (const std::uint8_t* chain = g_skip.kept_filter.load()) {
    for_each_skipped_id(chain, g_skip.kept_size.load(),
                        [&](USHORT s) { found = found || s == id; });
  }
  return found;
#else
  const std::size_t n = g_skip.count.load();
  for (std::size_t i = 0; i < n; ++i) {
    if (g_skip.ids[i].load() == id) return true;
  }
  return false;
#endif
}

// The payload of each event (its template has one UInt32): the event's Id.
void write_state() {
  EventWriteStateConfig(StateConfig.Id);
  EventWriteStateCounters(StateCounters.Id);
}

class ManifestProvider final : public etwh::ProviderUnderTest {
 public:
  etwh::SubjectDescription describe() const override {
    etwh::SubjectDescription d;
    d.test_events = {Test1, Test2, Test3, Test4, Test5, Test6, Test7, Test8};
    d.state_events = {StateConfig, StateCounters};
    d.id_filter = kSkipIdsFilter;
    // Every term of the enable formula decides some event, so some events are what lint warns
    // of in a real provider: said here, as a NOLINT comment would.
    const char* keyword0 = "keyword 0: the formula's 'keyword 0 always passes' term";
    const char* level0 = "level 0: the formula's level bound for LOG_ALWAYS";
    const char* state = "state events: every session that asks for state gets them";
    d.intended_lint = {{"DESC-KEYWORD-NONZERO", Test4, keyword0},
                       {"DESC-LEVEL-NONZERO", Test6, level0},
                       {"DESC-KEYWORD-NONZERO", Test8, "Microsoft's top keyword bit, in MatchAny"},
                       {"DESC-LEVEL-NONZERO", StateConfig, state},
                       {"DESC-KEYWORD-NONZERO", StateConfig, state},
                       {"DESC-LEVEL-NONZERO", StateCounters, state},
                       {"DESC-KEYWORD-NONZERO", StateCounters, state}};
    return d;
  }

  // What EventRegisterEtwh_Example_Manifest() does, with the registrar in EventRegister's place.
  ULONG register_providers(etwh::Registrar& registrar) override {
    if (Etwh_Example_ManifestHandle != 0) return ERROR_SUCCESS;
    return registrar.event_register(&ETWH_EXAMPLE_MANIFEST, &ExampleMcControlCallback,
                                    &ETWH_EXAMPLE_MANIFEST_Context, &Etwh_Example_ManifestHandle);
  }

  ULONG unregister_providers(etwh::Registrar& registrar) override {
    const ULONG status = registrar.event_unregister(Etwh_Example_ManifestHandle);
    Etwh_Example_ManifestHandle = 0;
    return status;
  }

  void write_test_events() override {
    if (!skipped(Test1.Id)) EventWriteTest1(Test1.Id);
    if (!skipped(Test2.Id)) EventWriteTest2(Test2.Id);
    if (!skipped(Test3.Id)) EventWriteTest3(Test3.Id);
    if (!skipped(Test4.Id)) EventWriteTest4(Test4.Id);
    if (!skipped(Test5.Id)) EventWriteTest5(Test5.Id);
    if (!skipped(Test6.Id)) EventWriteTest6(Test6.Id);
    if (!skipped(Test7.Id)) EventWriteTest7(Test7.Id);
    if (!skipped(Test8.Id)) EventWriteTest8(Test8.Id);
  }

  void write_state_events() override { write_state(); }
};

}  // namespace

extern "C" VOID NTAPI ExampleManifestEnableCallback(LPCGUID, ULONG ControlCode, UCHAR, ULONGLONG,
                                                    ULONGLONG, PEVENT_FILTER_DESCRIPTOR FilterData,
                                                    PVOID) {
#if defined(EXAMPLE_MUTANT_SLOW_CALLBACK)
  // Mutant: does slow work (a blocking call) inside the callback.
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
#endif
  switch (ControlCode) {
    case EVENT_CONTROL_CODE_ENABLE_PROVIDER: record_filter(FilterData); break;
    case EVENT_CONTROL_CODE_DISABLE_PROVIDER: break;  // the generated callback cleared the bits
    case EVENT_CONTROL_CODE_CAPTURE_STATE: write_state(); break;
    default:
#if defined(EXAMPLE_MUTANT_CRASH_UNKNOWN_CODE)
      std::abort();  // Mutant: treats a control code it does not know as impossible.
#endif
      break;  // Codes it does not know are ignored (CB-UNKNOWN-CODE).
  }
}

std::unique_ptr<etwh::ProviderUnderTest> etwh::make_provider_under_test() {
  return std::make_unique<ManifestProvider>();
}
