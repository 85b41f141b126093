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
#include <optional>
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

// Reads `paths` in one ProcessTrace (several files: merged by time), with
// PROCESS_TRACE_MODE_RAW_TIMESTAMP when `raw`. The header is the last file's (a NEWFILE
// session's last file has the stop's counts).
FileRead read_log_files(const std::vector<std::string>& paths, bool raw) {
  FileRead out;
  std::vector<std::string> names = paths;
  std::vector<TRACEHANDLE> handles;
  for (std::string& name : names) {
    std::error_code ec;
    out.file_bytes += std::filesystem::file_size(name, ec);
    EVENT_TRACE_LOGFILEA logfile{};
    logfile.LogFileName = name.data();
    logfile.ProcessTraceMode =
        PROCESS_TRACE_MODE_EVENT_RECORD | (raw ? PROCESS_TRACE_MODE_RAW_TIMESTAMP : 0);
    logfile.EventRecordCallback = on_file_record;
    logfile.Context = &out;
    const TRACEHANDLE handle = OpenTraceA(&logfile);
    if (handle == INVALID_PROCESSTRACE_HANDLE) {
      out.open_status = GetLastError();
      if (out.open_status == ERROR_SUCCESS) out.open_status = ERROR_INVALID_HANDLE;
      break;
    }
    out.header = logfile.LogfileHeader;
    handles.push_back(handle);
  }
  if (out.open_status == ERROR_SUCCESS) {
    out.process_status =
        ProcessTrace(handles.data(), static_cast<ULONG>(handles.size()), nullptr, nullptr);
  }
  for (TRACEHANDLE h : handles) CloseTrace(h);
  return out;
}

