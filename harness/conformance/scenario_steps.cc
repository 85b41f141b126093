// The scenario loader's steps: one table of ops (CaseParser::ops), each parsed by its
// family's function, with JSON pointer errors.
#include "harness/conformance/families/classic/classic_steps.h"
#include "harness/conformance/scenario_parser.h"
#include "win32_text.h"

#include <evntrace.h>

#include <filesystem>

namespace etwh::scenario_parse {

const std::vector<CaseParser::Op>& CaseParser::ops() {
  static const std::vector<Op> table = {
      // Sessions, enables and callbacks
      {"start", StepOp::kStart, &CaseParser::parse_session_step},
      {"stop", StepOp::kStop, &CaseParser::parse_session_step},
      {"enable", StepOp::kEnable, &CaseParser::parse_session_step},
      {"disable", StepOp::kDisable, &CaseParser::parse_session_step},
      {"capture_state", StepOp::kCaptureState, &CaseParser::parse_session_step},
      {"flush", StepOp::kFlush, &CaseParser::parse_session_step},
      // Groups and disallow lists
      {"disallow", StepOp::kDisallow, &CaseParser::parse_disallow},
      // Providers and agents
      {"register", StepOp::kRegister, &CaseParser::parse_provider_step},
      {"unregister", StepOp::kUnregister, &CaseParser::parse_provider_step},
      {"query_enabled", StepOp::kQueryEnabled, &CaseParser::parse_provider_step},
      {"exit_agent", StepOp::kExitAgent, &CaseParser::parse_provider_step},
      {"kill_agent", StepOp::kKillAgent, &CaseParser::parse_provider_step},
      // Traits
      {"set_traits", StepOp::kSetTraits, &CaseParser::parse_set_traits},
      // Data path and consumers
      {"consume", StepOp::kConsume, &CaseParser::parse_consume},
      {"write", StepOp::kWrite, &CaseParser::parse_data_step},
      {"collect", StepOp::kCollect, &CaseParser::parse_data_step},
      {"last_error", StepOp::kLastError, &CaseParser::parse_last_error},
      // Classic providers (classic_steps.h)
      {"register_classic", StepOp::kRegisterClassic, &CaseParser::parse_classic_step},
      {"unregister_classic", StepOp::kUnregisterClassic, &CaseParser::parse_classic_step},
      {"trace_event", StepOp::kTraceEvent, &CaseParser::parse_classic_step},
      {"trace_message", StepOp::kTraceMessage, &CaseParser::parse_classic_step},
      // Providers under test
      {"subject_write", StepOp::kSubjectWrite, &CaseParser::parse_subject_step},
      {"inject_callback", StepOp::kInjectCallback, &CaseParser::parse_subject_step},
  };
  return table;
}

Step CaseParser::parse_step(const json& v, const std::string& p, const Case& c) {
  if (!v.is_object()) r_.fail(p, "expected an object, got " + json_type_name(v));
  Step s;
  s.pointer = p;
  const std::string op = r_.string(r_.field(v, p, "op"), p + "/op");
  auto it = std::find_if(ops().begin(), ops().end(), [&](const Op& o) { return o.name == op; });
  if (it == ops().end()) r_.fail(p + "/op", "unknown op \"" + op + "\"");
  s.op = it->op;
  (this->*(it->parse))(v, p, s, c);
  if (v.contains("via")) s.via = ref(v, p, "via", c);
  if (v.contains("expect")) parse_expect(v["expect"], p + "/expect", s);
  return s;
}

void CaseParser::parse_session_step(const json& v, const std::string& p, Step& s, const Case& c) {
  if (s.op == StepOp::kStart || s.op == StepOp::kStop || s.op == StepOp::kFlush) {
    if (s.op == StepOp::kFlush) {
      r_.object(v, p, {"op", "session", "expect"});
    } else {
      r_.object(v, p, {"op", "session", "via", "expect"});
    }
    s.body = SessionStep{ref(v, p, "session", c)};
    return;
  }
  ControlStep call;
  switch (s.op) {
    case StepOp::kEnable:
      r_.object(v, p,
                {"op", "session", "provider", "group", "via", "level", "match_any", "match_all",
                 "source_id", "enable_property", "filters", "api", "timeout_ms", "expect"});
      call.session = ref(v, p, "session", c);
      parse_target(v, p, call, c);
      parse_call(v, p, s.op, call, true);
      break;
    case StepOp::kDisable:
      r_.object(v, p,
                {"op", "session", "provider", "group", "via", "source_id", "api", "timeout_ms",
                 "expect"});
      call.session = ref(v, p, "session", c);
      parse_target(v, p, call, c);
      parse_call(v, p, s.op, call, false);
      break;
    default:  // capture_state
      r_.object(v, p,
                {"op", "session", "provider", "via", "level", "match_any", "match_all", "source_id",
                 "timeout_ms", "expect"});
      call.session = ref(v, p, "session", c);
      call.provider = ref(v, p, "provider", c);
      parse_call(v, p, s.op, call, true);
      break;
  }
  s.body = std::move(call);
}

void CaseParser::parse_provider_step(const json& v, const std::string& p, Step& s, const Case& c) {
  switch (s.op) {
    case StepOp::kRegister:
    case StepOp::kUnregister:
      r_.object(v, p, {"op", "provider", "expect"});
      s.body = ProviderStep{ref(v, p, "provider", c)};
      break;
    case StepOp::kQueryEnabled: {
      r_.object(v, p, {"op", "provider", "level", "keyword"});
      QueryEnabledStep q;
      q.provider = ref(v, p, "provider", c);
      q.level = static_cast<std::uint8_t>(
          r_.integer(r_.field(v, p, "level"), p + "/level", 255, "level"));
      q.keyword = r_.hex64(r_.field(v, p, "keyword"), p + "/keyword", "keyword");
      s.body = std::move(q);
      break;
    }
    default:  // exit_agent, kill_agent
      r_.object(v, p, {"op", "agent"});
      s.body = AgentStep{ref(v, p, "agent", c)};
      break;
  }
}

void CaseParser::parse_set_traits(const json& v, const std::string& p, Step& s, const Case& c) {
  r_.object(v, p, {"op", "provider", "traits", "raw", "expect"});
  TraitsStep t;
  t.provider = ref(v, p, "provider", c);
  if (v.contains("traits") == v.contains("raw")) {
    r_.fail(p, "set_traits needs exactly one of \"traits\" and \"raw\"");
  }
  if (v.contains("raw")) {
    t.blob = r_.bytes(v["raw"], p + "/raw");
    t.raw = true;
  } else {
    parse_traits(v["traits"], p + "/traits", t);
  }
  s.body = std::move(t);
}

void CaseParser::parse_data_step(const json& v, const std::string& p, Step& s, const Case& c) {
  if (s.op == StepOp::kCollect) {
    r_.object(v, p, {"op"});
    s.body = CollectStep{};
    return;
  }
  r_.object(v, p, {"op", "provider", "events", "lossy", "use_descriptor_type", "expect"});
  WriteStep w;
  w.provider = ref(v, p, "provider", c);
  if (v.contains("use_descriptor_type")) {
    if (!v["use_descriptor_type"].is_boolean()) {
      r_.fail(p + "/use_descriptor_type",
              "expected a boolean, got " + json_type_name(v["use_descriptor_type"]));
    }
    w.use_descriptor_type = v["use_descriptor_type"].get<bool>();
  }
  parse_events(r_.field(v, p, "events"), p + "/events", w);
  if (v.contains("lossy")) {
    if (!v["lossy"].is_boolean()) {
      r_.fail(p + "/lossy", "expected a boolean, got " + json_type_name(v["lossy"]));
    }
    w.lossy = v["lossy"].get<bool>();
  }
  s.body = std::move(w);
}

void CaseParser::parse_classic_step(const json& v, const std::string& p, Step& s, const Case& c) {
  std::set<std::string> labels;
  for (const auto& [label, def] : c.providers) labels.insert(label);
  classic::parse_step(v, file_, p, labels, s);
}

// subject_write and inject_callback name a provider under test.
void CaseParser::parse_subject_step(const json& v, const std::string& p, Step& s, const Case& c) {
  if (s.op == StepOp::kSubjectWrite) {
    r_.object(v, p, {"op", "provider", "which"});
    SubjectWriteStep w;
    if (v.contains("which")) {
      const std::string which = r_.string(v["which"], p + "/which");
      if (which != "test" && which != "state") {
        r_.fail(p + "/which", "which \"" + which + "\" is neither \"test\" nor \"state\"");
      }
      w.state_events = which == "state";
    }
    w.provider = ref(v, p, "provider", c);
    s.body = std::move(w);
  } else {
    r_.object(v, p, {"op", "provider", "is_enabled", "level", "match_any", "match_all"});
    InjectCallbackStep j;
    j.is_enabled = static_cast<std::uint32_t>(
        r_.integer(r_.field(v, p, "is_enabled"), p + "/is_enabled", 0xFFFFFFFFu, "is_enabled"));
    if (v.contains("level")) {
      j.level = static_cast<std::uint8_t>(r_.integer(v["level"], p + "/level", 255, "level"));
    }
    if (v.contains("match_any"))
      j.match_any = r_.hex64(v["match_any"], p + "/match_any", "keyword");
    if (v.contains("match_all"))
      j.match_all = r_.hex64(v["match_all"], p + "/match_all", "keyword");
    j.provider = ref(v, p, "provider", c);
    s.body = std::move(j);
  }
  const std::string& provider = step_provider(s);
  if (!c.providers.at(provider).subject) {
    r_.fail(p + "/provider", "provider \"" + provider +
                                 "\" is not a provider under test "
                                 "(its agent is not a subject)");
  }
}

void CaseParser::parse_expect(const json& v, const std::string& p, Step& s) {
  r_.object(v, p, {"status"});
  const json& st = r_.field(v, p, "status");
  ExplicitStatus e;
  if (st.is_string()) {
    if (st.get<std::string>() != "nonzero") {
      r_.fail(p + "/status",
              "status \"" + st.get<std::string>() + "\" is neither a number nor \"nonzero\"");
    }
    e.nonzero = true;
  } else {
    e.value = static_cast<std::uint32_t>(r_.integer(st, p + "/status", 0xFFFFFFFFu, "status"));
  }
  s.expect_status = e;
}

void CaseParser::parse_traits(const json& v, const std::string& p, TraitsStep& s) {
  r_.object(v, p, {"name", "group", "custom"});
  s.name = r_.string(r_.field(v, p, "name"), p + "/name");
  if (s.name.find('\0') != std::string::npos) r_.fail(p + "/name", "name holds a NUL");
  std::size_t size = 2 + s.name.size() + 1;
  if (v.contains("group")) {
    s.group = r_.guid(v["group"], p + "/group");
    size += 3 + sizeof(GUID);
  }
  if (v.contains("custom")) {
    const json& list = v["custom"];
    if (!list.is_array()) {
      r_.fail(p + "/custom", "expected an array, got " + json_type_name(list));
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string pi = p + "/custom/" + std::to_string(i);
      r_.object(list[i], pi, {"type", "data"});
      FilterDef t;
      t.type = static_cast<std::uint32_t>(
          r_.integer(r_.field(list[i], pi, "type"), pi + "/type", 255, "trait type"));
      t.data = r_.bytes(r_.field(list[i], pi, "data"), pi + "/data");
      size += 3 + t.data.size();
      s.custom.push_back(t);
    }
  }
  if (size > 0xFFFF) {
    r_.fail(p, "traits blob of " + std::to_string(size) + " bytes > 65535 (UINT16 TraitsSize)");
  }
}

void CaseParser::parse_filters(const json& v, const std::string& p,
                               std::vector<FilterDef>& filters) {
  if (!v.is_array()) r_.fail(p, "expected an array, got " + json_type_name(v));
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string pi = p + "/" + std::to_string(i);
    r_.object(v[i], pi, {"type", "data"});
    FilterDef f;
    f.type = static_cast<std::uint32_t>(
        r_.integer(r_.field(v[i], pi, "type"), pi + "/type", 0xFFFFFFFFu, "filter type"));
    f.data = r_.bytes(r_.field(v[i], pi, "data"), pi + "/data");
    filters.push_back(f);
  }
}

