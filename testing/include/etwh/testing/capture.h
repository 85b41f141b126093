// etwh::testing: capture, decode and judge a provider's events inside a unit test.
//
// This header is the capture: start realtime sessions on your provider, run the code under test,
// stop, and read what a real consumer received, decoded by TDH (TraceLogging fields through the
// events' own metadata, manifest fields through a manifest you name), with each session's loss
// counts. On Windows the sessions run on real ETW (the process must be allowed to control
// sessions). On Linux they run on etwrt, each capture in a private home (ETWRT_HOME) and broker
// of its own (HomeScope), in a folder of the test process made before main and gone with the
// process: nothing needs root, tests run in parallel under `ctest -j`, a test killed by ctest's
// timeout leaves no broker and no session (ETWRT_BROKER_OWNER_PID), and its folder goes when the
// next test process starts. With ETWH_TESTING_HOME=inherit in the environment, the process keeps
// the ETWRT_HOME it was given (or etwrt's default) instead: the caller manages that broker.
//
//   TEST(MyProvider, WritesStarted) {
//     etwh::testing::CaptureOptions options;
//     options.provider = etwh::testing::provider_id_from_name("MyCompany.MyComponent");
//     etwh::testing::CaptureResult result =
//         etwh::testing::capture(options, [] { my_component_start(); });
//     ASSERT_TRUE(result.ok()) << result.problems();
//     EXPECT_THAT(result.events, Contains(etwh::testing::EventNamed("Started")));
//   }
#pragma once

#include <windows.h>
#include <evntcons.h>
#include <evntprov.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace etwh::testing {

// The provider ID a TraceLogging provider named `name` gets from the ETW name hash
// (TRACELOGGING_DEFINE_PROVIDER's reference page recommends it; EventSource uses it): SHA-1 over
// the namespace 482C2DB2-C390-47C8-87F8-1A15BFC130FB and the upper-cased name in UTF-16BE, the
// first 16 bytes, version nibble 5.
//
//   GUID id = etwh::testing::provider_id_from_name("MyProvider");
//   // {b3864c38-4273-58c5-545b-8b3608343471}
GUID provider_id_from_name(std::string_view name);

// "{8-4-4-4-12}" in lower case, as etwh prints GUIDs.
//
//   std::string text = etwh::testing::guid_text(id);
std::string guid_text(const GUID& guid);

// One session of a capture: what EnableTraceEx2 is given.
//
//   etwh::testing::SessionOptions warnings;
//   warnings.level = TRACE_LEVEL_WARNING;
//   warnings.match_any = 0x2;
//   warnings.event_ids = {1, 3};  // EVENT_FILTER_TYPE_EVENT_ID, filter in
struct SessionOptions {
  UCHAR level = 5;  // TRACE_LEVEL_VERBOSE
  ULONGLONG match_any = 0;
  ULONGLONG match_all = 0;
  // EVENT_FILTER_TYPE_EVENT_ID: the IDs kept (event_ids_in) or dropped; empty: no filter.
  std::vector<USHORT> event_ids;
  bool event_ids_in = true;
  // EVENT_FILTER_TYPE_PID: only these processes' events; empty: no filter.
  std::vector<ULONG> process_ids;
};

// Which etwrt home (and so which broker) a capture's sessions run in (Linux; Windows has one
// ETW per machine). A provider meets the sessions of the home it registered in.
//   capture: a home no capture used before; when the capture stops, ETWRT_HOME moves to a fresh
//     home for what registers next. Register the provider after the previous capture stopped
//     (in the test, before or inside the capture). A provider registered once for the whole
//     process is not in the new home when the capture starts (etwrt registers it there again
//     only after a moment, so what it writes first may be missed): give it `process`.
//   process: the home the process is in (the first capture's, or the one the last capture left),
//     shared with the captures before and after: for a provider registered once, before main
//     or in a test environment's SetUp, captured by several tests of one process (give every
//     capture of that process `process`: one `capture` capture moves the process on).
//
//   options.home = etwh::testing::HomeScope::process;
enum class HomeScope { capture, process };

// What to capture.
//
//   etwh::testing::CaptureOptions options;
//   options.provider = kMyProviderId;
//   options.sessions = {{.level = 4}, {.level = 2, .match_any = 0x1}};  // two sessions
//   options.manifest = "my_provider.man";  // decode manifest events by name
struct CaptureOptions {
  GUID provider{};
  std::vector<SessionOptions> sessions = {SessionOptions{}};
  // A manifest (XML, the instrumentation manifest mc.exe reads) TDH loads to decode the
  // provider's manifest events; empty: TraceLogging events only decode.
  std::string manifest;
  // A capture that lost events (EventsLost or RealTimeBuffersLost) is not ok() unless this is
  // set: a test that must see every event should not pass on a partial view.
  bool allow_loss = false;
  // Each session's buffers (EVENT_TRACE_PROPERTIES' BufferSize, MaximumBuffers): 16 MiB by
  // default, room for a burst of some 100,000 small events while the consumer catches up.
  ULONG buffer_size_kb = 64;
  ULONG maximum_buffers = 256;
  // Decode each event at stop() (name and fields), as TDH does: TDH's schema once per kind of
  // event, the payload read in place where its fields allow. Off: the events carry their
  // header, descriptor and payload bytes only.
  bool decode = true;
  // How long each enable waits for the provider's callbacks (EnableTraceEx2's Timeout).
  std::chrono::milliseconds enable_timeout{5000};
  // Whose broker the sessions run on (Linux): see HomeScope.
  HomeScope home = HomeScope::capture;
};

