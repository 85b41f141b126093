// Trace files: read_file stops a file session, reads its log file back through OpenTraceA and
// ProcessTrace (the Win32 API, so that the same code judges Windows, Wine and etwrt) and judges
// each rule of the oracle's FileExpectation by checks of its own.
#include "harness/conformance/families/driver_families.h"
#include "harness/conformance/families/trace_files/trace_files_ops.h"
#include "harness/model/rules.h"

#include <evntcons.h>
#include <evntrace.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <set>
#include <string_view>
#include <tuple>

namespace etwh {

using nlohmann::json;

namespace {

// EventTraceGuid, the provider of the log-file header event (evntrace.h); spelled here so that
// no build needs the SDK's definition of it.
constexpr GUID kEventTraceGuid = {
    0x68fdd900, 0x4a3e, 0x11d1, {0x84, 0xf4, 0x00, 0x00, 0xf8, 0x04, 0x64, 0xe3}};

// One record ProcessTrace delivered, as much as the checks need.
struct FileRecord {
  bool event_trace = false;  // ProviderId is EventTraceGuid
  std::uint8_t opcode = 0;
  std::int64_t stamp = 0;
  std::uint64_t seq = 0;  // the driver's sequence number: the first 8 bytes of the data
  std::uint32_t data_size = 0;
  std::uint32_t first_word = 0;  // the first 4 bytes of the data (a header's BufferSize)
};

struct FileRead {
  ULONG open_status = ERROR_SUCCESS;
  ULONG process_status = ERROR_SUCCESS;
  TRACE_LOGFILE_HEADER header{};
  std::vector<FileRecord> records;
  std::uintmax_t file_bytes = 0;
};

void WINAPI on_file_record(PEVENT_RECORD r) {
  auto* out = static_cast<FileRead*>(r->UserContext);
  FileRecord f;
  f.event_trace = std::memcmp(&r->EventHeader.ProviderId, &kEventTraceGuid, sizeof(GUID)) == 0;
  f.opcode = r->EventHeader.EventDescriptor.Opcode;
  f.stamp = r->EventHeader.TimeStamp.QuadPart;
  f.data_size = r->UserDataLength;
  if (r->UserData != nullptr && r->UserDataLength >= sizeof f.seq) {
    std::memcpy(&f.seq, r->UserData, sizeof f.seq);
  }
  if (r->UserData != nullptr && r->UserDataLength >= sizeof f.first_word) {
    std::memcpy(&f.first_word, r->UserData, sizeof f.first_word);
  }
  out->records.push_back(f);
}

FileRead read_log_file(const std::string& path) {
  FileRead out;
  std::error_code ec;
  out.file_bytes = std::filesystem::file_size(path, ec);
  std::string name = path;
  EVENT_TRACE_LOGFILEA logfile{};
  logfile.LogFileName = name.data();
  logfile.ProcessTraceMode = PROCESS_TRACE_MODE_EVENT_RECORD;
  logfile.EventRecordCallback = on_file_record;
  logfile.Context = &out;
  TRACEHANDLE handle = OpenTraceA(&logfile);
  if (handle == INVALID_PROCESSTRACE_HANDLE) {
    out.open_status = GetLastError();
    if (out.open_status == ERROR_SUCCESS) out.open_status = ERROR_INVALID_HANDLE;
    return out;
  }
  out.header = logfile.LogfileHeader;
  out.process_status = ProcessTrace(&handle, 1, nullptr, nullptr);
  CloseTrace(handle);
  return out;
}

bool judges(const oracle::FileExpectation& x, const char* rule) {
  return std::find(x.rules.begin(), x.rules.end(), rule) != x.rules.end();
}

// ETL-HEADER-FIRST and ETL-HEADER-FIELDS.
void judge_header(const oracle::FileExpectation& x, const FileRead& r, const json& properties,
                  std::vector<Finding>& out) {
  const TRACE_LOGFILE_HEADER& h = r.header;
  const FileRecord* first = r.records.empty() ? nullptr : &r.records.front();
  if (first == nullptr || !first->event_trace || first->opcode != 0 ||
      first->data_size < sizeof(TRACE_LOGFILE_HEADER) || first->first_word != h.BufferSize) {
    out.push_back(failed_check(
        rules::kEtlHeaderFirst, "first event",
        first == nullptr ? std::string("ProcessTrace delivered no event")
                         : fmt::format("the first event delivered is {} opcode {} with {} bytes "
                                       "of data, not the header event (EventTraceGuid, opcode "
                                       "0, a TRACE_LOGFILE_HEADER whose BufferSize is {})",
                                       first->event_trace ? "EventTraceGuid" : "another provider's",
                                       first->opcode, first->data_size, h.BufferSize),
        "EventTraceGuid opcode 0", first == nullptr ? "none" : "another event"));
  }
  const auto field = [&](const char* name, std::uint64_t expected, std::uint64_t observed) {
    if (expected == observed) return;
    out.push_back(failed_check(
        rules::kEtlHeaderFields, name,
        fmt::format("LogfileHeader.{} expected {}, observed {}", name, expected, observed),
        std::to_string(expected), std::to_string(observed)));
  };
  if (x.buffer_size_kb != 0) field("BufferSize", x.buffer_size_kb * 1024ull, h.BufferSize);
  const ULONG file_modes = EVENT_TRACE_FILE_MODE_SEQUENTIAL | EVENT_TRACE_FILE_MODE_CIRCULAR |
                           EVENT_TRACE_FILE_MODE_NEWFILE | EVENT_TRACE_FILE_MODE_APPEND;
  field("LogFileMode (file mode bits)", x.log_file_mode & file_modes, h.LogFileMode & file_modes);
  // What ControlTrace(STOP) reported: the header is written at the stop. A circular file's
  // BuffersWritten is not judged: the page's "total number of buffers written" may count the
  // overwritten ones (etwrt's STOP does) or only those in the file (etwrt's header does).
  const bool circular = (x.log_file_mode & EVENT_TRACE_FILE_MODE_CIRCULAR) != 0;
  for (const auto& [name, key, value] :
       {std::tuple{"BuffersWritten", "buffers_written", std::uint64_t{h.BuffersWritten}},
        std::tuple{"EventsLost", "events_lost", std::uint64_t{h.EventsLost}}}) {
    if (circular && std::string_view(key) == "buffers_written") continue;
    if (properties.contains(key) && properties[key].is_number_unsigned()) {
      field(name, properties[key].get<std::uint64_t>(), value);
    }
  }
}

// ETL-CLOCK and ETL-ORDER: over the events after the header events.
void judge_stamps(const std::vector<const FileRecord*>& events, const TRACE_LOGFILE_HEADER& h,
                  std::vector<Finding>& out) {
  const std::int64_t start = h.StartTime.QuadPart, end = h.EndTime.QuadPart;
  std::size_t outside = 0, inversions = 0;
  const FileRecord* first_outside = nullptr;
  std::size_t first_inversion = 0;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const FileRecord& ev = *events[i];
    if (ev.stamp < start || (end != 0 && ev.stamp > end)) {
      if (outside++ == 0) first_outside = &ev;
    }
    if (i > 0 && ev.stamp < events[i - 1]->stamp && inversions++ == 0) first_inversion = i;
  }
  if (first_outside != nullptr) {
    out.push_back(failed_check(
        rules::kEtlClock, "TimeStamp",
        fmt::format("{} of {} events stamped outside [StartTime {}, EndTime {}]; the first: event "
                    "{} at {}",
                    outside, events.size(), start, end, first_outside->seq, first_outside->stamp),
        fmt::format("[{}, {}]", start, end), std::to_string(first_outside->stamp)));
  }
  if (inversions != 0) {
    const FileRecord& a = *events[first_inversion - 1];
    const FileRecord& b = *events[first_inversion];
    out.push_back(failed_check(
        rules::kEtlOrder, "order",
        fmt::format("{} events delivered before an older one; the first: event {} (stamp {}) "
                    "after event {} (stamp {})",
                    inversions, b.seq, b.stamp, a.seq, a.stamp),
        "non-decreasing stamps", fmt::format("{} after {}", b.stamp, a.stamp)));
  }
}

// ETL-ACCOUNTING (or ETL-CIRCULAR-LOST for a circular file), ETL-CIRCULAR-NEWEST and
// ETL-MAX-FILE-SIZE.
void judge_contents(const oracle::FileExpectation& x, const FileRead& r,
                    const std::vector<const FileRecord*>& events, std::vector<Finding>& out) {
  const bool circular = judges(x, rules::kEtlCircularLost);
  const char* accounting = circular ? rules::kEtlCircularLost : rules::kEtlAccounting;
  const std::set<std::uint64_t> written(x.written.begin(), x.written.end());
  std::set<std::uint64_t> in_file;
  std::size_t strangers = 0, twice = 0;
  for (const FileRecord* ev : events) {
    if (!written.count(ev->seq)) ++strangers;
    if (!in_file.insert(ev->seq).second) ++twice;
  }
  if (strangers != 0 || twice != 0) {
    out.push_back(failed_check(accounting, "events in the file",
                               fmt::format("{} events in the file were never written, {} are "
                                           "there twice",
                                           strangers, twice),
                               "0 and 0", fmt::format("{} and {}", strangers, twice)));
  }
  const std::uint64_t lost = r.header.EventsLost;
  if (events.size() + lost != x.written.size()) {
    out.push_back(
        failed_check(accounting, "written = in the file + EventsLost",
                     fmt::format("{} events written, {} in the file + EventsLost {} = {}",
                                 x.written.size(), events.size(), lost, events.size() + lost),
                     std::to_string(x.written.size()), std::to_string(events.size() + lost)));
  }
  if (circular && !x.written.empty() && in_file.size() < x.written.size() &&
      (!in_file.count(x.written.back()) || in_file.count(x.written.front()))) {
    out.push_back(failed_check(
        rules::kEtlCircularNewest, "newest kept",
        fmt::format("the file holds {} of {} events: the newest (event {}) {}, the oldest "
                    "(event {}) {}",
                    in_file.size(), x.written.size(), x.written.back(),
                    in_file.count(x.written.back()) ? "is there" : "is missing", x.written.front(),
                    in_file.count(x.written.front()) ? "is still there" : "is gone"),
        "newest in, oldest out", "otherwise"));
  }
  if (x.maximum_file_size != 0) {
    const std::uintmax_t unit =
        (x.log_file_mode & EVENT_TRACE_USE_KBYTES_FOR_SIZE) != 0 ? 1024 : 1024 * 1024;
    const std::uintmax_t limit = x.maximum_file_size * unit;
    if (r.file_bytes > limit) {
      out.push_back(failed_check(
          rules::kEtlMaxFileSize, "file size",
          fmt::format("the log file has {} bytes, MaximumFileSize is {}", r.file_bytes, limit),
          std::to_string(limit), std::to_string(r.file_bytes)));
    }
  }
}

}  // namespace

