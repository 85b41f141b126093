// A hand-written provider, as found in code written for Windows: EventRegister with a callback
// that records the sessions' aggregate (seed 000's MY_PROVIDER_STATE), an enabled check by seed
// 000's formula before each write, events carrying a UTF-16 string (L"..." built with
// -fshort-wchar), state events on CAPTURE_STATE. The etwh::ProviderUnderTest part around it is
// all a user adds to have it judged. SAMPLE_IGNORES_DISABLE compiles one defect in.
#include <etwh/provider_under_test.h>

#include <windows.h>
#include <evntprov.h>
#include <evntrace.h>

#include <atomic>
#include <cstdint>
#include <memory>

static_assert(sizeof(wchar_t) == 2, "built with etwrt::win32_abi: wchar_t is UTF-16");

namespace {

// {5a3c9e71-0d2b-4f68-b1e4-83c7a2f6d90e}
const GUID kSampleProvider = {
    0x5a3c9e71, 0x0d2b, 0x4f68, {0xb1, 0xe4, 0x83, 0xc7, 0xa2, 0xf6, 0xd9, 0x0e}};

const EVENT_DESCRIPTOR kStarted = {1, 0, 0, TRACE_LEVEL_INFORMATION, 1, 0, 0x1};
const EVENT_DESCRIPTOR kRequest = {2, 0, 0, TRACE_LEVEL_VERBOSE, 0, 0, 0x2};
const EVENT_DESCRIPTOR kFailure = {3, 0, 0, TRACE_LEVEL_ERROR, 0, 0, 0x3};
const EVENT_DESCRIPTOR kAlways = {4, 0, 0, TRACE_LEVEL_CRITICAL, 0, 0, 0};
const EVENT_DESCRIPTOR kConfig = {10, 0, 0, TRACE_LEVEL_INFORMATION, 0, 0, 0};

// Seed 000's provider state, kept by the callback; atomics since writes come from other threads.
struct ProviderState {
  std::atomic<bool> enabled{false};
  std::atomic<UCHAR> level{0};
  std::atomic<ULONGLONG> match_any{0};
  std::atomic<ULONGLONG> match_all{0};
  REGHANDLE handle = 0;
};

ProviderState g_provider;

bool event_enabled(const ProviderState& p, const EVENT_DESCRIPTOR& e) {
  const ULONGLONG any = p.match_any.load();
  const ULONGLONG all = p.match_all.load();
  return p.enabled.load() && e.Level <= p.level.load() &&
         (e.Keyword == 0 || ((e.Keyword & any) != 0 && (e.Keyword & all) == all));
}

// Payload: a UINT32 and a NUL-terminated UTF-16 string, as the event's template would say.
void write(const ProviderState& p, const EVENT_DESCRIPTOR& e, const wchar_t* text, ULONG bytes) {
  const UINT32 id = e.Id;
  EVENT_DATA_DESCRIPTOR data[2];
  EventDataDescCreate(&data[0], &id, sizeof id);
  EventDataDescCreate(&data[1], text, bytes);
  EventWrite(p.handle, &e, ARRAYSIZE(data), data);
}

void write_state(const ProviderState& p) {
  static const wchar_t kText[] = L"config: d\u00e9faut";
  write(p, kConfig, kText, sizeof kText);
}

VOID NTAPI on_enable(LPCGUID, ULONG control_code, UCHAR level, ULONGLONG match_any,
                     ULONGLONG match_all, PEVENT_FILTER_DESCRIPTOR, PVOID context) {
  auto* p = static_cast<ProviderState*>(context);
  switch (control_code) {
    case EVENT_CONTROL_CODE_ENABLE_PROVIDER:
      p->level.store(level);
      p->match_any.store(match_any);
      p->match_all.store(match_all);
      p->enabled.store(true);
      break;
    case EVENT_CONTROL_CODE_DISABLE_PROVIDER:
#if !defined(SAMPLE_IGNORES_DISABLE)  // The defect: keeps writing after DISABLE.
      p->enabled.store(false);
#endif
      break;
    case EVENT_CONTROL_CODE_CAPTURE_STATE: write_state(*p); break;
    default: break;  // codes it does not know are ignored
  }
}

class SampleProvider final : public etwh::ProviderUnderTest {
 public:
  etwh::SubjectDescription describe() const override {
    etwh::SubjectDescription d;
    d.test_events = {kStarted, kRequest, kFailure, kAlways};
    d.state_events = {kConfig};
    return d;
  }

  ULONG register_providers(etwh::Registrar& registrar) override {
    return registrar.event_register(&kSampleProvider, &on_enable, &g_provider, &g_provider.handle);
  }

  ULONG unregister_providers(etwh::Registrar& registrar) override {
    const ULONG status = registrar.event_unregister(g_provider.handle);
    g_provider.enabled.store(false);
    return status;
  }

  void write_test_events() override {
    static const wchar_t kStartedText[] = L"started";
    static const wchar_t kRequestText[] = L"GET /caf\u00e9";
    static const wchar_t kFailureText[] = L"timed out";
    static const wchar_t kAlwaysText[] = L"always";
    if (event_enabled(g_provider, kStarted))
      write(g_provider, kStarted, kStartedText, sizeof kStartedText);
    if (event_enabled(g_provider, kRequest))
      write(g_provider, kRequest, kRequestText, sizeof kRequestText);
    if (event_enabled(g_provider, kFailure))
      write(g_provider, kFailure, kFailureText, sizeof kFailureText);
    if (event_enabled(g_provider, kAlways))
      write(g_provider, kAlways, kAlwaysText, sizeof kAlwaysText);
  }

  void write_state_events() override { write_state(g_provider); }
};

}  // namespace

std::unique_ptr<etwh::ProviderUnderTest> etwh::make_provider_under_test() {
  return std::make_unique<SampleProvider>();
}