// Level, keywords, SourceId, api, timeout: the controller call's arguments.
void CaseParser::parse_call(const json& v, const std::string& p, StepOp op, ControlStep& s,
                            bool needs_level) {
  if (needs_level || v.contains("level")) {
    s.level =
        static_cast<std::uint8_t>(r_.integer(r_.field(v, p, "level"), p + "/level", 255, "level"));
  }
  if (v.contains("match_any")) s.match_any = r_.hex64(v["match_any"], p + "/match_any", "keyword");
  if (v.contains("match_all")) s.match_all = r_.hex64(v["match_all"], p + "/match_all", "keyword");
  if (v.contains("source_id")) {
    s.source_id = r_.guid(v["source_id"], p + "/source_id");
    s.has_parameters = true;
  }
  if (v.contains("enable_property")) {
    s.enable_property = static_cast<std::uint32_t>(
        r_.integer(v["enable_property"], p + "/enable_property", 0xFFFFFFFFu, "enable_property"));
    s.has_parameters = true;
  }
  if (v.contains("filters")) {
    parse_filters(v["filters"], p + "/filters", s.filters);
    s.has_parameters = true;
  }
  if (v.contains("api")) {
    s.api = r_.string(v["api"], p + "/api");
    if (s.api != "EnableTraceEx2" && s.api != "EnableTraceEx" && s.api != "EnableTrace") {
      r_.fail(p + "/api",
              "api \"" + s.api + "\" is not EnableTraceEx2, EnableTraceEx or EnableTrace");
    }
  }
  if (s.api == "EnableTrace") {
    if (s.source_id || s.enable_property || !s.filters.empty()) {
      r_.fail(p, "EnableTrace takes no source_id, enable_property or filters");
    }
    if (s.match_all != 0 || s.match_any > 0xFFFFFFFFu) {
      r_.fail(p, "EnableTrace takes 32-bit flags in match_any and no match_all");
    }
  }
  if (s.api != "EnableTraceEx2" && op == StepOp::kCaptureState) {
    r_.fail(p + "/api", "capture_state exists only with EnableTraceEx2");
  }
  if (v.contains("timeout_ms")) {
    s.timeout_ms = static_cast<std::uint32_t>(
        r_.integer(v["timeout_ms"], p + "/timeout_ms", 600000, "timeout_ms"));
  }
}

