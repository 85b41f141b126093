// The capture (capture.h): realtime sessions with a consumer thread each. The consumer copies
// every record it receives (header, extended items, payload) and decoding waits for stop(), so
// that TDH never slows the consumer down while the code under test writes; then one
// EventDecoder (event_decoder.h) decodes them all, asking TDH once per kind of event.
#include "etwh/testing/capture.h"

#include "decode.h"
#include "event_decoder.h"
#include "harness/environment/session_properties.h"
#include "platform_home.h"
#include "win32_text.h"

#include <evntrace.h>
#include <tdh.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <utility>

namespace etwh::testing {
namespace {

// Where a session's consumer copies what it receives (EVENT_RECORD's pointers are valid only
// inside the callback): blocks of 1 MiB, never moved once written, so that the consumer keeps
// up with a provider writing as fast as it can (no reallocation copying what came before).
class Arena {
 public:
  Arena() = default;
  Arena(Arena&& other) noexcept
      : blocks_(std::move(other.blocks_)),
        used_(std::exchange(other.used_, 0)),
        capacity_(std::exchange(other.capacity_, 0)) {}
  // `n` bytes aligned to 8, valid until the arena is destroyed.
  std::uint8_t* take(std::size_t n) {
    n = (n + 7) & ~std::size_t{7};
    if (capacity_ - used_ < n) {
      capacity_ = std::max(kBlock, n);
      blocks_.emplace_back(new std::uint8_t[capacity_]);
      used_ = 0;
    }
    std::uint8_t* p = blocks_.back().get() + used_;
    used_ += n;
    return p;
  }

