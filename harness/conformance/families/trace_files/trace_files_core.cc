// The trace files family's core registration: read_file's name, parser, oracle part and body
// (families/core_families.h).
#include "harness/conformance/families/family_core.h"
#include "harness/conformance/families/trace_files/trace_files_ops.h"

namespace etwh::family_core {

namespace {

// read_file: a session that writes a log file; raw_timestamp: a second read with raw stamps.
void parse_read_file(CaseParser& cp, const json& v, const std::string& p, Step& s, const Case& c) {
  cp.reader().object(v, p, {"op", "session", "raw_timestamp", "expect"});
  FileStep f;
  f.session = cp.ref(v, p, "session", c);
  if (c.sessions.at(f.session).log_file.empty()) {
    cp.reader().fail(p + "/session", "read_file needs a session with a log_file");
  }
  if (v.contains("raw_timestamp")) {
    f.raw_timestamp = cp.reader().boolean(v["raw_timestamp"], p + "/raw_timestamp");
  }
  s.body = std::move(f);
}

}  // namespace

std::vector<CoreOp> trace_files_core_ops() {
  return {
      core_op<FileStep>(ops::kReadFile, parse_read_file, model_part<&Model::read_file>),
  };
}

}  // namespace etwh::family_core
