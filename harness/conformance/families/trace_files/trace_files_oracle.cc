// The oracle's trace files: what a file session's log file must hold once read_file stopped
// the session, and which rules its checks judge (the mode decides).
#include "harness/conformance/families/trace_files/trace_files_ops.h"
#include "harness/conformance/oracle_model.h"
#include "harness/model/rules.h"

#include <evntrace.h>

namespace etwh::oracle::detail {

void Model::read_file(const Step& step, StepExpectation& e) {
  const SessionStep& ss = step_body<SessionStep>(step);
  if (!started_.count(ss.session)) return;
  const SessionDef& def = case_.sessions.at(ss.session);
  FileExpectation f;
  f.session = ss.session;
  // A file session without a consumer keeps, for the file, what the first consumer would get.
  for (const ExpectedEvent& ev : data_[ss.session].buffered) f.written.push_back(ev.seq);
  f.log_file_mode = def.settings.value("log_file_mode", 0u);
  f.maximum_file_size = def.settings.value("maximum_file_size", 0u);
  f.buffer_size_kb = def.settings.value("buffer_size_kb", 0u);
  f.rules = {rules::kEtlHeaderFirst, rules::kEtlHeaderFields, rules::kEtlClock, rules::kEtlOrder};
  if ((f.log_file_mode & EVENT_TRACE_FILE_MODE_CIRCULAR) != 0) {
    f.rules.push_back(rules::kEtlCircularNewest);
    f.rules.push_back(rules::kEtlCircularLost);
  } else {
    f.rules.push_back(rules::kEtlAccounting);
  }
  if (f.maximum_file_size != 0) f.rules.push_back(rules::kEtlMaxFileSize);
  e.file = std::move(f);
  stop(step, e);
}

}  // namespace etwh::oracle::detail
