// Classic providers on etwrt: TraceEvent's header checks (pure), and RegisterTraceGuidsA /
// ControlCallback / GetTraceLoggerHandle / GetTraceEnableLevel/Flags / TraceEvent /
// TraceMessage / UnregisterTraceGuids against a real broker and a realtime consumer. Each test
// has its own ETWRT_HOME and ends its broker.
#include "test_consumer.h"
#include "test_properties.h"
#include "classic.h"
#include "test_broker_home.h"

#include <windows.h>
#include <evntcons.h>
#include <evntrace.h>

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace std::chrono_literals;

const GUID kControl = {
    0x5c1a0001, 0x1111, 0x4222, {0x83, 0x33, 0x44, 0x44, 0x55, 0x55, 0x66, 0x01}};
const GUID kClass = {0x5c1a0002, 0x1111, 0x4222, {0x83, 0x33, 0x44, 0x44, 0x55, 0x55, 0x66, 0x02}};
const GUID kMessage = {
    0x5c1a0003, 0x1111, 0x4222, {0x83, 0x33, 0x44, 0x44, 0x55, 0x55, 0x66, 0x03}};

// A header followed by `tail` bytes, as TraceEvent reads it.
struct HeaderWithTail {
  EVENT_TRACE_HEADER header{};
  unsigned char tail[32 * sizeof(MOF_FIELD)]{};
};

TEST(ClassicHeader, TracedGuidFlagIsRequired) {
  HeaderWithTail e;
  e.header.Size = sizeof(EVENT_TRACE_HEADER);
  EXPECT_EQ(etwrt::decode_trace_event(e.header, 65536).status, ERROR_INVALID_FLAG_NUMBER);
  e.header.Flags = WNODE_FLAG_TRACED_GUID;
  EXPECT_EQ(etwrt::decode_trace_event(e.header, 65536).status, ERROR_SUCCESS);
}

TEST(ClassicHeader, SizeMustBeBelowBufferSizeMinus72) {
  HeaderWithTail e;
  e.header.Flags = WNODE_FLAG_TRACED_GUID;
  e.header.Size = sizeof(EVENT_TRACE_HEADER) - 1;
  EXPECT_EQ(etwrt::decode_trace_event(e.header, 1024).status, ERROR_INVALID_PARAMETER);
  // A 200-byte "buffer" keeps the tail within the test's storage: limit 128.
  e.header.Size = 200 - 72 - 1;
  EXPECT_EQ(etwrt::decode_trace_event(e.header, 200).status, ERROR_SUCCESS);
  e.header.Size = 200 - 72;
  EXPECT_EQ(etwrt::decode_trace_event(e.header, 200).status, ERROR_MORE_DATA);
}

TEST(ClassicHeader, ClassRollsUpIntoTheDescriptorAndDataFollowsTheHeader) {
  HeaderWithTail e;
  e.header.Flags = WNODE_FLAG_TRACED_GUID;
  e.header.Size = sizeof(EVENT_TRACE_HEADER) + 3;
  e.header.Version = 0x00070412;  // Version 7, Level 4, Type 0x12 (HDR-CLASS-ROLLUP).
  e.header.Guid = kClass;
  e.tail[0] = 0xab;
  const etwrt::ClassicEvent out = etwrt::decode_trace_event(e.header, 65536);
  ASSERT_EQ(out.status, ERROR_SUCCESS);
  EXPECT_EQ(e.header.Class.Type, 0x12);
  EXPECT_EQ(out.descriptor.Opcode, 0x12);
  EXPECT_EQ(out.descriptor.Level, 4);
  EXPECT_EQ(out.descriptor.Version, 7);
  EXPECT_EQ(out.descriptor.Id, 0);
  EXPECT_TRUE(out.guid == kClass);
  ASSERT_EQ(out.data.size(), 1u);
  EXPECT_EQ(out.data[0].Size, 3u);
  EXPECT_EQ(*reinterpret_cast<const unsigned char*>(out.data[0].Ptr), 0xab);
}

