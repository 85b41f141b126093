// etwh's provider-under-test adapter: link your provider's code with the library
// etwh_provider_under_test and you get an agent executable (providers/PROTOCOL.md) that
// `etwh run --subject PATH` drives. The harness then judges your provider only by what it writes
// (seen by real consumers) and by what its EnableCallback is given and how long it takes
// (providers/adapter/README.md).
#pragma once

#include <windows.h>
#include <evntprov.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace etwh {

// Stands in for EventRegister / EventUnregister in your registration code. It registers your
// callback behind a thin wrapper that reports every invocation (IsEnabled, Level, keywords,
// FilterData, the time your callback took) and then calls yours with the platform's arguments,
// CallbackContext included, unchanged.
class Registrar {
 public:
  virtual ~Registrar() = default;

  // EventRegister's contract. `callback` may be NULL (nothing is then reported).
  virtual ULONG event_register(LPCGUID provider_id, PENABLECALLBACK callback, PVOID context,
                               PREGHANDLE handle) = 0;

  // EventUnregister's contract, for a handle from event_register.
  virtual ULONG event_unregister(REGHANDLE handle) = 0;
};

// What your provider writes, so that the harness can compute what a consumer must receive.
struct SubjectDescription {
  // Written by write_test_events(), in this order, each at most once: exactly those for which
  // your own filter (PROV-EVENT-ENABLED's formula over what your callback recorded) holds.
  std::vector<EVENT_DESCRIPTOR> test_events;
  // Written, in this order, once each, by write_state_events(); your callback calls it on
  // EVENT_CONTROL_CODE_CAPTURE_STATE. Empty: your provider does not support capture state.
  std::vector<EVENT_DESCRIPTOR> state_events;
  // Set if your provider takes a filter of its own through FilterData: an
  // EVENT_FILTER_TYPE_SCHEMATIZED block (EVENT_FILTER_HEADER) with this Id whose data is a list
  // of little-endian USHORT event IDs that write_test_events() must then skip. Your callback
  // copies what it needs (CB-FILTER-COPY). Unset: the harness gives your provider no filter.
  std::optional<USHORT> id_filter;
  // Lint warnings your provider means, as a NOLINT comment would say: each a lint rule
  // (DESC-LEVEL-NONZERO, DESC-KEYWORD-NONZERO, ...) on one of your events (its descriptor), and
  // why. The harness reports a matching warning as intended (a note, shown with -v) instead of a
  // warning; a lint failure stays a failure.
  struct IntendedLint {
    std::string rule;
    EVENT_DESCRIPTOR event{};
    std::string reason;
  };
  std::vector<IntendedLint> intended_lint;
};

// Your provider, as the harness sees it. Calls come from one thread (the agent's request
// thread); your callback runs on whatever thread the platform uses.
class ProviderUnderTest {
 public:
  virtual ~ProviderUnderTest() = default;

  virtual SubjectDescription describe() const = 0;

  // Registers your provider through `registrar` (the first provider registered is the one the
  // harness enables and judges), sets its traits if it has some. Returns a Win32 status.
  virtual ULONG register_providers(Registrar& registrar) = 0;

  // Unregisters what register_providers registered.
  virtual ULONG unregister_providers(Registrar& registrar) = 0;

  // Writes describe().test_events that your own filtering lets through.
  virtual void write_test_events() = 0;

  // Writes describe().state_events (what your callback does on CAPTURE_STATE). The harness also
  // calls it directly, to check the description against what you write.
  virtual void write_state_events() = 0;
};

// Defined by you: the provider the agent hosts. Called once, before any request.
std::unique_ptr<ProviderUnderTest> make_provider_under_test();

}  // namespace etwh
