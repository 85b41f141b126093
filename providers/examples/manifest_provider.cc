// A manifest-style provider under test, written the way seed 000's example describes: its
// EnableCallback records Enabled, Level, MatchAnyKeyword and MatchAllKeyword, copies the part of
// FilterData it needs (a list of event IDs to skip), writes its state events on CAPTURE_STATE
// and ignores control codes it does not know; it writes an event only when its own filter says
// so. Each EXAMPLE_MUTANT_* definition compiles one realistic defect in (mutants/mutants.json);
// the clean target defines none.
#include "etwh/provider_under_test.h"

#include <evntrace.h>  // EVENT_CONTROL_CODE_* (not in every SDK's evntprov.h)

#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

// {6e1d3c2a-5b4f-4c8e-9a71-2f0d8b3e6c51}
constexpr GUID kProviderId = {
    0x6e1d3c2a, 0x5b4f, 0x4c8e, {0x9a, 0x71, 0x2f, 0x0d, 0x8b, 0x3e, 0x6c, 0x51}};

// The Id of the EVENT_FILTER_HEADER block this provider reads (its own filter format).
constexpr USHORT kSkipIdsFilter = 0x7e57;

#if defined(EXAMPLE_MUTANT_RESERVED_CHANNEL)  // Mutant: events in reserved channel 5.
constexpr UCHAR kChannel = 5;
#else
constexpr UCHAR kChannel = 0;  // manifest events without a channel
#endif

constexpr EVENT_DESCRIPTOR event(USHORT id, UCHAR level, ULONGLONG keyword) {
  return EVENT_DESCRIPTOR{id, 0, kChannel, level, 0, 0, keyword};
}

// Levels 0..5 and keywords chosen so that every term of the enable formula decides some event.
constexpr std::array<EVENT_DESCRIPTOR, 8> kTestEvents = {
    event(1, 1, 0x1), event(2, 2, 0x2),  event(3, 3, 0x3), event(4, 4, 0x0),
    event(5, 5, 0xc), event(6, 0, 0x10), event(7, 4, 0x5), event(8, 2, 0x8000000000000000)};
constexpr std::array<EVENT_DESCRIPTOR, 2> kStateEvents = {event(100, 0, 0), event(101, 0, 0)};

constexpr std::size_t kMaxSkipped = 32;

// What the callback recorded. The callback must not block (CB-FAST), so no lock: each field is
// atomic, and the harness never writes while a callback runs.
struct ProviderState {
  std::atomic<bool> enabled{false};
  std::atomic<UCHAR> level{0};
  std::atomic<ULONGLONG> match_any{0};
  std::atomic<ULONGLONG> match_all{0};
  std::array<std::atomic<USHORT>, kMaxSkipped> skipped{};
  std::atomic<std::size_t> skipped_count{0};
#if defined(EXAMPLE_MUTANT_FILTER_POINTER_KEPT)
  std::atomic<const std::uint8_t*> kept_filter{nullptr};
  std::atomic<ULONG> kept_size{0};
#endif
};

ProviderState g_state;
std::atomic<REGHANDLE> g_handle{0};

void write(const EVENT_DESCRIPTOR& d) {
  // A small payload (the event id) so consumers get some user data, as real events carry.
  const std::uint32_t payload = d.Id;
  EVENT_DATA_DESCRIPTOR data;
  EventDataDescCreate(&data, &payload, sizeof payload);
  EventWrite(g_handle.load(), &d, 1, &data);
}

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
    g_state.kept_filter.store(chain);
    g_state.kept_size.store(filter->Size);
    return;
#endif
    for_each_skipped_id(chain, filter->Size, [&](USHORT id) {
      if (n < kMaxSkipped) g_state.skipped[n++].store(id);
    });
  }
#if defined(EXAMPLE_MUTANT_FILTER_POINTER_KEPT)
  g_state.kept_filter.store(nullptr);
  g_state.kept_size.store(0);
#endif
  g_state.skipped_count.store(n);
}