// One decoded field: its name and its value as text (integers in decimal, hex types as 0x...,
// strings as UTF-8, GUIDs as {8-4-4-4-12}, booleans true/false, arrays as [a, b]).
struct Field {
  std::string name;
  std::string value;
  bool operator==(const Field&) const = default;
};

// One event a session's consumer received.
//
//   const etwh::testing::Event& e = result.events.front();
//   if (e.name == "Started" && e.field("Port") == "8080") ...
struct Event {
  std::size_t session = 0;  // index in CaptureOptions::sessions
  GUID provider{};
  std::string name;  // TraceLogging or manifest event name; empty when TDH gave none
  USHORT id = 0;
  UCHAR version = 0, channel = 0, level = 0, opcode = 0;
  USHORT task = 0;
  ULONGLONG keyword = 0;
  std::int64_t timestamp = 0;  // EVENT_HEADER.TimeStamp (QPC ticks)
  ULONG process_id = 0, thread_id = 0;
  GUID activity_id{};
  std::optional<GUID> related_activity_id;  // the EVENT_HEADER_EXT_TYPE_RELATEDACTIVITYID item
  std::vector<Field> fields;
  // TdhGetEventInformation's status when the event could not be decoded (then name and fields
  // are empty); ERROR_SUCCESS otherwise.
  ULONG decode_status = 0;
  // The payload's bytes, where the capture's consumer copied them: valid while this event (or
  // a copy of it) lives, since it shares `storage`.
  std::span<const std::uint8_t> user_data;
  std::shared_ptr<const void> storage;

  // The value of field `name`, or nullopt when the event has no such field.
  std::optional<std::string> field(std::string_view name) const;
};

// One record decoded as the capture decodes what its consumers receive (TDH: TraceLogging
// metadata, or a manifest loaded with TdhLoadManifest); `session` is left 0. For consumer code
// under test, with records of record_builder.h.
//
//   etwh::testing::Event e = etwh::testing::decode_record(*record);
Event decode_record(const EVENT_RECORD& record);

// One session's account once it stopped: delivered + lost is what the provider wrote to it.
struct SessionAccount {
  std::string name;
  std::uint64_t delivered = 0;     // events its consumer received
  std::uint64_t lost = 0;          // EventsLost, as ControlTrace(STOP) said
  std::uint64_t buffers_lost = 0;  // RealTimeBuffersLost (their events are not counted)
  ULONG stop_status = 0;
};

// What a capture got.
//
//   etwh::testing::CaptureResult result = capture.stop();
//   ASSERT_TRUE(result.ok()) << result.problems();
//   for (const etwh::testing::Event& e : result.events_of(0)) ...
struct CaptureResult {
  std::vector<Event> events;  // every session's, in the order each consumer received them
  std::vector<SessionAccount> sessions;
  std::vector<std::string> errors;  // a platform call that failed, the manifest TDH refused...
  bool allow_loss = false;

  // No error, and no loss unless the options allowed it.
  bool ok() const;
  // Why not ok(), one sentence a line; empty when ok().
  std::string problems() const;
  // The events of session `index`, in order.
  std::vector<Event> events_of(std::size_t index) const;
};

// A capture in progress: the constructor starts the sessions and enables the provider on each
// (starting their consumers first, so nothing written after it returns is missed); stop() (or
// the destructor) stops them, drains the consumers and decodes. Errors are data: a session that
// could not start is in the result's errors, never an exception or an abort.
//
//   etwh::testing::Capture capture(options);
//   my_component_start();
//   etwh::testing::CaptureResult result = capture.stop();
class Capture {
 public:
  explicit Capture(CaptureOptions options);
  ~Capture();
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;

  // Stops every session, waits for its consumer to drain and returns what it received.
  // Once only; later calls return an empty result with an error.
  CaptureResult stop();

 private:
  struct State;
  State* state_;
};

// Capture around `code_under_test`: start, run it, stop.
//
//   auto result = etwh::testing::capture(options, [] { my_component_start(); });
CaptureResult capture(const CaptureOptions& options, const std::function<void()>& code_under_test);

// The private etwrt home the process is in now (Linux; see HomeScope), empty on Windows, with
// ETWH_TESTING_HOME=inherit, or when it could not be made (cannot_capture() says why).
//
//   std::string home = etwh::testing::private_home();  // "/tmp/etwh-testing-4242-Ab12Cd/home-0"
std::string private_home();

// Why this process cannot capture (on Windows: neither elevated nor in Performance Log Users,
// or an ETW that opens no realtime consumer, as Wine's), or nullopt when it can. For a test to
// skip with the reason rather than fail.
//
//   if (auto why = etwh::testing::cannot_capture()) GTEST_SKIP() << *why;
std::optional<std::string> cannot_capture();

}  // namespace etwh::testing