void CaseParser::parse_consume(const json& v, const std::string& p, Step& step, const Case& c) {
  r_.object(v, p,
            {"op", "consumer", "session", "agent", "mode", "context", "delay_us", "manifest",
             "overwrite_logfile"});
  ConsumeStep& s = step.body.emplace<ConsumeStep>();
  s.consumer = r_.label(r_.field(v, p, "consumer"), p + "/consumer");
  if (!consumers_.insert(c.id + "\n" + s.consumer).second) {
    r_.fail(p + "/consumer", "consumer label \"" + s.consumer + "\" is used twice in the case");
  }
  s.session = ref(v, p, "session", c);
  s.agent = ref(v, p, "agent", c);
  if (v.contains("mode")) {
    const std::string mode = r_.string(v["mode"], p + "/mode");
    if (mode != "event_record" && mode != "event_trace") {
      r_.fail(p + "/mode", "mode \"" + mode + "\" is neither \"event_record\" nor \"event_trace\"");
    }
    s.event_record_mode = mode == "event_record";
  }
  if (v.contains("context")) s.context = r_.hex64(v["context"], p + "/context", "context");
  if (v.contains("overwrite_logfile")) {
    if (!v["overwrite_logfile"].is_boolean()) {
      r_.fail(p + "/overwrite_logfile",
              "expected a boolean, got " + json_type_name(v["overwrite_logfile"]));
    }
    s.overwrite_logfile = v["overwrite_logfile"].get<bool>();
  }
  if (v.contains("delay_us")) {
    s.delay_us =
        static_cast<std::uint32_t>(r_.integer(v["delay_us"], p + "/delay_us", 1000000, "delay_us"));
  }
  if (v.contains("manifest")) {  // relative to the scenario file, which must exist
    const std::filesystem::path rel = r_.string(v["manifest"], p + "/manifest");
    const std::filesystem::path path =
        std::filesystem::absolute(std::filesystem::path(file_).parent_path() / rel);
    if (!std::filesystem::is_regular_file(path)) {
      r_.fail(p + "/manifest", "manifest file " + path.string() + " does not exist");
    }
    s.manifest = path.string();
  }
}