bool skipped(USHORT id) {
#if defined(EXAMPLE_MUTANT_FILTER_POINTER_KEPT)
  bool found = false;
  if (const std::uint8_t* chain = g_state.kept_filter.load()) {
    for_each_skipped_id(chain, g_state.kept_size.load(),
                        [&](USHORT s) { found = found || s == id; });
  }
  return found;
#else
  const std::size_t n = g_state.skipped_count.load();
  for (std::size_t i = 0; i < n; ++i) {
    if (g_state.skipped[i].load() == id) return true;
  }
  return false;
#endif
}

// PROV-EVENT-ENABLED, as seed 000's MyProviderEventEnabled.
bool event_enabled(const EVENT_DESCRIPTOR& e) {
  const ULONGLONG any = g_state.match_any.load();
  const ULONGLONG all = g_state.match_all.load();
#if defined(EXAMPLE_MUTANT_LEVEL_LT)
  const bool level_ok = e.Level < g_state.level.load();  // Mutant: < instead of <=.
#else
  const bool level_ok = e.Level <= g_state.level.load();
#endif
#if defined(EXAMPLE_MUTANT_MATCHALL_IGNORED)
  const bool all_ok = true;  // Mutant: MatchAllKeyword is not consulted.
  (void)all;
#else
  const bool all_ok = (e.Keyword & all) == all;
#endif
  return g_state.enabled.load() && level_ok &&
         (e.Keyword == 0 || ((e.Keyword & any) != 0 && all_ok));
}

void write_state() {
  for (const EVENT_DESCRIPTOR& d : kStateEvents) write(d);
}

VOID NTAPI enable_callback(LPCGUID, ULONG is_enabled, UCHAR level, ULONGLONG match_any,
                           ULONGLONG match_all, PEVENT_FILTER_DESCRIPTOR filter, PVOID) {
#if defined(EXAMPLE_MUTANT_SLOW_CALLBACK)
  // Mutant: does slow work (a blocking call) inside the callback.
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
#endif
  switch (is_enabled) {
    case EVENT_CONTROL_CODE_ENABLE_PROVIDER:
      g_state.level.store(level);
      g_state.match_any.store(match_any);
      g_state.match_all.store(match_all);
      record_filter(filter);
      g_state.enabled.store(true);
      break;
    case EVENT_CONTROL_CODE_DISABLE_PROVIDER:
#if !defined(EXAMPLE_MUTANT_DISABLE_IGNORED)  // Mutant: keeps writing after DISABLE.
      g_state.enabled.store(false);
#endif
      break;
    case EVENT_CONTROL_CODE_CAPTURE_STATE: write_state(); break;
    default:
#if defined(EXAMPLE_MUTANT_CRASH_UNKNOWN_CODE)
      std::abort();  // Mutant: treats a control code it does not know as impossible.
#endif
      break;  // Codes it does not know are ignored (CB-UNKNOWN-CODE).
  }
}

class ManifestProvider final : public etwh::ProviderUnderTest {
 public:
  etwh::SubjectDescription describe() const override {
    etwh::SubjectDescription d;
    d.test_events.assign(kTestEvents.begin(), kTestEvents.end());
    d.state_events.assign(kStateEvents.begin(), kStateEvents.end());
    d.id_filter = kSkipIdsFilter;
    return d;
  }

  ULONG register_providers(etwh::Registrar& registrar) override {
    REGHANDLE handle = 0;
    const ULONG status = registrar.event_register(&kProviderId, &enable_callback, nullptr, &handle);
    g_handle.store(handle);
    return status;
  }

  ULONG unregister_providers(etwh::Registrar& registrar) override {
    const ULONG status = registrar.event_unregister(g_handle.load());
    g_state.enabled.store(false);
    return status;
  }

  void write_test_events() override {
    for (const EVENT_DESCRIPTOR& d : kTestEvents) {
      if (event_enabled(d) && !skipped(d.Id)) write(d);
    }
  }

  void write_state_events() override { write_state(); }
};

}  // namespace

std::unique_ptr<etwh::ProviderUnderTest> etwh::make_provider_under_test() {
  return std::make_unique<ManifestProvider>();
}
