// A provider in mc.exe's generated shape (mc_shaped_provider.h), built against the installed
// etwrt with no shim: its selectany objects are one definition across two translation units at
// a real address, and its control callback's enable bits follow what a session enables.
// Prints each check; exits 0 only if all hold.
#include <windows.h>
#include "mc_shaped_provider.h"
#include "session_properties.h"

#include <cstdio>
#include <string>
#include <vector>

namespace {

int g_failures = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "PASS" : "FAIL", what.c_str());
  if (!ok) ++g_failures;
}

ULONG enable(TRACEHANDLE session, ULONG code, UCHAR level, ULONGLONG any) {
  return EnableTraceEx2(session, &ShapeProvider, code, level, any, 0, 5000, nullptr);
}

}  // namespace

int main() {
  ULONG* volatile bits = ShapeEnableBits;
  check(bits != nullptr, "the enable bits (selectany, no initializer) have an address");
  check(bits == second_unit_enable_bits() && &ShapeProvider_Context == second_unit_context(),
        "both translation units see one instance of each selectany object");

  Properties properties;
  EVENT_TRACE_PROPERTIES* const props = properties.get();
  TRACEHANDLE session = 0;
  check(StartTraceA(&session, "mc-shaped", props) == ERROR_SUCCESS, "StartTraceA");
  check(EventRegisterShape() == ERROR_SUCCESS, "EventRegisterShape");
  check(!EventEnabledShapeInfo() && !EventEnabledShapeVerbose(), "no session: no event enabled");

  check(enable(session, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 4, 0x1) == ERROR_SUCCESS,
        "enable at level 4, keyword 0x1");
  check(ShapeProvider_Context.Level == 4 && ShapeProvider_Context.MatchAnyKeyword == 0x1,
        "the callback kept the session's level and keywords");
  check(EventEnabledShapeInfo() && !EventEnabledShapeVerbose(),
        "Info (level 4, keyword 0x1) enabled, Verbose (level 5, keyword 0x2) not");
  check(EventWriteShapeInfo(7u) == ERROR_SUCCESS, "EventWriteShapeInfo");

  check(enable(session, EVENT_CONTROL_CODE_ENABLE_PROVIDER, 5, 0x3) == ERROR_SUCCESS,
        "enable again at level 5, keywords 0x3");
  check(ShapeEnableBits[0] == 0x3, "both enable bits set");
  check(EventWriteShapeVerbose(8u) == ERROR_SUCCESS, "EventWriteShapeVerbose");

  check(enable(session, EVENT_CONTROL_CODE_DISABLE_PROVIDER, 0, 0) == ERROR_SUCCESS, "disable");
  check(ShapeEnableBits[0] == 0 && ShapeProvider_Context.IsEnabled == 0,
        "disable cleared the enable bits");

  check(EventUnregisterShape() == ERROR_SUCCESS && ShapeHandle == 0, "EventUnregisterShape");
  check(ControlTraceA(session, nullptr, props, EVENT_TRACE_CONTROL_STOP) == ERROR_SUCCESS,
        "ControlTraceA STOP");
  return g_failures == 0 ? 0 : 1;
}