TEST(ClassicHeader, GuidPtrAndMofFields) {
  HeaderWithTail e;
  e.header.Flags = WNODE_FLAG_TRACED_GUID | WNODE_FLAG_USE_GUID_PTR;
  e.header.Size = sizeof(EVENT_TRACE_HEADER);
  EXPECT_EQ(etwrt::decode_trace_event(e.header, 65536).status, ERROR_INVALID_PARAMETER);
  e.header.GuidPtr = reinterpret_cast<ULONGLONG>(&kClass);
  EXPECT_TRUE(etwrt::decode_trace_event(e.header, 65536).guid == kClass);

  e.header.Flags = WNODE_FLAG_TRACED_GUID | WNODE_FLAG_USE_MOF_PTR;
  const char text[] = "mof";
  MOF_FIELD fields[MAX_MOF_FIELDS + 1];
  for (MOF_FIELD& f : fields) f = {reinterpret_cast<ULONG64>(text), sizeof text, 0};
  std::memcpy(e.tail, fields, sizeof fields);
  e.header.Size = sizeof(EVENT_TRACE_HEADER) + MAX_MOF_FIELDS * sizeof(MOF_FIELD);
  const etwrt::ClassicEvent ok = etwrt::decode_trace_event(e.header, 65536);
  ASSERT_EQ(ok.status, ERROR_SUCCESS);
  EXPECT_EQ(ok.data.size(), std::size_t{MAX_MOF_FIELDS});
  EXPECT_EQ(ok.data[0].Ptr, reinterpret_cast<ULONG64>(text));
  e.header.Size += sizeof(MOF_FIELD);
  EXPECT_EQ(etwrt::decode_trace_event(e.header, 65536).status, ERROR_INVALID_PARAMETER);
  e.header.Size = sizeof(EVENT_TRACE_HEADER) + 8;  // Not a whole MOF_FIELD.
  EXPECT_EQ(etwrt::decode_trace_event(e.header, 65536).status, ERROR_INVALID_PARAMETER);
  // The data MOF_FIELDs point to counts against the buffer too.
  fields[0].Length = 1000;
  std::memcpy(e.tail, fields, sizeof(MOF_FIELD));
  e.header.Size = sizeof(EVENT_TRACE_HEADER) + sizeof(MOF_FIELD);
  EXPECT_EQ(etwrt::decode_trace_event(e.header, 1024).status, ERROR_MORE_DATA);
}

// What the ControlCallback saw.
struct Request {
  WMIDPREQUESTCODE code;
  TRACEHANDLE logger;
  UCHAR level;
  ULONG flags;
  DWORD last_error;  // After the three calls, ERROR_SUCCESS set before (their pages' protocol).
};

class ControlRecorder {
 public:
  static ULONG WINAPI callback(WMIDPREQUESTCODE code, PVOID context, ULONG*, PVOID buffer) {
    auto* self = static_cast<ControlRecorder*>(context);
    SetLastError(ERROR_SUCCESS);
    const TRACEHANDLE logger = GetTraceLoggerHandle(buffer);
    const UCHAR level = GetTraceEnableLevel(logger);
    const ULONG flags = GetTraceEnableFlags(logger);
    Request r{code, logger, level, flags, GetLastError()};
    std::lock_guard lock(self->mu_);
    self->requests_.push_back(r);
    self->cv_.notify_all();
    return ERROR_SUCCESS;
  }
  std::vector<Request> wait_for(std::size_t n) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, 20s, [&] { return requests_.size() >= n; });
    return requests_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Request> requests_;
};

struct Seen {
  GUID provider{};
  EVENT_DESCRIPTOR descriptor{};
  USHORT flags = 0;
  std::vector<unsigned char> data;
};

// Events other than the synthetic header events.
std::optional<Seen> read_event(PEVENT_RECORD r) {
  if (r->EventHeader.ProviderId == EventTraceGuid) return std::nullopt;
  Seen s;
  s.provider = r->EventHeader.ProviderId;
  s.descriptor = r->EventHeader.EventDescriptor;
  s.flags = r->EventHeader.Flags;
  const auto* p = static_cast<const unsigned char*>(r->UserData);
  s.data.assign(p, p + r->UserDataLength);
  return s;
}

// A realtime EVENT_RECORD consumer of one session, on its own thread.
class Consumer : public etwrt::testing::ThreadConsumer<Seen> {
 public:
  explicit Consumer(const std::string& session) : ThreadConsumer(session, &read_event) {}
};

struct SessionProperties : etwrt::testing::TraceProperties {
  SessionProperties() : TraceProperties(256) {}
};