// The files a session wrote: its log file, or a NEWFILE session's numbered files (the pattern's
// %d replaced by 1, 2, ...), every number found in the folder, in ascending order.
std::vector<std::pair<std::uint64_t, std::string>> files_written(const std::string& pattern,
                                                                 bool newfile) {
  if (!newfile) return {{1, pattern}};
  std::vector<std::pair<std::uint64_t, std::string>> out;
  const std::filesystem::path p(pattern);
  const std::string name = p.filename().string();
  const auto at = name.find("%d");
  if (at == std::string::npos) return {{1, pattern}};
  const std::string head = name.substr(0, at), tail = name.substr(at + 2);
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(p.parent_path(), ec)) {
    const std::string n = entry.path().filename().string();
    if (n.size() <= head.size() + tail.size() || n.compare(0, head.size(), head) != 0 ||
        n.compare(n.size() - tail.size(), tail.size(), tail) != 0) {
      continue;
    }
    const std::string digits = n.substr(head.size(), n.size() - head.size() - tail.size());
    if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    out.emplace_back(std::stoull(digits), entry.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool judges(const oracle::FileExpectation& x, const char* rule) {
  return std::find(x.rules.begin(), x.rules.end(), rule) != x.rules.end();
}

// ETL-HEADER-FIELDS: BuffersWritten and EventsLost against what ControlTrace(STOP) reported
// (the header is written at the stop). `buffers_in_files`: the BuffersWritten of every file's
// header added up (a NEWFILE session's files; else the one header's). A circular file's header
// counts the buffers in the file and STOP every buffer written, the overwritten ones too, which
// STOP's LogBuffersLost counts (docs/etwrt/conformance.md, "Choices where the documents are
// silent"). An appended file's header counts both sessions, STOP only its own: not compared.
template <typename Field>
void judge_buffers_written(const oracle::FileExpectation& x, std::uint64_t buffers_in_files,
                           const TRACE_LOGFILE_HEADER& h, const json& properties,
                           const Field& field) {
  if ((x.log_file_mode & EVENT_TRACE_FILE_MODE_APPEND) != 0) return;
  const auto stop_count = [&](const char* key) -> std::optional<std::uint64_t> {
    if (!properties.contains(key) || !properties[key].is_number_unsigned()) return std::nullopt;
    return properties[key].get<std::uint64_t>();
  };
  const auto written = stop_count("buffers_written");
  const auto lost = stop_count("events_lost");
  if (lost) field("EventsLost", *lost, h.EventsLost);
  if (!written) return;
  if ((x.log_file_mode & EVENT_TRACE_FILE_MODE_CIRCULAR) == 0) {
    field("BuffersWritten", *written, buffers_in_files);
    return;
  }
  const auto overwritten = stop_count("log_buffers_lost");
  if (!overwritten) return;
  field("BuffersWritten + STOP's LogBuffersLost (buffers in the file + overwritten)", *written,
        std::uint64_t{h.BuffersWritten} + *overwritten);
}

// ETL-HEADER-FIRST and ETL-HEADER-FIELDS.
void judge_header(const oracle::FileExpectation& x, const FileRead& r,
                  std::uint64_t buffers_in_files, const json& properties,
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
  // CON-CLOCK: the header names the clock the session chose (ReservedFlags; 0 and 1: QPC).
  const ULONG named = h.ReservedFlags == 0 ? 1 : h.ReservedFlags;
  if (judges(x, rules::kConClock) && named != x.clock) {
    out.push_back(failed_check(rules::kConClock, "ReservedFlags",
                               fmt::format("LogfileHeader.ReservedFlags is {}, the session's "
                                           "ClientContext {}",
                                           h.ReservedFlags, x.clock),
                               std::to_string(x.clock), std::to_string(h.ReservedFlags)));
  }
  judge_buffers_written(x, buffers_in_files, h, properties, field);
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

// ETL-ACCOUNTING (ETL-CIRCULAR-LOST for a circular file, ETL-APPEND for an appended one),
// ETL-CIRCULAR-NEWEST and ETL-MAX-FILE-SIZE.
void judge_contents(const oracle::FileExpectation& x, const FileRead& r,
                    const std::vector<const FileRecord*>& events, std::vector<Finding>& out) {
  const bool circular = judges(x, rules::kEtlCircularLost);
  const char* accounting = circular                       ? rules::kEtlCircularLost
                           : judges(x, rules::kEtlAppend) ? rules::kEtlAppend
                                                          : rules::kEtlAccounting;
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
  // A NEWFILE session's files are judged one by one (judge_newfile).
  if (x.maximum_file_size != 0 && (x.log_file_mode & EVENT_TRACE_FILE_MODE_NEWFILE) == 0) {
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

// ETL-NEWFILE: the numbers 1, 2, ... none skipped; each file but the last switched from only when
// full (the next buffer would not have fit within MaximumFileSize); each file is a log file of
// its own: its first event the header event (ETL-HEADER-FIRST), within MaximumFileSize.
void judge_newfile(const oracle::FileExpectation& x,
                   const std::vector<std::pair<std::uint64_t, std::string>>& files,
                   const std::vector<FileRead>& reads, std::vector<Finding>& out) {
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (files[i].first == i + 1) continue;
    out.push_back(failed_check(
        rules::kEtlNewfile, "file numbers",
        fmt::format("the session's file number {} is {}, not {} (numbers skipped or not from 1)",
                    i + 1, files[i].first, i + 1),
        std::to_string(i + 1), std::to_string(files[i].first)));
    break;
  }
  const std::uintmax_t unit =
      (x.log_file_mode & EVENT_TRACE_USE_KBYTES_FOR_SIZE) != 0 ? 1024 : 1024 * 1024;
  const std::uintmax_t limit = std::uintmax_t{x.maximum_file_size} * unit;
  for (std::size_t i = 0; i < reads.size(); ++i) {
    const FileRead& r = reads[i];
    const FileRecord* first = r.records.empty() ? nullptr : &r.records.front();
    if (first == nullptr || !first->event_trace || first->opcode != 0) {
      out.push_back(
          failed_check(rules::kEtlHeaderFirst, "first event of each file",
                       fmt::format("file {} does not begin with the header event", files[i].first),
                       "EventTraceGuid opcode 0", "another event"));
    }
    if (r.file_bytes > limit) {
      out.push_back(failed_check(rules::kEtlMaxFileSize, "file size",
                                 fmt::format("file {} has {} bytes, MaximumFileSize is {}",
                                             files[i].first, r.file_bytes, limit),
                                 std::to_string(limit), std::to_string(r.file_bytes)));
    }
    if (i + 1 < reads.size() && r.file_bytes + r.header.BufferSize <= limit) {
      out.push_back(failed_check(
          rules::kEtlNewfile, "switch when full",
          fmt::format("file {} has {} bytes and another buffer of {} would have fit within {}, "
                      "yet the session switched to file {}",
                      files[i].first, r.file_bytes, r.header.BufferSize, limit, files[i + 1].first),
          fmt::format("more than {}", limit - r.header.BufferSize), std::to_string(r.file_bytes)));
    }
  }
}

// CON-CLOCK: the raw read's stamps are in the clock the session chose (`clock`, which the
// header must name: QPC at PerfFreq, 2: system time, already a FILETIME, 3: cycles at
// CpuSpeedInMHz), not converted; the FILETIME read's stamps are theirs converted: every event's
// distance from the first, in 100 ns, is the raw distance x 10^7 / frequency, within a rounding
// tick.
void judge_raw(const std::vector<const FileRecord*>& filetime,
               const std::vector<const FileRecord*>& raw, const TRACE_LOGFILE_HEADER& h,
               ULONG clock, std::vector<Finding>& out) {
  const auto fail = [&](const char* check, std::string text, std::string expected,
                        std::string observed) {
    out.push_back(failed_check(rules::kConClock, check, std::move(text), std::move(expected),
                               std::move(observed)));
  };
  if (raw.size() != filetime.size()) {
    fail("raw read",
         fmt::format("the raw read delivered {} events, the FILETIME read {}", raw.size(),
                     filetime.size()),
         std::to_string(filetime.size()), std::to_string(raw.size()));
    return;
  }
  if (raw.empty()) return;
  const long double frequency = clock == 2   ? 1e7L
                                : clock == 3 ? static_cast<long double>(h.CpuSpeedInMHz) * 1e6L
                                             : static_cast<long double>(h.PerfFreq.QuadPart);
  if (frequency <= 0) {
    fail("frequency", fmt::format("clock {} with no frequency in the header", clock), "> 0", "0");
    return;
  }
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const FileRecord& a = *raw[i];
    const FileRecord& b = *filetime[i];
    if (a.seq != b.seq) {
      fail("raw read",
           fmt::format("event {} of the raw read is event {}, of the FILETIME read "
                       "event {}",
                       i, a.seq, b.seq),
           std::to_string(b.seq), std::to_string(a.seq));
      return;
    }
    if ((clock == 2) != (a.stamp == b.stamp)) {
      fail("raw TimeStamp",
           fmt::format("event {}: raw stamp {}, FILETIME {}: with clock {} (ClientContext) they "
                       "must {}",
                       a.seq, a.stamp, b.stamp, clock, clock == 2 ? "be equal" : "differ"),
           clock == 2 ? "equal" : "differ", clock == 2 ? "differ" : "equal");
      return;
    }
    const long double converted =
        static_cast<long double>(a.stamp - raw[0]->stamp) * 1e7L / frequency;
    const long double observed = static_cast<long double>(b.stamp - filetime[0]->stamp);
    if (converted - observed > 1.5L || observed - converted > 1.5L) {
      fail("conversion",
           fmt::format("event {}: raw distance {} at {} Hz is {:.0f} x 100 ns; the FILETIME read "
                       "says {:.0f}",
                       a.seq, a.stamp - raw[0]->stamp, static_cast<double>(frequency),
                       static_cast<double>(converted), static_cast<double>(observed)),
           fmt::format("{:.0f}", static_cast<double>(converted)),
           fmt::format("{:.0f}", static_cast<double>(observed)));
      return;
    }
  }
}

std::vector<const FileRecord*> events_of(const FileRead& r) {
  std::vector<const FileRecord*> out;
  for (const FileRecord& rec : r.records) {
    if (!rec.event_trace) out.push_back(&rec);
  }
  return out;
}

}  // namespace

std::optional<StepReply> CaseRun::read_file(const Step& step, const oracle::StepExpectation& e) {
  const FileStep& fs = step_body<FileStep>(step);
  require_session(fs.session);
  SessionState& s = sessions_[fs.session];
  json req = session_request("control", fs.session, step.via);
  req.erase("handle");
  req["code"] = EVENT_TRACE_CONTROL_STOP;
  json reply = controller_call(step.via, req, kReplySlack);
  if (reply.value("status", 1) != 0 || !e.file) return StepReply{std::move(reply)};
  s.running = false;
  const oracle::FileExpectation& x = *e.file;
  const bool newfile = (x.log_file_mode & EVENT_TRACE_FILE_MODE_NEWFILE) != 0;
  const auto files = files_written(s.log_file, newfile);
  std::vector<std::string> paths;
  std::vector<FileRead> each;  // NEWFILE: each file read alone
  std::uint64_t buffers_in_files = 0;
  for (const auto& [number, path] : files) {
    paths.push_back(path);
    if (newfile) each.push_back(read_log_files({path}, false));
    if (newfile) buffers_in_files += each.back().header.BuffersWritten;
  }
  const FileRead r = read_log_files(paths, false);
  const FileRead raw = x.raw_timestamp ? read_log_files(paths, true) : FileRead{};
  std::error_code ec;
  for (const std::string& path : paths) std::filesystem::remove(path, ec);
  if (r.open_status != ERROR_SUCCESS || paths.empty()) {
    fail(failed_check(
        rules::kEtlHeaderFields, "OpenTraceA",
        paths.empty()
            ? std::string("the session wrote no log file")
            : fmt::format("OpenTraceA of the session's log file failed with {}", r.open_status),
        "a handle", std::to_string(r.open_status)));
    return StepReply{std::move(reply)};
  }
  if (r.process_status != ERROR_SUCCESS) {
    note(fmt::format("ProcessTrace of the log file returned {}", r.process_status));
  }
  note(fmt::format("log file{}: {} bytes, {} records, BuffersWritten {}, EventsLost {}",
                   paths.size() > 1 ? fmt::format("s ({})", paths.size()) : "", r.file_bytes,
                   r.records.size(), r.header.BuffersWritten, r.header.EventsLost));
  if (!newfile) buffers_in_files = r.header.BuffersWritten;
  const std::vector<const FileRecord*> events = events_of(r);
  std::vector<Finding> findings;
  judge_header(x, r, buffers_in_files, reply.value("properties", json::object()), findings);
  judge_stamps(events, r.header, findings);
  judge_contents(x, r, events, findings);
  if (newfile) judge_newfile(x, files, each, findings);
  if (x.raw_timestamp) judge_raw(events, events_of(raw), raw.header, x.clock, findings);
  for (Finding& f : findings) fail(std::move(f));
  return StepReply{std::move(reply)};
}

void CaseRun::remove_log_files() noexcept {
  for (const auto& [label, s] : sessions_) {
    if (s.log_file.empty()) continue;
    try {
      std::error_code ec;
      // The name as given (a session that was not NEWFILE keeps a "%d" as it is), and the
      // numbered files a NEWFILE session made of it.
      std::filesystem::remove(s.log_file, ec);
      for (const auto& [number, path] : files_written(s.log_file, true)) {
        std::filesystem::remove(path, ec);
      }
    } catch (...) {
      // Best effort, as the sessions' stop: a file left behind is not the case's verdict.
    }
  }
}

// The family's driver registration: each op's runner (families/driver_families.h).
std::vector<DriverOp> trace_files_driver_ops() {
  return {
      {ops::kReadFile, run_part<&CaseRun::read_file>},
  };
}

}  // namespace etwh