 private:
  static constexpr std::size_t kBlock = std::size_t{1} << 20;
  std::vector<std::unique_ptr<std::uint8_t[]>> blocks_;
  std::size_t used_ = 0, capacity_ = 0;
};

// A record as the consumer received it, in the arena: this header, then per extended item
// UINT16 type, UINT16 size and its bytes, then the payload.
struct RawRecord {
  EVENT_HEADER header;
  ETW_BUFFER_CONTEXT buffer_context;
  USHORT item_count;
  USHORT user_data_length;
  const std::uint8_t* items() const { return reinterpret_cast<const std::uint8_t*>(this + 1); }
};

struct Session {
  std::size_t index = 0;
  std::string name;
  TRACEHANDLE handle = 0;
  TRACEHANDLE trace = INVALID_PROCESSTRACE_HANDLE;
  EVENT_TRACE_LOGFILEA logfile{};
  std::vector<const RawRecord*> records;  // the consumer thread's alone until it is joined
  Arena arena;                            // likewise
  std::thread consumer;
};

// EventTraceGuid {68fdd900-4a3e-11d1-84f4-0000f80464e3}, the session's header event: written
// out, since not every toolchain's import libraries define the symbol.
constexpr GUID kEventTraceGuid = {
    0x68fdd900, 0x4a3e, 0x11d1, {0x84, 0xf4, 0x00, 0x00, 0xf8, 0x04, 0x64, 0xe3}};

bool is_header(const EVENT_RECORD& r) {
  return std::memcmp(&r.EventHeader.ProviderId, &kEventTraceGuid, sizeof(GUID)) == 0;
}

void WINAPI on_record(PEVENT_RECORD record) {
  auto* session = static_cast<Session*>(record->UserContext);
  if (is_header(*record)) return;
  const USHORT payload = record->UserData != nullptr ? record->UserDataLength : 0;
  std::size_t size = sizeof(RawRecord) + payload;
  for (USHORT i = 0; i < record->ExtendedDataCount; ++i) {
    size += 4 + record->ExtendedData[i].DataSize;
  }
  std::uint8_t* at = session->arena.take(size);
  auto* raw = new (at)
      RawRecord{record->EventHeader, record->BufferContext, record->ExtendedDataCount, payload};
  at += sizeof(RawRecord);
  for (USHORT i = 0; i < record->ExtendedDataCount; ++i) {
    const EVENT_HEADER_EXTENDED_DATA_ITEM& item = record->ExtendedData[i];
    std::memcpy(at, &item.ExtType, 2);
    std::memcpy(at + 2, &item.DataSize, 2);
    std::memcpy(at + 4, reinterpret_cast<const void*>(item.DataPtr), item.DataSize);
    at += 4 + item.DataSize;
  }
  if (payload != 0) std::memcpy(at, record->UserData, payload);
  session->records.push_back(raw);
}

std::string win32_error(const std::string& call, ULONG status) {
  return call + " failed with " + std::to_string(status);
}

// EnableTraceEx2's filters for `o`; `storage` keeps the blobs the descriptors point at.
std::vector<EVENT_FILTER_DESCRIPTOR> filters_of(const SessionOptions& o,
                                                std::vector<std::vector<std::uint8_t>>& storage) {
  std::vector<EVENT_FILTER_DESCRIPTOR> out;
  if (!o.event_ids.empty()) {
    // EVENT_FILTER_EVENT_ID: FilterIn, Reserved, Count, then the IDs.
    std::vector<std::uint8_t>& blob = storage.emplace_back(4 + 2 * o.event_ids.size());
    blob[0] = o.event_ids_in ? 1 : 0;
    const auto count = static_cast<USHORT>(o.event_ids.size());
    std::memcpy(blob.data() + 2, &count, 2);
    std::memcpy(blob.data() + 4, o.event_ids.data(), 2 * o.event_ids.size());
    EVENT_FILTER_DESCRIPTOR& f = out.emplace_back();
    f.Ptr = reinterpret_cast<ULONGLONG>(blob.data());
    f.Size = static_cast<ULONG>(blob.size());
    f.Type = EVENT_FILTER_TYPE_EVENT_ID;
  }
  if (!o.process_ids.empty()) {
    std::vector<std::uint8_t>& blob = storage.emplace_back(4 * o.process_ids.size());
    std::memcpy(blob.data(), o.process_ids.data(), blob.size());
    EVENT_FILTER_DESCRIPTOR& f = out.emplace_back();
    f.Ptr = reinterpret_cast<ULONGLONG>(blob.data());
    f.Size = static_cast<ULONG>(blob.size());
    f.Type = EVENT_FILTER_TYPE_PID;
  }
  return out;
}

std::atomic<unsigned> g_captures{0};

Event undecoded_record(const EVENT_RECORD& record);

}  // namespace

struct Capture::State {
  CaptureOptions options;
  std::vector<std::unique_ptr<Session>> sessions;
  std::vector<std::string> errors;
  std::vector<WCHAR> manifest;  // as TDH was given it, to unload
  bool stopped = false;