class ClassicProvider : public ::testing::Test {
 protected:
  etwrt::testing::PrivateBrokerHome home_{"etwrt-classic-test"};

  TRACEHANDLE start(const std::string& name) {
    SessionProperties p;
    TRACEHANDLE h = 0;
    EXPECT_EQ(StartTraceA(&h, name.c_str(), p.get()), ERROR_SUCCESS);
    return h;
  }
  static void stop(TRACEHANDLE h) {
    SessionProperties p;
    EXPECT_EQ(ControlTraceA(h, nullptr, p.get(), EVENT_TRACE_CONTROL_STOP), ERROR_SUCCESS);
  }
};

// An event with `value` as its only MOF data, after the header.
struct ClassicEventBuffer {
  EVENT_TRACE_HEADER header{};
  ULONG value = 0;
};

ULONG trace(TRACEHANDLE logger, UCHAR type, UCHAR level, ULONG value) {
  ClassicEventBuffer e;
  e.header.Size = sizeof(EVENT_TRACE_HEADER) + sizeof(ULONG);
  e.header.Flags = WNODE_FLAG_TRACED_GUID;
  e.header.Guid = kClass;
  e.header.Class.Type = type;
  e.header.Class.Level = level;
  e.header.Class.Version = 2;
  e.value = value;
  return TraceEvent(logger, &e.header);
}

TEST_F(ClassicProvider, RegistrationArguments) {
  ControlRecorder recorder;
  TRACEHANDLE reg = 0;
  TRACE_GUID_REGISTRATION classes[1] = {{&kClass, nullptr}};
  EXPECT_EQ(RegisterTraceGuidsA(nullptr, &recorder, &kControl, 1, classes, nullptr, nullptr, &reg),
            ERROR_INVALID_PARAMETER);
  EXPECT_EQ(RegisterTraceGuidsA(&ControlRecorder::callback, &recorder, nullptr, 1, classes, nullptr,
                                nullptr, &reg),
            ERROR_INVALID_PARAMETER);
  ASSERT_EQ(RegisterTraceGuidsA(&ControlRecorder::callback, &recorder, &kControl, 1, classes,
                                nullptr, nullptr, &reg),
            ERROR_SUCCESS);
  EXPECT_NE(reg, 0u);
  EXPECT_NE(classes[0].RegHandle, nullptr);
  EXPECT_EQ(TraceEvent(0, nullptr), ERROR_INVALID_PARAMETER);
  EXPECT_EQ(trace(12345, 1, 1, 1), ERROR_INVALID_HANDLE);
  EXPECT_EQ(UnregisterTraceGuids(reg), ERROR_SUCCESS);
  EXPECT_EQ(UnregisterTraceGuids(reg), ERROR_INVALID_HANDLE);
}