void CaseParser::parse_events(const json& v, const std::string& p, WriteStep& s) {
  if (!v.is_array()) r_.fail(p, "expected an array, got " + json_type_name(v));
  if (v.empty()) r_.fail(p, "a write step needs at least one event");
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string pi = p + "/" + std::to_string(i);
    r_.object(v[i], pi,
              {"id", "version", "channel", "level", "opcode", "task", "keyword", "count", "payload",
               "descriptors"});
    EventDef e;
    auto num = [&](const char* k, std::uint64_t max) -> std::uint64_t {
      return v[i].contains(k) ? r_.integer(v[i][k], pi + "/" + k, max, k) : 0;
    };
    e.id = static_cast<std::uint16_t>(num("id", 0xFFFF));
    e.version = static_cast<std::uint8_t>(num("version", 255));
    e.channel = static_cast<std::uint8_t>(num("channel", 255));
    e.level = static_cast<std::uint8_t>(num("level", 255));
    e.opcode = static_cast<std::uint8_t>(num("opcode", 255));
    e.task = static_cast<std::uint16_t>(num("task", 0xFFFF));
    if (v[i].contains("keyword")) e.keyword = r_.hex64(v[i]["keyword"], pi + "/keyword", "keyword");
    if (v[i].contains("count")) {
      e.count =
          static_cast<std::uint32_t>(r_.integer(v[i]["count"], pi + "/count", 1000000, "count"));
      if (e.count == 0) r_.fail(pi + "/count", "count must be at least 1");
    }
    if (v[i].contains("payload")) e.payload = r_.bytes(v[i]["payload"], pi + "/payload");
    if (v[i].contains("descriptors")) parse_typed(v[i]["descriptors"], pi + "/descriptors", e);
    total += e.count;
    s.events.push_back(std::move(e));
  }
  if (total > 1000000) r_.fail(p, "more than 1000000 events in one write step");
  case_events_ += total;
  if (case_events_ > kMaxEventsPerCase) {
    r_.fail(p, "more than " + std::to_string(kMaxEventsPerCase) + " events in one case");
  }
}

