// A provider in TraceLogging's shape, written for Windows and built against the installed
// etwrt with no shim, only etwrt::win32_abi's documented options (-fshort-wchar, so L"..." is
// UTF-16 as the SDK's TraceLoggingProvider.h static_asserts): provider traits through
// EventSetInformation, an event whose metadata and payload travel as typed data descriptors,
// a wide string field. A UNICODE controller and consumer (StartTrace, OpenTrace with
// EVENT_TRACE_LOGFILE, TEXT("...")) receive the string as UTF-16LE bytes, as Windows' decoders
// expect. Prints each check; exits 0 only if all hold.
#include <windows.h>
#include <evntprov.h>
#include <evntrace.h>
#include <evntcons.h>

#include "session_properties.h"

#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

static_assert(sizeof(wchar_t) == sizeof(char16_t), "TraceLogging needs a 16-bit wchar_t");

namespace {

// {4f1d7e2a-9b36-4c05-8e27-1a3b5c7d9e0f}
const GUID kProvider = {
    0x4f1d7e2a, 0x9b36, 0x4c05, {0x8e, 0x27, 0x1a, 0x3b, 0x5c, 0x7d, 0x9e, 0x0f}};

// TraceLogging's provider traits: UINT16 total size, the provider name (UTF-8, NUL).
const unsigned char kProviderTraits[] = {10, 0, 'T', 'l', 'S', 'h', 'a', 'p', 'e', 0};
// Event metadata: UINT16 size, UINT8 tags, the event name, then per field its name and InType
// (1: a NUL-terminated UTF-16 string).
const unsigned char kEventMetadata[] = {17,  0,   0, 'G', 'r', 'e', 'e', 't', 'i',
                                        'n', 'g', 0, 't', 'e', 'x', 't', 0,   1};
const EVENT_DESCRIPTOR kGreeting = {1, 0, 11, TRACE_LEVEL_INFORMATION, 0, 0, 0};
const wchar_t kText[] = L"h\u00e9llo";

int g_failures = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "PASS" : "FAIL", what.c_str());
  if (!ok) ++g_failures;
}

struct Received {
  std::mutex mutex;
  std::vector<std::vector<unsigned char>> payloads;
};

void WINAPI on_record(PEVENT_RECORD record) {
  if (!IsEqualGUID(record->EventHeader.ProviderId, kProvider)) return;
  auto* received = static_cast<Received*>(record->UserContext);
  const auto* data = static_cast<const unsigned char*>(record->UserData);
  std::lock_guard<std::mutex> lock(received->mutex);
  received->payloads.emplace_back(data, data + record->UserDataLength);
}

ULONG write_greeting(REGHANDLE provider) {
  EVENT_DATA_DESCRIPTOR data[3];
  EventDataDescCreate(&data[0], kProviderTraits, sizeof kProviderTraits);
  data[0].Type = EVENT_DATA_DESCRIPTOR_TYPE_PROVIDER_METADATA;
  EventDataDescCreate(&data[1], kEventMetadata, sizeof kEventMetadata);
  data[1].Type = EVENT_DATA_DESCRIPTOR_TYPE_EVENT_METADATA;
  EventDataDescCreate(&data[2], kText, sizeof kText);  // The string and its NUL.
  return EventWriteTransfer(provider, &kGreeting, nullptr, nullptr, ARRAYSIZE(data), data);
}

bool ends_with(const std::vector<unsigned char>& bytes, const std::vector<unsigned char>& tail) {
  return bytes.size() >= tail.size() &&
         std::memcmp(bytes.data() + bytes.size() - tail.size(), tail.data(), tail.size()) == 0;
}

}  // namespace

int main() {
  // The name TraceLogging hashes into a provider GUID is upper-cased this way first.
  wchar_t upper[8] = {};
  check(LCMapStringEx(LOCALE_NAME_INVARIANT, LCMAP_UPPERCASE, L"TlShape", -1, upper, 8, nullptr,
                      nullptr, 0) == 8 &&
            std::memcmp(upper, L"TLSHAPE", sizeof upper) == 0,
        "LCMapStringEx upper-cases a provider name");

  Properties properties;
  EVENT_TRACE_PROPERTIES* const props = properties.get();
  TRACEHANDLE session = 0;
  check(StartTrace(&session, TEXT("tl-shaped"), props) == ERROR_SUCCESS, "StartTrace (W)");
  check(std::memcmp(properties.bytes.data() + props->LoggerNameOffset, L"tl-shaped",
                    sizeof L"tl-shaped") == 0,
        "the session name written back in UTF-16");

  Received received;
  wchar_t logger_name[] = L"tl-shaped";
  EVENT_TRACE_LOGFILE logfile{};
  logfile.LoggerName = logger_name;
  logfile.ProcessTraceMode = PROCESS_TRACE_MODE_REAL_TIME | PROCESS_TRACE_MODE_EVENT_RECORD;
  logfile.EventRecordCallback = on_record;
  logfile.Context = &received;
  TRACEHANDLE consumer = OpenTrace(&logfile);
  check(consumer != INVALID_PROCESSTRACE_HANDLE, "OpenTrace (W) by the wide session name");
  std::thread reader([&] { ProcessTrace(&consumer, 1, nullptr, nullptr); });

  REGHANDLE provider = 0;
  check(EventRegister(&kProvider, nullptr, nullptr, &provider) == ERROR_SUCCESS, "EventRegister");
  check(EventSetInformation(provider, EventProviderSetTraits, (PVOID)kProviderTraits,
                            sizeof kProviderTraits) == ERROR_SUCCESS,
        "EventSetInformation(EventProviderSetTraits)");
  check(EnableTraceEx2(session, &kProvider, EVENT_CONTROL_CODE_ENABLE_PROVIDER, TRACE_LEVEL_VERBOSE,
                       0, 0, 5000, nullptr) == ERROR_SUCCESS,
        "EnableTraceEx2");
  check(write_greeting(provider) == ERROR_SUCCESS, "EventWriteTransfer of the greeting");

  check(StopTrace(session, nullptr, props) == ERROR_SUCCESS, "StopTrace (W)");
  reader.join();
  CloseTrace(consumer);
  EventUnregister(provider);

  const std::vector<unsigned char> utf16le = {0x68, 0, 0xE9, 0, 0x6C, 0, 0x6C, 0, 0x6F, 0, 0, 0};
  check(received.payloads.size() == 1, "the consumer got the greeting");
  check(!received.payloads.empty() && ends_with(received.payloads[0], utf16le),
        "its string field is UTF-16LE \"h\\u00e9llo\" with its NUL");
  return g_failures == 0 ? 0 : 1;
}