  void start(std::size_t index, const std::string& prefix);
};

void Capture::State::start(std::size_t index, const std::string& prefix) {
  auto session = std::make_unique<Session>();
  session->index = index;
  session->name = prefix + "-s" + std::to_string(index);
  Properties p;
  p.get()->LogFileMode = EVENT_TRACE_REAL_TIME_MODE;
  p.get()->Wnode.Flags = WNODE_FLAG_TRACED_GUID;
  p.get()->Wnode.ClientContext = 1;  // QPC
  p.get()->BufferSize = options.buffer_size_kb;
  p.get()->MinimumBuffers = std::min<ULONG>(16, options.maximum_buffers);
  p.get()->MaximumBuffers = options.maximum_buffers;
  if (ULONG st = StartTraceA(&session->handle, session->name.c_str(), p.get());
      st != ERROR_SUCCESS) {
    errors.push_back(win32_error("StartTrace(" + session->name + ")", st));
    return;
  }
  session->logfile.LoggerName = session->name.data();
  session->logfile.ProcessTraceMode =
      PROCESS_TRACE_MODE_REAL_TIME | PROCESS_TRACE_MODE_EVENT_RECORD;
  session->logfile.EventRecordCallback = &on_record;
  session->logfile.Context = session.get();
  session->trace = OpenTraceA(&session->logfile);
  if (session->trace == INVALID_PROCESSTRACE_HANDLE) {
    errors.push_back("OpenTrace(" + session->name + ") failed");
    Properties stop;
    ControlTraceA(session->handle, nullptr, stop.get(), EVENT_TRACE_CONTROL_STOP);
    return;
  }
  session->consumer = std::thread([s = session.get()] {
    TRACEHANDLE t = s->trace;
    (void)ProcessTrace(&t, 1, nullptr, nullptr);
  });
  const SessionOptions& o = options.sessions[index];
  std::vector<std::vector<std::uint8_t>> storage;
  std::vector<EVENT_FILTER_DESCRIPTOR> filters = filters_of(o, storage);
  ENABLE_TRACE_PARAMETERS parameters{};
  parameters.Version = ENABLE_TRACE_PARAMETERS_VERSION_2;
  parameters.EnableFilterDesc = filters.empty() ? nullptr : filters.data();
  parameters.FilterDescCount = static_cast<ULONG>(filters.size());
  const ULONG st = EnableTraceEx2(
      session->handle, &options.provider, EVENT_CONTROL_CODE_ENABLE_PROVIDER, o.level, o.match_any,
      o.match_all, static_cast<ULONG>(options.enable_timeout.count()), &parameters);
  // ERROR_TIMEOUT: a callback overran; the session is enabled all the same.
  if (st != ERROR_SUCCESS && st != ERROR_TIMEOUT) {
    errors.push_back(win32_error("EnableTraceEx2(" + session->name + ")", st));
  }
  sessions.push_back(std::move(session));
}

namespace {

// The record as its consumer received it, its items in `items`.
EVENT_RECORD record_of(const RawRecord& raw, std::vector<EVENT_HEADER_EXTENDED_DATA_ITEM>& items) {
  items.resize(raw.item_count);
  const std::uint8_t* at = raw.items();
  for (EVENT_HEADER_EXTENDED_DATA_ITEM& item : items) {
    item = {};
    std::memcpy(&item.ExtType, at, sizeof item.ExtType);
    std::memcpy(&item.DataSize, at + 2, sizeof item.DataSize);
    item.DataPtr = reinterpret_cast<ULONGLONG>(at + 4);
    at += 4 + item.DataSize;
  }
  EVENT_RECORD record{};
  record.EventHeader = raw.header;
  record.BufferContext = raw.buffer_context;
  record.ExtendedDataCount = raw.item_count;
  record.ExtendedData = items.empty() ? nullptr : items.data();
  record.UserDataLength = raw.user_data_length;
  record.UserData = raw.user_data_length == 0 ? nullptr : const_cast<std::uint8_t*>(at);
  return record;
}

}  // namespace

Capture::Capture(CaptureOptions options) : state_(new State) {
  state_->options = std::move(options);
  State& s = *state_;
  if (std::optional<std::string> problem = prepare_platform()) {
    s.errors.push_back(*problem);
    return;
  }
  if (!s.options.manifest.empty()) {
    for (char c : s.options.manifest) s.manifest.push_back(static_cast<WCHAR>(c));
    s.manifest.push_back(0);
    if (ULONG st = TdhLoadManifest(s.manifest.data()); st != ERROR_SUCCESS) {
      s.errors.push_back(win32_error("TdhLoadManifest(" + s.options.manifest + ")", st));
      s.manifest.clear();
    }
  }
  enter_home(s.options.home);
  const std::string prefix = session_prefix() + "t" + std::to_string(g_captures.fetch_add(1) + 1);
  for (std::size_t i = 0; i < s.options.sessions.size(); ++i) s.start(i, prefix);
}

Capture::~Capture() {
  if (!state_->stopped) (void)stop();
  delete state_;
}

CaptureResult Capture::stop() {
  State& s = *state_;
  CaptureResult result;
  result.allow_loss = s.options.allow_loss;
  if (s.stopped) {
    result.errors.push_back("Capture::stop called twice");
    return result;
  }
  s.stopped = true;
  result.errors = s.errors;
  for (auto& session : s.sessions) {
    Properties p;
    SessionAccount account;
    account.name = session->name;
    account.stop_status =
        ControlTraceA(session->handle, nullptr, p.get(), EVENT_TRACE_CONTROL_STOP);
    if (account.stop_status != ERROR_SUCCESS) {
      result.errors.push_back(
          win32_error("ControlTrace(STOP, " + session->name + ")", account.stop_status));
    }
    account.lost = p.get()->EventsLost;
    account.buffers_lost = p.get()->RealTimeBuffersLost;
    if (session->consumer.joinable()) session->consumer.join();
    CloseTrace(session->trace);
    account.delivered = session->records.size();
    result.sessions.push_back(account);
  }
  EventDecoder decoder;
  std::vector<EVENT_HEADER_EXTENDED_DATA_ITEM> items;
  for (auto& session : s.sessions) {
    result.events.reserve(result.events.size() + session->records.size());
    // The events' payloads stay where the consumer copied them, kept by the events.
    const auto arena = std::make_shared<const Arena>(std::move(session->arena));
    for (const RawRecord* raw : session->records) {
      const EVENT_RECORD record = record_of(*raw, items);
      Event& e = result.events.emplace_back(undecoded_record(record));
      e.session = session->index;
      e.user_data = {static_cast<const std::uint8_t*>(record.UserData), record.UserDataLength};
      e.storage = arena;
      if (s.options.decode) decoder.decode(record, e);
    }
    session->records = {};
  }
  if (!s.manifest.empty()) TdhUnloadManifest(s.manifest.data());
  leave_home(s.options.home);
  return result;
}

namespace {

// The record's header, items and payload, without TDH.
Event undecoded_record(const EVENT_RECORD& record) {
  Event e;
  const EVENT_HEADER& h = record.EventHeader;
  e.provider = h.ProviderId;
  agent::copy_descriptor(h.EventDescriptor, e);
  e.timestamp = h.TimeStamp.QuadPart;
  e.process_id = h.ProcessId;
  e.thread_id = h.ThreadId;
  e.activity_id = h.ActivityId;
  for (USHORT i = 0; i < record.ExtendedDataCount; ++i) {
    const EVENT_HEADER_EXTENDED_DATA_ITEM& item = record.ExtendedData[i];
    if (item.ExtType == EVENT_HEADER_EXT_TYPE_RELATED_ACTIVITYID && item.DataSize >= sizeof(GUID)) {
      GUID related;
      std::memcpy(&related, reinterpret_cast<const void*>(item.DataPtr), sizeof related);
      e.related_activity_id = related;
    }
  }
  return e;
}

}  // namespace

Event decode_record(const EVENT_RECORD& record) {
  Event e = undecoded_record(record);
  const auto* data = static_cast<const std::uint8_t*>(record.UserData);
  if (data != nullptr) {
    auto bytes = std::make_shared<std::vector<std::uint8_t>>(data, data + record.UserDataLength);
    e.user_data = *bytes;
    e.storage = std::move(bytes);
  }
  decode_through_tdh(record, e);
  return e;
}

CaptureResult capture(const CaptureOptions& options, const std::function<void()>& code_under_test) {
  Capture c(options);
  code_under_test();
  return c.stop();
}

bool CaptureResult::ok() const { return problems().empty(); }

std::string CaptureResult::problems() const {
  std::string out;
  for (const std::string& e : errors) out += e + "\n";
  for (const SessionAccount& a : sessions) {
    if (!allow_loss && (a.lost > 0 || a.buffers_lost > 0)) {
      out += "session " + a.name + " lost " + std::to_string(a.lost) + " events and " +
             std::to_string(a.buffers_lost) + " realtime buffers (" + std::to_string(a.delivered) +
             " delivered); set CaptureOptions::allow_loss if the test tolerates loss\n";
    }
  }
  return out;
}

std::vector<Event> CaptureResult::events_of(std::size_t index) const {
  std::vector<Event> out;
  for (const Event& e : events) {
    if (e.session == index) out.push_back(e);
  }
  return out;
}

std::optional<std::string> Event::field(std::string_view name) const {
  for (const Field& f : fields) {
    if (f.name == name) return f.value;
  }
  return std::nullopt;
}

std::optional<std::string> cannot_capture() {
  if (std::optional<std::string> problem = prepare_platform()) return problem;
  return capture_refusal();
}

std::string guid_text(const GUID& guid) { return format_guid(guid); }

}  // namespace etwh::testing