// An event's descriptors with a Type: 1 (event metadata) or 2 (provider metadata). Type 3 (a
// timestamp override) cannot be judged by the oracle (its unit is the session's clock; the
// runtime test covers it).
void CaseParser::parse_typed(const json& v, const std::string& p, EventDef& e) {
  if (!v.is_array()) r_.fail(p, "expected an array, got " + json_type_name(v));
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string pi = p + "/" + std::to_string(i);
    r_.object(v[i], pi, {"type", "data"});
    TypedData t;
    t.type = static_cast<std::uint8_t>(
        r_.integer(r_.field(v[i], pi, "type"), pi + "/type", 255, "type"));
    if (t.type != 1 && t.type != 2) {
      r_.fail(pi + "/type", "type " + std::to_string(t.type) +
                                " is not 1 (event metadata) or 2 (provider metadata)");
    }
    t.data = r_.bytes(r_.field(v[i], pi, "data"), pi + "/data");
    e.typed.push_back(std::move(t));
  }
}

// enable / disable: a provider label, or a provider group's GUID (groups).
void CaseParser::parse_target(const json& v, const std::string& p, ControlStep& s, const Case& c) {
  if (v.contains("provider") == v.contains("group")) {
    r_.fail(p, "needs exactly one of \"provider\" and \"group\"");
  }
  if (v.contains("provider")) {
    s.provider = ref(v, p, "provider", c);
    return;
  }
  s.group = r_.guid(v["group"], p + "/group");
  s.has_parameters = true;
  if (s.api != "EnableTraceEx2" || (v.contains("api") && v["api"] != "EnableTraceEx2")) {
    r_.fail(p + "/group", "a provider group is enabled with EnableTraceEx2 only");
  }
}

// disallow: TraceSetDisallowList of `session` with the GUIDs of `providers` (labels).
void CaseParser::parse_disallow(const json& v, const std::string& p, Step& step, const Case& c) {
  r_.object(v, p, {"op", "session", "providers", "expect"});
  DisallowStep& s = step.body.emplace<DisallowStep>();
  s.session = ref(v, p, "session", c);
  const json& list = r_.field(v, p, "providers");
  if (!list.is_array()) r_.fail(p + "/providers", "expected an array, got " + json_type_name(list));
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string pi = p + "/providers/" + std::to_string(i);
    const std::string label = r_.string(list[i], pi);
    if (!c.providers.count(label)) r_.fail(pi, "unknown provider \"" + label + "\"");
    s.providers.push_back(label);
  }
}

void CaseParser::parse_last_error(const json& v, const std::string& p, Step& step, const Case& c) {
  r_.object(v, p, {"op", "api", "agent", "expect"});
  LastErrorStep& s = step.body.emplace<LastErrorStep>();
  s.api = r_.string(r_.field(v, p, "api"), p + "/api");
  if (s.api != "OpenTrace" && s.api != "GetTraceLoggerHandle" && s.api != "GetTraceEnableLevel" &&
      s.api != "GetTraceEnableFlags") {
    r_.fail(p + "/api", "api \"" + s.api +
                            "\" is none of \"OpenTrace\", \"GetTraceLoggerHandle\", "
                            "\"GetTraceEnableLevel\", \"GetTraceEnableFlags\"");
  }
  s.agent = ref(v, p, "agent", c);
}

}  // namespace etwh::scenario_parse
