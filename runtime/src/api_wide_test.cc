// The W entry points and wide strings against a real broker: a session started, queried and
// stopped by a UTF-16 name, a consumer opened by it, EventWriteString's text reaching that
// consumer as UTF-16LE bytes; LCMapStringEx as TraceLogging's name hash calls it.
#include "test_broker_home.h"

#include <windows.h>
#include <evntprov.h>
#include <evntrace.h>
#include <evntcons.h>

#include <gtest/gtest.h>

#include <cstring>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

const GUID kProvider = {
    0x5a0c1e33, 0x2b7d, 0x4e61, {0x8f, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde}};

// "wide-é€😀": a Latin-1 letter, a BMP symbol and a surrogate pair.
const char16_t kSessionName[] = u"wide-\u00e9\u20ac\U0001F600";
const char kSessionNameUtf8[] = "wide-\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";

struct WideProperties {
  explicit WideProperties(std::size_t tail = 512) : bytes(sizeof(EVENT_TRACE_PROPERTIES) + tail) {
    get()->Wnode.BufferSize = static_cast<ULONG>(bytes.size());
    get()->Wnode.Flags = WNODE_FLAG_TRACED_GUID;
    get()->LoggerNameOffset = sizeof(EVENT_TRACE_PROPERTIES);
    get()->LogFileMode = EVENT_TRACE_REAL_TIME_MODE;
  }
  EVENT_TRACE_PROPERTIES* get() { return reinterpret_cast<EVENT_TRACE_PROPERTIES*>(bytes.data()); }
  std::u16string logger_name() const {
    std::u16string name;
    for (std::size_t at = sizeof(EVENT_TRACE_PROPERTIES); at + 1 < bytes.size(); at += 2) {
      char16_t unit;
      std::memcpy(&unit, bytes.data() + at, 2);
      if (unit == 0) break;
      name.push_back(unit);
    }
    return name;
  }
  std::vector<unsigned char> bytes;
};

class EtwrtWide : public ::testing::Test {
 protected:
  etwrt::testing::PrivateBrokerHome home_{"etwrt-wide-test"};
};

TEST_F(EtwrtWide, SessionStartedQueriedAndStoppedByAWideName) {
  WideProperties props;
  TRACEHANDLE session = 0;
  ASSERT_EQ(StartTraceW(&session, kSessionName, props.get()), ULONG{ERROR_SUCCESS});
  EXPECT_NE(session, TRACEHANDLE{0});
  EXPECT_EQ(props.logger_name(), kSessionName);  // Written back in UTF-16, as on Windows.

  WideProperties query;
  ASSERT_EQ(QueryTraceW(0, kSessionName, query.get()), ULONG{ERROR_SUCCESS});
  EXPECT_EQ(query.get()->Wnode.HistoricalContext, session);
  EXPECT_EQ(query.logger_name(), kSessionName);

  // The same session by its UTF-8 name through the A entry point.
  std::vector<char> narrow(sizeof(EVENT_TRACE_PROPERTIES) + 256);
  auto* a = reinterpret_cast<EVENT_TRACE_PROPERTIES*>(narrow.data());
  a->Wnode.BufferSize = static_cast<ULONG>(narrow.size());
  a->LoggerNameOffset = sizeof(EVENT_TRACE_PROPERTIES);
  ASSERT_EQ(QueryTraceA(0, kSessionNameUtf8, a), ULONG{ERROR_SUCCESS});
  EXPECT_STREQ(narrow.data() + a->LoggerNameOffset, kSessionNameUtf8);

  // Again by handle, with no name: the name comes back wide.
  WideProperties by_handle;
  ASSERT_EQ(ControlTraceW(session, nullptr, by_handle.get(), EVENT_TRACE_CONTROL_QUERY),
            ULONG{ERROR_SUCCESS});
  EXPECT_EQ(by_handle.logger_name(), kSessionName);

  WideProperties stop;
  EXPECT_EQ(StopTraceW(0, kSessionName, stop.get()), ULONG{ERROR_SUCCESS});
  WideProperties gone;
  EXPECT_NE(QueryTraceW(0, kSessionName, gone.get()), ULONG{ERROR_SUCCESS});
}

TEST_F(EtwrtWide, BadWideArgumentsChangeNothing) {
  TRACEHANDLE session = 0;
  WideProperties props;
  const std::vector<unsigned char> before = props.bytes;
  const char16_t unpaired[] = {u'a', 0xD800, u'b', 0};
  EXPECT_EQ(StartTraceW(&session, unpaired, props.get()), ULONG{ERROR_INVALID_PARAMETER});
  EXPECT_EQ(StartTraceW(nullptr, u"x", props.get()), ULONG{ERROR_INVALID_PARAMETER});
  // Ten units need 22 bytes: 11 fit the UTF-8 name, not the wide one.
  WideProperties small(12);
  EXPECT_EQ(StartTraceW(&session, u"abcdefghij", small.get()), ULONG{ERROR_BAD_LENGTH});
  EXPECT_EQ(session, TRACEHANDLE{0});
  EXPECT_EQ(props.bytes, before);
  EXPECT_EQ(QueryTraceW(0, unpaired, props.get()), ULONG{ERROR_INVALID_PARAMETER});
  EXPECT_EQ(props.bytes, before);
}

