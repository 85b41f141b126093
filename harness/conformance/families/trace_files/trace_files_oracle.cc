// The oracle's trace files: what a file session's log file must hold once read_file stopped
// the session, and which rules its checks judge (the mode decides).
#include "harness/conformance/families/sessions/sessions_ops.h"
#include "harness/conformance/families/trace_files/trace_files_ops.h"
#include "harness/conformance/oracle_model.h"
#include "harness/model/rules.h"

#include <evntrace.h>

namespace etwh::oracle::detail {

namespace {

// EVENT_TRACE_PRIVATE_LOGGER_MODE, spelled here for SDKs whose evntrace.h lacks it.
constexpr std::uint32_t kPrivateLoggerMode = 0x800;

// A session given no settings has none (null, not an empty object).
std::uint32_t mode_of(const SessionDef& def) {
  return def.settings.is_object() ? def.settings.value("log_file_mode", 0u) : 0u;
}

bool appends(const SessionDef& def) {
  return !def.log_file.empty() && (mode_of(def) & EVENT_TRACE_FILE_MODE_APPEND) != 0;
}

}  // namespace

bool Model::refused_append(const std::string& session, StepExpectation& e) const {
  const SessionDef& def = case_.sessions.at(session);
  // Logging Mode Constants (EVENT_TRACE_FILE_MODE_APPEND: "Do not use with" real-time,
  // circular, new file, private); StartTrace: a LogFileMode combination that is not valid is
  // ERROR_INVALID_PARAMETER.
  constexpr std::uint32_t kNotWithAppend = EVENT_TRACE_FILE_MODE_CIRCULAR |
                                           EVENT_TRACE_FILE_MODE_NEWFILE |
                                           EVENT_TRACE_REAL_TIME_MODE | kPrivateLoggerMode;
  if ((mode_of(def) & EVENT_TRACE_FILE_MODE_APPEND) == 0 || (mode_of(def) & kNotWithAppend) == 0) {
    return false;
  }
  e.status = ERROR_INVALID_PARAMETER;
  e.status_rule = rules::kEtlAppend;
  return true;
}

void Model::keep_appended(const std::string& session) {
  const SessionDef& def = case_.sessions.at(session);
  if (!appends(def)) return;
  std::vector<std::uint64_t>& kept = appended_[def.log_file];
  for (const ExpectedEvent& ev : data_[session].buffered) kept.push_back(ev.seq);
}

void Model::read_file(const Step& step, StepExpectation& e) {
  const FileStep& fs = step_body<FileStep>(step);
  if (!started_.count(fs.session)) return;
  const SessionDef& def = case_.sessions.at(fs.session);
  FileExpectation f;
  f.session = fs.session;
  f.raw_timestamp = fs.raw_timestamp;
  f.clock = def.clock();
  // An appended file holds what the earlier sessions left in it, then this session's events.
  if (appends(def)) f.written = appended_[def.log_file];
  // A file session without a consumer keeps, for the file, what the first consumer would get.
  for (const ExpectedEvent& ev : data_[fs.session].buffered) f.written.push_back(ev.seq);
  f.log_file_mode = mode_of(def);
  if (def.settings.is_object()) {
    f.maximum_file_size = def.settings.value("maximum_file_size", 0u);
    f.buffer_size_kb = def.settings.value("buffer_size_kb", 0u);
  }
  f.rules = {rules::kEtlHeaderFirst, rules::kEtlHeaderFields, rules::kEtlClock, rules::kEtlOrder};
  if ((f.log_file_mode & EVENT_TRACE_FILE_MODE_CIRCULAR) != 0) {
    f.rules.push_back(rules::kEtlCircularNewest);
    f.rules.push_back(rules::kEtlCircularLost);
  } else {
    // An appended file's accounting spans both sessions: ETL-APPEND's.
    f.rules.push_back(appends(def) ? rules::kEtlAppend : rules::kEtlAccounting);
  }
  if (f.maximum_file_size != 0) f.rules.push_back(rules::kEtlMaxFileSize);
  if ((f.log_file_mode & EVENT_TRACE_FILE_MODE_NEWFILE) != 0) f.rules.push_back(rules::kEtlNewfile);
  // The clock the header names is judged when the case chose one or reads raw stamps.
  const bool chose_clock = def.settings.is_object() && def.settings.contains("client_context");
  if (f.raw_timestamp || chose_clock) f.rules.push_back(rules::kConClock);
  e.file = std::move(f);
  Step as_stop = step;
  as_stop.body = SessionStep{fs.session};
  stop(as_stop, e);
}

}  // namespace etwh::oracle::detail
