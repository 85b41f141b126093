#include "harness/observe/sessions.h"

#include "decode.h"
#include "harness/observe/judge.h"
#include "win32_text.h"

#include <cstring>
#include <vector>

namespace etwh::observe {
namespace {

// EVENT_TRACE_PROPERTIES with room for the session name after it.
struct Properties {
  Properties() {
    bytes.resize(sizeof(EVENT_TRACE_PROPERTIES) + 1024);
    get()->Wnode.BufferSize = static_cast<ULONG>(bytes.size());
    get()->LoggerNameOffset = sizeof(EVENT_TRACE_PROPERTIES);
  }
  EVENT_TRACE_PROPERTIES* get() { return reinterpret_cast<EVENT_TRACE_PROPERTIES*>(bytes.data()); }
  std::vector<std::uint8_t> bytes;
};

bool is_header(const EVENT_RECORD& r) {
  return std::memcmp(&r.EventHeader.ProviderId, &EventTraceGuid, sizeof(GUID)) == 0;
}

}  // namespace

Sessions::~Sessions() { (void)stop_all(); }

void WINAPI Sessions::on_record(PEVENT_RECORD record) {
  auto* session = static_cast<Session*>(record->UserContext);
  if (is_header(*record)) return;
  session->delivered.fetch_add(1, std::memory_order_relaxed);
  ++session->ids[record->EventHeader.EventDescriptor.Id];
  // Decoded once per kind: TDH on every event would slow the consumer down for nothing.
  const EVENT_DESCRIPTOR& d = record->EventHeader.EventDescriptor;
  std::string guid = format_guid(record->EventHeader.ProviderId);
  guid = guid.substr(1, guid.size() - 2);
  std::string key =
      event_kind_key(guid, d.Id, d.Version, d.Channel, d.Level, d.Opcode, d.Task, d.Keyword);
  if (!session->decoded.contains(key)) {
    session->decoded.emplace(std::move(key), agent::decode_event(*record, 0));
  }
}

ULONG Sessions::start(std::size_t index) {
  auto session = std::make_unique<Session>();
  session->name = prefix_ + "-" + std::to_string(index);
  Properties p;
  p.get()->LogFileMode = EVENT_TRACE_REAL_TIME_MODE;
  p.get()->Wnode.Flags = WNODE_FLAG_TRACED_GUID;
  p.get()->Wnode.ClientContext = 1;  // QPC
  if (ULONG st = StartTraceA(&session->handle, session->name.c_str(), p.get());
      st != ERROR_SUCCESS) {
    return st;
  }
  session->logfile.LoggerName = session->name.data();
  session->logfile.ProcessTraceMode =
      PROCESS_TRACE_MODE_REAL_TIME | PROCESS_TRACE_MODE_EVENT_RECORD;
  session->logfile.EventRecordCallback = &Sessions::on_record;
  session->logfile.Context = session.get();
  session->trace = OpenTraceA(&session->logfile);
  if (session->trace == INVALID_PROCESSTRACE_HANDLE) {
    Properties stop;
    ControlTraceA(session->handle, nullptr, stop.get(), EVENT_TRACE_CONTROL_STOP);
    return ERROR_INVALID_HANDLE;
  }
  session->consumer = std::thread([s = session.get()] {
    TRACEHANDLE t = s->trace;
    (void)ProcessTrace(&t, 1, nullptr, nullptr);
  });
  sessions_[index] = std::move(session);
  return ERROR_SUCCESS;
}

ULONG Sessions::apply(const Action& action, const GUID& provider) {
  if (!sessions_[action.session]) {
    if (action.op != ActionOp::kEnable) return ERROR_SUCCESS;  // nothing enabled there yet
    if (ULONG st = start(action.session); st != ERROR_SUCCESS) return st;
  }
  const ULONG code = action.op == ActionOp::kEnable    ? EVENT_CONTROL_CODE_ENABLE_PROVIDER
                     : action.op == ActionOp::kDisable ? EVENT_CONTROL_CODE_DISABLE_PROVIDER
                                                       : EVENT_CONTROL_CODE_CAPTURE_STATE;
  if (!action.event_ids) {
    return EnableTraceEx2(sessions_[action.session]->handle, &provider, code, action.level,
                          action.match_any, action.match_all, 0, nullptr);
  }
  // EVENT_FILTER_EVENT_ID: FilterIn, Reserved, Count, then the IDs.
  const EventIdFilter& ids = *action.event_ids;
  std::vector<std::uint8_t> blob(4 + 2 * ids.ids.size());
  blob[0] = ids.filter_in ? 1 : 0;
  const auto count = static_cast<USHORT>(ids.ids.size());
  std::memcpy(blob.data() + 2, &count, 2);
  std::memcpy(blob.data() + 4, ids.ids.data(), 2 * ids.ids.size());
  EVENT_FILTER_DESCRIPTOR filter{};
  filter.Ptr = reinterpret_cast<ULONGLONG>(blob.data());
  filter.Size = static_cast<ULONG>(blob.size());
  filter.Type = EVENT_FILTER_TYPE_EVENT_ID;
  ENABLE_TRACE_PARAMETERS parameters{};
  parameters.Version = ENABLE_TRACE_PARAMETERS_VERSION_2;
  parameters.EnableFilterDesc = &filter;
  parameters.FilterDescCount = 1;
  return EnableTraceEx2(sessions_[action.session]->handle, &provider, code, action.level,
                        action.match_any, action.match_all, 0, &parameters);
}

std::vector<SessionAccount> Sessions::stop_all() {
  std::vector<SessionAccount> accounts;
  for (auto& session : sessions_) {
    if (!session) continue;
    Properties p;
    SessionAccount account;
    account.name = session->name;
    account.stop_status =
        ControlTraceA(session->handle, nullptr, p.get(), EVENT_TRACE_CONTROL_STOP);
    account.index = static_cast<std::size_t>(&session - sessions_.data());
    account.handle = session->handle;
    account.lost = p.get()->EventsLost;
    account.buffers_lost = p.get()->RealTimeBuffersLost;
    if (session->consumer.joinable()) session->consumer.join();
    CloseTrace(session->trace);
    account.delivered = session->delivered.load();
    account.delivered_ids = std::move(session->ids);
    account.decoded = std::move(session->decoded);
    accounts.push_back(account);
    session.reset();
  }
  return accounts;
}

}  // namespace etwh::observe