// What the consumer saw of kProvider's events.
struct Received {
  std::mutex mutex;
  std::condition_variable cv;
  bool attached = false;  // the header event came: events written from now on are delivered
  std::vector<std::vector<unsigned char>> payloads;
  std::vector<USHORT> flags;

  bool wait_attached() {
    std::unique_lock lock(mutex);
    return cv.wait_for(lock, std::chrono::seconds(10), [&] { return attached; });
  }
};

void WINAPI on_record(PEVENT_RECORD record) {
  auto* received = static_cast<Received*>(record->UserContext);
  if (IsEqualGUID(record->EventHeader.ProviderId, EventTraceGuid)) {
    std::lock_guard lock(received->mutex);
    received->attached = true;
    received->cv.notify_all();
    return;
  }
  if (!IsEqualGUID(record->EventHeader.ProviderId, kProvider)) return;
  const auto* data = static_cast<const unsigned char*>(record->UserData);
  std::lock_guard lock(received->mutex);
  received->payloads.emplace_back(data, data + record->UserDataLength);
  received->flags.push_back(record->EventHeader.Flags);
}

TEST_F(EtwrtWide, WideConsumerGetsEventWriteStringAsUtf16LittleEndian) {
  WideProperties props;
  TRACEHANDLE session = 0;
  ASSERT_EQ(StartTraceW(&session, kSessionName, props.get()), ULONG{ERROR_SUCCESS});

  Received received;
  std::u16string logger_name = kSessionName;
  EVENT_TRACE_LOGFILEW logfile{};
  logfile.LoggerName = logger_name.data();
  logfile.ProcessTraceMode = PROCESS_TRACE_MODE_REAL_TIME | PROCESS_TRACE_MODE_EVENT_RECORD;
  logfile.EventRecordCallback = on_record;
  logfile.Context = &received;
  TRACEHANDLE consumer = OpenTraceW(&logfile);
  ASSERT_NE(consumer, INVALID_PROCESSTRACE_HANDLE);
  EXPECT_EQ(logfile.LoggerName, logger_name.data());  // The caller's pointer is given back.
  ULONG process_status = ERROR_INVALID_FUNCTION;
  std::thread reader([&] { process_status = ProcessTrace(&consumer, 1, nullptr, nullptr); });
  // A realtime consumer gets what is written once it is attached (its header event came).
  ASSERT_TRUE(received.wait_attached()) << "no header event in 10 s";

  REGHANDLE provider = 0;
  ASSERT_EQ(EventRegister(&kProvider, nullptr, nullptr, &provider), ULONG{ERROR_SUCCESS});
  ASSERT_EQ(EnableTraceEx2(session, &kProvider, EVENT_CONTROL_CODE_ENABLE_PROVIDER,
                           TRACE_LEVEL_VERBOSE, 0, 0, 5000, nullptr),
            ULONG{ERROR_SUCCESS});
  EXPECT_EQ(EventWriteString(provider, TRACE_LEVEL_INFORMATION, 0, u"h\u00e9\U0001F600"),
            ULONG{ERROR_SUCCESS});

  WideProperties stop;
  EXPECT_EQ(StopTraceW(session, nullptr, stop.get()), ULONG{ERROR_SUCCESS});
  reader.join();
  EXPECT_EQ(process_status, ULONG{ERROR_SUCCESS});
  EXPECT_EQ(CloseTrace(consumer), ULONG{ERROR_SUCCESS});
  EventUnregister(provider);

  // h, é, the surrogate pair D83D DE00, the NUL: UTF-16LE as Windows' consumers decode it.
  const std::vector<unsigned char> expected = {0x68, 0x00, 0xE9, 0x00, 0x3D,
                                               0xD8, 0x00, 0xDE, 0x00, 0x00};
  ASSERT_EQ(received.payloads.size(), 1u);
  EXPECT_EQ(received.payloads[0], expected);
  EXPECT_NE(received.flags[0] & EVENT_HEADER_FLAG_STRING_ONLY, 0);
}

TEST(EtwrtNls, LCMapStringExUppercasesAndByteReversesForTheInvariantLocale) {
  const char16_t source[] = u"Ab\u00e9z";
  char16_t out[5] = {};
  EXPECT_EQ(
      LCMapStringEx(LOCALE_NAME_INVARIANT, LCMAP_UPPERCASE, source, 4, out, 5, nullptr, nullptr, 0),
      4);
  EXPECT_EQ(std::u16string(out, 4), u"AB\u00c9Z");
  EXPECT_EQ(LCMapStringEx(LOCALE_NAME_INVARIANT, LCMAP_UPPERCASE | LCMAP_BYTEREV, source, -1, out,
                          5, nullptr, nullptr, 0),
            5);  // With the NUL.
  EXPECT_EQ(out[0], char16_t{0x4100});
  EXPECT_EQ(out[2], char16_t{0xC900});
  EXPECT_EQ(LCMapStringEx(LOCALE_NAME_INVARIANT, LCMAP_UPPERCASE, source, -1, nullptr, 0, nullptr,
                          nullptr, 0),
            5);  // The length needed.
  EXPECT_EQ(
      LCMapStringEx(LOCALE_NAME_INVARIANT, LCMAP_UPPERCASE, source, 4, out, 3, nullptr, nullptr, 0),
      0);  // Too short.
  EXPECT_EQ(LCMapStringEx(u"en-US", LCMAP_UPPERCASE, source, 4, out, 5, nullptr, nullptr, 0), 0);
}

}  // namespace