std::optional<StepReply> CaseRun::read_file(const Step& step, const oracle::StepExpectation& e) {
  const SessionStep& ss = step_body<SessionStep>(step);
  require_session(ss.session);
  SessionState& s = sessions_[ss.session];
  json req = session_request("control", ss.session, step.via);
  req.erase("handle");
  req["code"] = EVENT_TRACE_CONTROL_STOP;
  json reply = controller_call(step.via, req, kReplySlack);
  if (reply.value("status", 1) != 0 || !e.file) return StepReply{std::move(reply)};
  s.running = false;
  const FileRead r = read_log_file(s.log_file);
  std::error_code ec;
  std::filesystem::remove(s.log_file, ec);
  if (r.open_status != ERROR_SUCCESS) {
    fail(failed_check(
        rules::kEtlHeaderFields, "OpenTraceA",
        fmt::format("OpenTraceA of the session's log file failed with {}", r.open_status),
        "a handle", std::to_string(r.open_status)));
    return StepReply{std::move(reply)};
  }
  if (r.process_status != ERROR_SUCCESS) {
    note(fmt::format("ProcessTrace of the log file returned {}", r.process_status));
  }
  note(fmt::format("log file: {} bytes, {} records, BuffersWritten {}, EventsLost {}", r.file_bytes,
                   r.records.size(), r.header.BuffersWritten, r.header.EventsLost));
  std::vector<const FileRecord*> events;
  for (const FileRecord& rec : r.records) {
    if (!rec.event_trace) events.push_back(&rec);
  }
  std::vector<Finding> findings;
  judge_header(*e.file, r, reply.value("properties", json::object()), findings);
  judge_stamps(events, r.header, findings);
  judge_contents(*e.file, r, events, findings);
  for (Finding& f : findings) fail(std::move(f));
  return StepReply{std::move(reply)};
}

// The family's driver registration: each op's runner (families/driver_families.h).
std::vector<DriverOp> trace_files_driver_ops() {
  return {
      {ops::kReadFile, run_part<&CaseRun::read_file>},
  };
}

}  // namespace etwh