TEST_F(ClassicProvider, OneSessionAtATimeAndEventsCarryTheClassicHeader) {
  ControlRecorder recorder;
  TRACEHANDLE reg = 0;
  TRACE_GUID_REGISTRATION classes[1] = {{&kClass, nullptr}};
  ASSERT_EQ(RegisterTraceGuidsA(&ControlRecorder::callback, &recorder, &kControl, 1, classes,
                                nullptr, nullptr, &reg),
            ERROR_SUCCESS);
  const std::string name_a = "classic-a-" + std::to_string(::getpid());
  const std::string name_b = "classic-b-" + std::to_string(::getpid());
  const TRACEHANDLE a = start(name_a);
  const TRACEHANDLE b = start(name_b);
  Consumer consumer_a(name_a);
  Consumer consumer_b(name_b);

  ASSERT_EQ(EnableTrace(TRUE, 0x5, TRACE_LEVEL_INFORMATION, &kControl, a), ERROR_SUCCESS);
  std::vector<Request> r = recorder.wait_for(1);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].code, WMI_ENABLE_EVENTS);
  EXPECT_EQ(r[0].level, TRACE_LEVEL_INFORMATION);
  EXPECT_EQ(r[0].flags, 0x5u);
  EXPECT_EQ(r[0].last_error, DWORD{ERROR_SUCCESS}) << "a success that set the last error";
  const TRACEHANDLE logger_a = r[0].logger;
  EXPECT_EQ(trace(logger_a, 10, 4, 1), ERROR_SUCCESS);

  // Session B takes the provider over: the callback names B's logger; A's is refused.
  ASSERT_EQ(EnableTrace(TRUE, 0x2, TRACE_LEVEL_ERROR, &kControl, b), ERROR_SUCCESS);
  r = recorder.wait_for(2);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[1].code, WMI_ENABLE_EVENTS);
  EXPECT_NE(r[1].logger, logger_a);
  EXPECT_EQ(r[1].level, TRACE_LEVEL_ERROR);
  EXPECT_EQ(r[1].flags, 0x2u);
  const TRACEHANDLE logger_b = r[1].logger;
  EXPECT_EQ(trace(logger_a, 11, 2, 2), ERROR_INVALID_HANDLE);
  EXPECT_EQ(trace(logger_b, 12, 2, 3), ERROR_SUCCESS);
  const char text[] = "wpp";
  EXPECT_EQ(
      TraceMessage(logger_b, TRACE_MESSAGE_SEQUENCE, &kMessage, 42, text, sizeof text, nullptr),
      ERROR_SUCCESS);

  ASSERT_EQ(EnableTrace(FALSE, 0, 0, &kControl, b), ERROR_SUCCESS);
  r = recorder.wait_for(3);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[2].code, WMI_DISABLE_EVENTS);
  EXPECT_EQ(r[2].logger, logger_b);
  EXPECT_EQ(trace(logger_b, 13, 2, 4), ERROR_INVALID_HANDLE);

  stop(a);
  stop(b);
  consumer_a.join();
  consumer_b.join();
  const std::vector<Seen> seen_a = consumer_a.events();
  const std::vector<Seen> seen_b = consumer_b.events();
  ASSERT_EQ(seen_a.size(), 1u);
  EXPECT_TRUE(seen_a[0].provider == kClass);
  EXPECT_NE(seen_a[0].flags & EVENT_HEADER_FLAG_CLASSIC_HEADER, 0);
  EXPECT_EQ(seen_a[0].descriptor.Id, 0);
  EXPECT_EQ(seen_a[0].descriptor.Opcode, 10);
  EXPECT_EQ(seen_a[0].descriptor.Level, 4);
  EXPECT_EQ(seen_a[0].descriptor.Version, 2);
  ASSERT_EQ(seen_a[0].data.size(), sizeof(ULONG));
  EXPECT_EQ(seen_a[0].data[0], 1);
  ASSERT_EQ(seen_b.size(), 2u);
  EXPECT_EQ(seen_b[0].descriptor.Opcode, 12);
  EXPECT_EQ(seen_b[0].data[0], 3);
  EXPECT_TRUE(seen_b[1].provider == kMessage);
  EXPECT_NE(seen_b[1].flags & EVENT_HEADER_FLAG_TRACE_MESSAGE, 0);
  EXPECT_EQ(seen_b[1].flags & EVENT_HEADER_FLAG_CLASSIC_HEADER, 0);
  EXPECT_EQ(seen_b[1].descriptor.Id, 42);
  EXPECT_EQ(std::string(seen_b[1].data.begin(), seen_b[1].data.end()),
            std::string(text, sizeof text));
  EXPECT_EQ(UnregisterTraceGuids(reg), ERROR_SUCCESS);
}

TEST_F(ClassicProvider, PreEnabledProviderIsCalledInsideRegistration) {
  const std::string name = "classic-pre-" + std::to_string(::getpid());
  const TRACEHANDLE s = start(name);
  ASSERT_EQ(EnableTrace(TRUE, 0x10, TRACE_LEVEL_VERBOSE, &kControl, s), ERROR_SUCCESS);
  ControlRecorder recorder;
  TRACEHANDLE reg = 0;
  ASSERT_EQ(RegisterTraceGuidsA(&ControlRecorder::callback, &recorder, &kControl, 0, nullptr,
                                nullptr, nullptr, &reg),
            ERROR_SUCCESS);
  const std::vector<Request> r = recorder.wait_for(1);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].code, WMI_ENABLE_EVENTS);
  EXPECT_EQ(r[0].level, TRACE_LEVEL_VERBOSE);
  EXPECT_EQ(r[0].flags, 0x10u);
  EXPECT_EQ(UnregisterTraceGuids(reg), ERROR_SUCCESS);
  stop(s);
}

}  // namespace
