#include "consumer.h"

#include "decode.h"
#include "event_json.h"
#include "win32_text.h"

#include <evntcons.h>
#include <tdh.h>

#include <cstring>

namespace etwh::agent {
namespace {

using nlohmann::json;

// The platform calls back on the ProcessTrace thread, and the record's UserContext belongs to
// the driver (CON-USER-CONTEXT checks it), so the consumer is found through the thread.
thread_local Consumer* t_consumer = nullptr;

VOID WINAPI record_callback(PEVENT_RECORD record) {
  if (t_consumer != nullptr && record != nullptr) t_consumer->on_record(*record);
}

VOID WINAPI trace_callback(PEVENT_TRACE trace) {
  if (t_consumer != nullptr && trace != nullptr) t_consumer->on_trace(*trace);
}

// What an overwritten EVENT_TRACE_LOGFILEA holds: none may ever be called.
VOID WINAPI decoy_record_callback(PEVENT_RECORD) {
  if (t_consumer != nullptr) t_consumer->on_decoy();
}

VOID WINAPI decoy_trace_callback(PEVENT_TRACE) {
  if (t_consumer != nullptr) t_consumer->on_decoy();
}

ULONG WINAPI decoy_buffer_callback(PEVENT_TRACE_LOGFILEA) {
  if (t_consumer != nullptr) t_consumer->on_decoy();
  return TRUE;
}

constexpr std::uintptr_t kDecoyContext = 0x00DEC0DE;

// The first 8 payload bytes as a little-endian number: the sequence number `write` puts there.
json sequence_of(const void* data, std::size_t size) {
  if (data == nullptr || size < 8) return nullptr;
  const auto* b = static_cast<const std::uint8_t*>(data);
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | b[i];
  return v;
}

// EVENT_HEADER_EXT_TYPE_PROV_TRAITS (evntcons.h); older mingw-w64 headers lack the name.
constexpr USHORT kExtTypeProvTraits = 0x000C;
constexpr USHORT kExtTypeEventSchemaTl = 0x000B;  // EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL

// Spelled out here: not every SDK's evntrace.h defines both names.
constexpr GUID kEventTraceGuid = {
    0x68fdd900, 0x4a3e, 0x11d1, {0x84, 0xf4, 0x00, 0x00, 0xf8, 0x04, 0x64, 0xe3}};
constexpr GUID kRtLostEventGuid = {
    0x6a399ae0, 0x4bc6, 0x4de9, {0x87, 0x0b, 0x36, 0x57, 0xf8, 0x94, 0x7e, 0x7e}};

const char* kind_of(const GUID& provider) {
  if (IsEqualGUID(provider, kEventTraceGuid)) return "header";
  if (IsEqualGUID(provider, kRtLostEventGuid)) return "lost";
  return "event";
}

}  // namespace

Consumer::Consumer(std::string session_name, Mode mode, std::uint64_t context,
                   std::uint32_t delay_us)
    : name_(std::move(session_name)), mode_(mode), context_(context), delay_us_(delay_us) {}

Consumer::~Consumer() {
  if (thread_.joinable()) {
    CloseTrace(handle_);
    thread_.join();
  } else if (handle_ != INVALID_PROCESSTRACE_HANDLE) {
    CloseTrace(handle_);  // opened, never processed (its session never started)
  }
  if (!manifest_.empty()) TdhUnloadManifest(manifest_.data());
}

ULONG Consumer::decode(std::size_t skip, const std::string& manifest) {
  decode_skip_ = skip;
  if (manifest.empty()) return ERROR_SUCCESS;
  std::vector<WCHAR> path;
  for (char c : manifest) path.push_back(static_cast<WCHAR>(static_cast<unsigned char>(c)));
  path.push_back(0);
  const ULONG status = TdhLoadManifest(path.data());
  if (status == ERROR_SUCCESS) manifest_ = std::move(path);
  return status;
}

json Consumer::open(bool overwrite) {
  EVENT_TRACE_LOGFILEA& logfile = logfile_;
  logfile.LoggerName = name_.data();
  logfile.ProcessTraceMode = PROCESS_TRACE_MODE_REAL_TIME;
  if (mode_ == Mode::kEventRecord) {
    logfile.ProcessTraceMode |= PROCESS_TRACE_MODE_EVENT_RECORD;
    logfile.EventRecordCallback = &record_callback;
  } else {
    logfile.EventCallback = &trace_callback;
  }
  logfile.Context = reinterpret_cast<PVOID>(static_cast<std::uintptr_t>(context_));
  handle_ = OpenTraceA(&logfile);
  if (handle_ == INVALID_PROCESSTRACE_HANDLE) {
    const DWORD error = GetLastError();
    return {{"status", ERROR_INVALID_HANDLE}, {"attached", false}, {"last_error", error}};
  }
  if (overwrite) {
    logfile = EVENT_TRACE_LOGFILEA{};
    logfile.LoggerName = decoy_name_.data();
    logfile.ProcessTraceMode = PROCESS_TRACE_MODE_REAL_TIME | PROCESS_TRACE_MODE_EVENT_RECORD;
    logfile.EventRecordCallback = &decoy_record_callback;
    logfile.EventCallback = &decoy_trace_callback;
    logfile.BufferCallback = &decoy_buffer_callback;
    logfile.Context = reinterpret_cast<PVOID>(kDecoyContext);
  }
  return {{"status", 0}};
}

json Consumer::process(std::chrono::milliseconds wait) {
  if (thread_.joinable()) return {{"status", ERROR_BUSY}, {"attached", header_seen_}};
  thread_ = std::thread([this] { run(); });
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait_for(lock, wait, [this] { return header_seen_ || returned_; });
  json reply = {{"status", 0}, {"attached", header_seen_}};
  if (returned_) reply["process_status"] = process_status_;
  return reply;
}

void Consumer::run() {
  t_consumer = this;
  TRACEHANDLE handles[1] = {handle_};
  ULONG status = ProcessTrace(handles, 1, nullptr, nullptr);
  t_consumer = nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  returned_ = true;
  process_status_ = status;
  changed_.notify_all();
}

json Consumer::stop(std::chrono::milliseconds wait) {
  bool closed_early = false;
  if (thread_.joinable()) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      closed_early = !changed_.wait_for(lock, wait, [this] { return returned_; });
    }
    ULONG close_status = CloseTrace(handle_);
    (void)close_status;  // after ProcessTrace returned, only releases the handle
    thread_.join();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  json records = json::array();
  for (json& r : records_) records.push_back(std::move(r));
  records_.clear();
  return {{"process_status", process_status_},
          {"returned_by_itself", !closed_early},
          {"decoy_calls", decoy_calls_},
          {"records", std::move(records)}};
}

