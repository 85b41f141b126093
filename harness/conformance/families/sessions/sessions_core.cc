// The sessions, enables and callbacks family's core registration: each op's name, parser, oracle
// part and body (families/core_families.h), and its parsers.
#include "harness/conformance/families/family_core.h"
#include "harness/conformance/families/sessions/sessions_ops.h"

namespace etwh::family_core {

namespace {

void parse_filters(CaseParser& cp, const json& v, const std::string& p,
                   std::vector<FilterDef>& filters) {
  const Reader& r = cp.reader();
  if (!v.is_array()) r.fail(p, "expected an array, got " + json_type_name(v));
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string pi = p + "/" + std::to_string(i);
    r.object(v[i], pi, {"type", "data"});
    FilterDef f;
    f.type = static_cast<std::uint32_t>(
        r.integer(r.field(v[i], pi, "type"), pi + "/type", 0xFFFFFFFFu, "filter type"));
    f.data = r.bytes(r.field(v[i], pi, "data"), pi + "/data");
    filters.push_back(f);
  }
}

// Level, keywords, SourceId, api, timeout: the controller call's arguments.
void parse_call(CaseParser& cp, const json& v, const std::string& p, std::string_view op,
                ControlStep& s, bool needs_level) {
  const Reader& r = cp.reader();
  if (needs_level || v.contains("level")) {
    s.level =
        static_cast<std::uint8_t>(r.integer(r.field(v, p, "level"), p + "/level", 255, "level"));
  }
  if (v.contains("match_any")) s.match_any = r.hex64(v["match_any"], p + "/match_any", "keyword");
  if (v.contains("match_all")) s.match_all = r.hex64(v["match_all"], p + "/match_all", "keyword");
  if (v.contains("source_id")) {
    s.source_id = r.guid(v["source_id"], p + "/source_id");
    s.has_parameters = true;
  }
  if (v.contains("enable_property")) {
    s.enable_property = static_cast<std::uint32_t>(
        r.integer(v["enable_property"], p + "/enable_property", 0xFFFFFFFFu, "enable_property"));
    s.has_parameters = true;
  }
  if (v.contains("filters")) {
    parse_filters(cp, v["filters"], p + "/filters", s.filters);
    s.has_parameters = true;
  }
  if (v.contains("api")) {
    s.api = r.string(v["api"], p + "/api");
    if (s.api != "EnableTraceEx2" && s.api != "EnableTraceEx" && s.api != "EnableTrace") {
      r.fail(p + "/api",
             "api \"" + s.api + "\" is not EnableTraceEx2, EnableTraceEx or EnableTrace");
    }
  }
  if (s.api == "EnableTrace") {
    if (s.source_id || s.enable_property || !s.filters.empty()) {
      r.fail(p, "EnableTrace takes no source_id, enable_property or filters");
    }
    if (s.match_all != 0 || s.match_any > 0xFFFFFFFFu) {
      r.fail(p, "EnableTrace takes 32-bit flags in match_any and no match_all");
    }
  }
  if (s.api != "EnableTraceEx2" && op == ops::kCaptureState) {
    r.fail(p + "/api", "capture_state exists only with EnableTraceEx2");
  }
  if (v.contains("timeout_ms")) {
    s.timeout_ms = static_cast<std::uint32_t>(
        r.integer(v["timeout_ms"], p + "/timeout_ms", 600000, "timeout_ms"));
  }
}

// enable / disable: a provider label, or a provider group's GUID (groups).
void parse_target(CaseParser& cp, const json& v, const std::string& p, ControlStep& s,
                  const Case& c) {
  const Reader& r = cp.reader();
  if (v.contains("provider") == v.contains("group")) {
    r.fail(p, "needs exactly one of \"provider\" and \"group\"");
  }
  if (v.contains("provider")) {
    s.provider = cp.ref(v, p, "provider", c);
    return;
  }
  s.group = r.guid(v["group"], p + "/group");
  s.has_parameters = true;
  if (s.api != "EnableTraceEx2" || (v.contains("api") && v["api"] != "EnableTraceEx2")) {
    r.fail(p + "/group", "a provider group is enabled with EnableTraceEx2 only");
  }
}

// start, stop, flush
void parse_session(CaseParser& cp, const json& v, const std::string& p, Step& s, const Case& c) {
  if (s.op == ops::kFlush) {
    cp.reader().object(v, p, {"op", "session", "expect"});
  } else {
    cp.reader().object(v, p, {"op", "session", "via", "expect"});
  }
  s.body = SessionStep{cp.ref(v, p, "session", c)};
}

void parse_enable(CaseParser& cp, const json& v, const std::string& p, Step& s, const Case& c) {
  cp.reader().object(
      v, p,
      {"op", "session", "provider", "group", "via", "level", "match_any", "match_all", "source_id",
       "enable_property", "filters", "api", "timeout_ms", "expect"});
  ControlStep& call = s.body.emplace<ControlStep>();
  call.session = cp.ref(v, p, "session", c);
  parse_target(cp, v, p, call, c);
  parse_call(cp, v, p, s.op, call, true);
}

void parse_disable(CaseParser& cp, const json& v, const std::string& p, Step& s, const Case& c) {
  cp.reader().object(
      v, p,
      {"op", "session", "provider", "group", "via", "source_id", "api", "timeout_ms", "expect"});
  ControlStep& call = s.body.emplace<ControlStep>();
  call.session = cp.ref(v, p, "session", c);
  parse_target(cp, v, p, call, c);
  parse_call(cp, v, p, s.op, call, false);
}

void parse_capture_state(CaseParser& cp, const json& v, const std::string& p, Step& s,
                         const Case& c) {
  cp.reader().object(v, p,
                     {"op", "session", "provider", "via", "level", "match_any", "match_all",
                      "source_id", "timeout_ms", "expect"});
  ControlStep& call = s.body.emplace<ControlStep>();
  call.session = cp.ref(v, p, "session", c);
  call.provider = cp.ref(v, p, "provider", c);
  parse_call(cp, v, p, s.op, call, true);
}

}  // namespace

std::vector<CoreOp> sessions_core_ops() {
  return {
      core_op<SessionStep>(ops::kStart, parse_session, model_part<&Model::start>),
      core_op<SessionStep>(ops::kStop, parse_session, model_part<&Model::stop>),
      core_op<ControlStep>(ops::kEnable, parse_enable, model_part<&Model::enable>),
      core_op<ControlStep>(ops::kDisable, parse_disable, model_part<&Model::disable>),
      core_op<ControlStep>(ops::kCaptureState, parse_capture_state,
                           model_part<&Model::capture_state>),
      core_op<SessionStep>(ops::kFlush, parse_session, model_part<&Model::flush>),
  };
}

}  // namespace etwh::family_core