void Consumer::slow_down() const {
  if (delay_us_ == 0) return;
  // A busy wait: sleeping would round a few microseconds up to the scheduler's tick.
  auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(delay_us_);
  while (std::chrono::steady_clock::now() < until) {
  }
}

void Consumer::on_record(const EVENT_RECORD& r) {
  const EVENT_HEADER& h = r.EventHeader;
  json rec = {{"kind", kind_of(h.ProviderId)},
              {"provider", format_guid(h.ProviderId)},
              {"ts", h.TimeStamp.QuadPart},
              {"pid", h.ProcessId},
              {"tid", h.ThreadId},
              {"flags", h.Flags},
              {"activity", format_guid(h.ActivityId)},
              {"payload", bytes_to_hex(r.UserData, r.UserData ? r.UserDataLength : 0)},
              {"seq", sequence_of(r.UserData, r.UserDataLength)},
              {"context", format_hex(reinterpret_cast<std::uintptr_t>(r.UserContext))}};
  rec.update(descriptor_json(h.EventDescriptor));
  for (USHORT i = 0; r.ExtendedData != nullptr && i < r.ExtendedDataCount; ++i) {
    const EVENT_HEADER_EXTENDED_DATA_ITEM& x = r.ExtendedData[i];
    const void* data = reinterpret_cast<const void*>(static_cast<std::uintptr_t>(x.DataPtr));
    if (x.ExtType == EVENT_HEADER_EXT_TYPE_RELATED_ACTIVITYID && x.DataSize >= sizeof(GUID)) {
      GUID related;
      std::memcpy(&related, data, sizeof related);
      rec["related"] = format_guid(related);
    } else if (x.ExtType == kExtTypeProvTraits) {
      rec["traits"] = bytes_to_hex(data, x.DataSize);
    } else if (x.ExtType == kExtTypeEventSchemaTl) {
      rec["schema"] = bytes_to_hex(data, x.DataSize);
    }
  }
  if (rec.contains("schema") || !manifest_.empty()) rec["decoded"] = decode_event(r, decode_skip_);
  if (reinterpret_cast<std::uintptr_t>(r.UserContext) == kDecoyContext) on_decoy();
  keep(std::move(rec));
}

void Consumer::on_trace(const EVENT_TRACE& t) {
  const EVENT_TRACE_HEADER& h = t.Header;
  json rec = {{"kind", kind_of(h.Guid)},
              {"provider", format_guid(h.Guid)},
              {"opcode", h.Class.Type},
              {"level", h.Class.Level},
              {"version", h.Class.Version},
              {"ts", h.TimeStamp.QuadPart},
              {"pid", h.ProcessId},
              {"tid", h.ThreadId},
              {"payload", bytes_to_hex(t.MofData, t.MofData ? t.MofLength : 0)},
              {"seq", sequence_of(t.MofData, t.MofLength)}};
  keep(std::move(rec));
}

void Consumer::on_decoy() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++decoy_calls_;
}

void Consumer::keep(json rec) {
  slow_down();
  std::lock_guard<std::mutex> lock(mutex_);
  if (rec["kind"] == "header") {
    header_seen_ = true;
    changed_.notify_all();
  }
  records_.push_back(std::move(rec));
}

}  // namespace etwh::agent
