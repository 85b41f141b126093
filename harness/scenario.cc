#include "scenario.h"

#include "classic_steps.h"
#include "json_text.h"

#include "win32_text.h"

#include <evntrace.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace etwh {

const char* step_op_name(StepOp op) {
  switch (op) {
    case StepOp::kStart: return "start";
    case StepOp::kStop: return "stop";
    case StepOp::kRegister: return "register";
    case StepOp::kUnregister: return "unregister";
    case StepOp::kEnable: return "enable";
    case StepOp::kDisable: return "disable";
    case StepOp::kCaptureState: return "capture_state";
    case StepOp::kSetTraits: return "set_traits";
    case StepOp::kQueryEnabled: return "query_enabled";
    case StepOp::kExitAgent: return "exit_agent";
    case StepOp::kKillAgent: return "kill_agent";
    case StepOp::kConsume: return "consume";
    case StepOp::kWrite: return "write";
    case StepOp::kFlush: return "flush";
    case StepOp::kCollect: return "collect";
    case StepOp::kDisallow: return "disallow";
    case StepOp::kRegisterClassic: return "register_classic";
    case StepOp::kUnregisterClassic: return "unregister_classic";
    case StepOp::kTraceEvent: return "trace_event";
    case StepOp::kTraceMessage: return "trace_message";
    case StepOp::kSubjectWrite: return "subject_write";
    case StepOp::kInjectCallback: return "inject_callback";
  }
  return "?";
}

namespace {

using nlohmann::json;


// Escapes a key for use in a JSON pointer (RFC 6901).
std::string pointer_token(const std::string& key) {
  std::string out;
  for (char ch : key) {
    if (ch == '~') out += "~0";
    else if (ch == '/') out += "~1";
    else out += ch;
  }
  return out;
}

// Walks one file's JSON and throws ScenarioError with its name and the pointer.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& pointer, const std::string& reason) const {
    throw ScenarioError(file_ + ": " + (pointer.empty() ? "/" : pointer) + ": " + reason);
  }

  const json& object(const json& v, const std::string& pointer,
                     std::initializer_list<const char*> allowed) const {
    if (!v.is_object()) fail(pointer, "expected an object, got " + json_type_name(v));
    for (const auto& [k, ignored] : v.items()) {
      if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return k == a; })) {
        fail(pointer + "/" + pointer_token(k), "unknown field \"" + k + "\"");
      }
    }
    return v;
  }

  const json& field(const json& obj, const std::string& pointer, const char* name) const {
    auto it = obj.find(name);
    if (it == obj.end()) fail(pointer, std::string("missing field \"") + name + "\"");
    return *it;
  }

  std::string string(const json& v, const std::string& pointer) const {
    if (!v.is_string()) fail(pointer, "expected a string, got " + json_type_name(v));
    return v.get<std::string>();
  }

  std::string label(const json& v, const std::string& pointer) const {
    std::string s = string(v, pointer);
    if (s.empty()) fail(pointer, "empty label");
    return s;
  }

  std::uint64_t integer(const json& v, const std::string& pointer, std::uint64_t max,
                        const char* what) const {
    if (!v.is_number_integer()) {
      fail(pointer, "expected an integer, got " + json_type_name(v));
    }
    if (v.is_number_unsigned()) {
      const std::uint64_t u = v.get<std::uint64_t>();
      if (u > max) {
        fail(pointer, std::string(what) + " " + std::to_string(u) + " > " + std::to_string(max));
      }
      return u;
    }
    const std::int64_t i = v.get<std::int64_t>();
    if (i < 0) fail(pointer, std::string(what) + " " + std::to_string(i) + " is negative");
    if (static_cast<std::uint64_t>(i) > max) {
      fail(pointer, std::string(what) + " " + std::to_string(i) + " > " + std::to_string(max));
    }
    return static_cast<std::uint64_t>(i);
  }

  std::uint64_t hex64(const json& v, const std::string& pointer, const char* what) const {
    const std::string s = string(v, pointer);
    auto parsed = parse_hex(s);
    if (!parsed) {
      const bool hex_digits = s.size() > 2 && s.rfind("0x", 0) == 0 &&
                              s.find_first_not_of("0123456789abcdefABCDEF", 2) == std::string::npos;
      fail(pointer, std::string(what) + " \"" + s + "\"" +
                        (hex_digits ? " is out of range (more than 64 bits)"
                                    : " is not a \"0x\"-prefixed hex value"));
    }
    return *parsed;
  }

  GUID guid(const json& v, const std::string& pointer) const {
    const std::string s = string(v, pointer);
    auto g = parse_guid(s);
    if (!g) fail(pointer, "malformed GUID \"" + s + "\"");
    return *g;
  }

  std::vector<std::uint8_t> bytes(const json& v, const std::string& pointer) const {
    const std::string s = string(v, pointer);
    auto b = hex_to_bytes(s);
    if (!b) fail(pointer, "malformed hex bytes \"" + s + "\"");
    return *b;
  }

 private:
  std::string file_;
};


class CaseParser {
 public:
  CaseParser(const Reader& r, const std::set<std::string>& known_rules, std::string file)
      : r_(r), known_rules_(known_rules), file_(std::move(file)) {}

  Case parse(const json& v, const std::string& p) {
    r_.object(v, p, {"id", "rules", "description", "agents", "providers", "sessions", "steps",
                    "expect_lint"});
    Case c;
    c.file = file_;
    c.pointer = p;
    c.id = r_.label(r_.field(v, p, "id"), p + "/id");
    parse_rules(r_.field(v, p, "rules"), p + "/rules", c);
    if (v.contains("description")) {
      c.description = r_.string(v["description"], p + "/description");
    }
    parse_agents(r_.field(v, p, "agents"), p + "/agents", c);
    if (v.contains("providers")) parse_providers(v["providers"], p + "/providers", c);
    if (v.contains("sessions")) parse_sessions(v["sessions"], p + "/sessions", c);
    const json& steps = r_.field(v, p, "steps");
    if (!steps.is_array()) {
      r_.fail(p + "/steps", "expected an array, got " + json_type_name(steps));
    }
    if (steps.empty()) r_.fail(p + "/steps", "a case needs at least one step");
    if (v.contains("expect_lint")) parse_expect_lint(v["expect_lint"], p + "/expect_lint", c);
    for (std::size_t i = 0; i < steps.size(); ++i) {
      c.steps.push_back(parse_step(steps[i], p + "/steps/" + std::to_string(i), c));
    }
    return c;
  }

 private:
  void parse_rules(const json& v, const std::string& p, Case& c) {
    if (!v.is_array()) r_.fail(p, "expected an array, got " + json_type_name(v));
    if (v.empty()) r_.fail(p, "a case must name at least one rule");
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string pi = p + "/" + std::to_string(i);
      std::string id = r_.string(v[i], pi);
      if (!known_rules_.count(id)) r_.fail(pi, "unknown rule ID \"" + id + "\"");
      c.rules.push_back(id);
    }
  }

  // Lint rules only: the names of the rules a linter must report for this case.
  void parse_expect_lint(const json& v, const std::string& p, Case& c) {
    if (!v.is_array()) r_.fail(p, "expected an array, got " + json_type_name(v));
    c.expect_lint.emplace();
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string pi = p + "/" + std::to_string(i);
      std::string id = r_.string(v[i], pi);
      if (!known_rules_.count(id)) r_.fail(pi, "unknown rule ID \"" + id + "\"");
      c.expect_lint->push_back(id);
    }
  }

  void parse_agents(const json& v, const std::string& p, Case& c) {
    if (!v.is_object()) r_.fail(p, "expected an object, got " + json_type_name(v));
    for (const auto& [label, def] : v.items()) {
      const std::string pa = p + "/" + pointer_token(label);
      r_.object(def, pa, {"subject"});
      c.agents.push_back(label);
      if (def.contains("subject")) {
        if (!def["subject"].is_boolean()) {
          r_.fail(pa + "/subject", "expected a boolean, got " + json_type_name(def["subject"]));
        }
        if (def["subject"].get<bool>()) c.subject_agents.insert(label);
      }
    }
    if (c.agents.empty()) r_.fail(p, "a case needs at least one agent");
  }

  bool has_agent(const Case& c, const std::string& a) const {
    return std::find(c.agents.begin(), c.agents.end(), a) != c.agents.end();
  }

  void parse_providers(const json& v, const std::string& p, Case& c) {
    if (!v.is_object()) r_.fail(p, "expected an object, got " + json_type_name(v));
    for (const auto& [label, def] : v.items()) {
      const std::string pp = p + "/" + pointer_token(label);
      ProviderDef d;
      d.label = label;
      d.agent = r_.label(r_.field(def, pp, "agent"), pp + "/agent");
      if (!has_agent(c, d.agent)) r_.fail(pp + "/agent", "undefined agent \"" + d.agent + "\"");
      if (c.subject_agents.count(d.agent)) {
        parse_subject_provider(def, pp, c, d);
        continue;
      }
      r_.object(def, pp, {"agent", "guid", "context", "callback", "delay_ms"});
      d.guid = r_.guid(r_.field(def, pp, "guid"), pp + "/guid");
      if (def.contains("context")) d.context = r_.hex64(def["context"], pp + "/context", "context");
      if (def.contains("callback")) {
        const std::string cb = r_.string(def["callback"], pp + "/callback");
        if (cb != "record" && cb != "none") {
          r_.fail(pp + "/callback", "callback \"" + cb + "\" is neither \"record\" nor \"none\"");
        }
        d.has_callback = cb == "record";
      }
      if (def.contains("delay_ms")) {
        d.delay_ms = static_cast<std::uint32_t>(
            r_.integer(def["delay_ms"], pp + "/delay_ms", 60000, "delay_ms"));
      }
      c.providers[label] = d;
    }
  }

  void parse_sessions(const json& v, const std::string& p, Case& c) {
    if (!v.is_object()) r_.fail(p, "expected an object, got " + json_type_name(v));
    for (const auto& [label, def] : v.items()) {
      const std::string ps = p + "/" + pointer_token(label);
      r_.object(def, ps, {"buffer_size_kb", "minimum_buffers", "maximum_buffers", "flush_timer",
                          "log_file_mode"});
      SessionDef s;
      s.label = label;
      for (const auto& [k, val] : def.items()) {
        s.settings[k] = r_.integer(val, ps + "/" + k, 0xFFFFFFFFu, k.c_str());
      }
      c.sessions[label] = s;
    }
  }

  // A provider under test: the user's code registers it (context and callback are theirs). Its
  // GUID is the subject's; the case's `guid`, if any, only keys it in the oracle.
  void parse_subject_provider(const json& def, const std::string& pp, Case& c, ProviderDef& d) {
    r_.object(def, pp, {"agent", "guid", "callback_budget_ms"});
    for (const auto& [label, other] : c.providers) {
      if (other.agent == d.agent) {
        r_.fail(pp + "/agent", "subject agent \"" + d.agent + "\" already hosts provider \"" +
                                   label + "\" (one provider under test per subject agent)");
      }
    }
    d.subject = true;
    if (def.contains("guid")) {
      d.guid = r_.guid(def["guid"], pp + "/guid");
    } else {
      // {5ab1ec70-0000-4000-8000-0000000000NN}: a stand-in unique in the case.
      d.guid = GUID{0x5ab1ec70, 0, 0x4000, {0x80, 0, 0, 0, 0, 0, 0, static_cast<unsigned char>(c.providers.size())}};
    }
    if (def.contains("callback_budget_ms")) {
      d.callback_budget_ms = static_cast<std::uint32_t>(
          r_.integer(def["callback_budget_ms"], pp + "/callback_budget_ms", 60000, "callback_budget_ms"));
    }
    c.providers[d.label] = d;
  }

  // subject_write and inject_callback name a provider under test.
  void parse_subject_step(const json& v, const std::string& p, Step& s, const Case& c) {
    if (s.op == StepOp::kSubjectWrite) {
      r_.object(v, p, {"op", "provider", "which"});
      if (v.contains("which")) {
        const std::string which = r_.string(v["which"], p + "/which");
        if (which != "test" && which != "state") {
          r_.fail(p + "/which", "which \"" + which + "\" is neither \"test\" nor \"state\"");
        }
        s.state_events = which == "state";
      }
    } else {
      r_.object(v, p, {"op", "provider", "is_enabled", "level", "match_any", "match_all"});
      s.is_enabled = static_cast<std::uint32_t>(
          r_.integer(r_.field(v, p, "is_enabled"), p + "/is_enabled", 0xFFFFFFFFu, "is_enabled"));
      if (v.contains("level")) {
        s.level = static_cast<std::uint8_t>(r_.integer(v["level"], p + "/level", 255, "level"));
      }
      if (v.contains("match_any")) s.match_any = r_.hex64(v["match_any"], p + "/match_any", "keyword");
      if (v.contains("match_all")) s.match_all = r_.hex64(v["match_all"], p + "/match_all", "keyword");
    }
    s.provider = ref(v, p, "provider", c);
    if (!c.providers.at(s.provider).subject) {
      r_.fail(p + "/provider", "provider \"" + s.provider + "\" is not a provider under test "
                               "(its agent is not a subject)");
    }
  }

  std::string ref(const json& step, const std::string& p, const char* name, const Case& c) {
    const std::string v = r_.label(r_.field(step, p, name), p + "/" + name);
    const std::string what = name;
    if (what == "session" && !c.sessions.count(v)) {
      r_.fail(p + "/session", "undefined session \"" + v + "\"");
    }
    if (what == "provider" && !c.providers.count(v)) {
      r_.fail(p + "/provider", "undefined provider \"" + v + "\"");
    }
    if ((what == "agent" || what == "via") && !has_agent(c, v)) {
      r_.fail(p + "/" + what, "undefined agent \"" + v + "\"");
    }
    return v;
  }

  void parse_expect(const json& v, const std::string& p, Step& s) {
    r_.object(v, p, {"status"});
    const json& st = r_.field(v, p, "status");
    ExplicitStatus e;
    if (st.is_string()) {
      if (st.get<std::string>() != "nonzero") {
        r_.fail(p + "/status", "status \"" + st.get<std::string>() +
                                   "\" is neither a number nor \"nonzero\"");
      }
      e.nonzero = true;
    } else {
      e.value = static_cast<std::uint32_t>(r_.integer(st, p + "/status", 0xFFFFFFFFu, "status"));
    }
    s.expect_status = e;
  }

  void parse_traits(const json& v, const std::string& p, Step& s) {
    r_.object(v, p, {"name", "group", "custom"});
    s.traits_name = r_.string(r_.field(v, p, "name"), p + "/name");
    if (s.traits_name.find('\0') != std::string::npos) r_.fail(p + "/name", "name holds a NUL");
    std::size_t size = 2 + s.traits_name.size() + 1;
    if (v.contains("group")) {
      s.traits_group = r_.guid(v["group"], p + "/group");
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
        s.traits_custom.push_back(t);
      }
    }
    if (size > 0xFFFF) {
      r_.fail(p, "traits blob of " + std::to_string(size) + " bytes > 65535 (UINT16 TraitsSize)");
    }
  }

  void parse_filters(const json& v, const std::string& p, Step& s) {
    if (!v.is_array()) r_.fail(p, "expected an array, got " + json_type_name(v));
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string pi = p + "/" + std::to_string(i);
      r_.object(v[i], pi, {"type", "data"});
      FilterDef f;
      f.type = static_cast<std::uint32_t>(
          r_.integer(r_.field(v[i], pi, "type"), pi + "/type", 0xFFFFFFFFu, "filter type"));
      f.data = r_.bytes(r_.field(v[i], pi, "data"), pi + "/data");
      s.filters.push_back(f);
    }
  }

  // Level, keywords, SourceId, api, timeout: the controller call's arguments.
  void parse_call(const json& v, const std::string& p, Step& s, bool needs_level) {
    if (needs_level || v.contains("level")) {
      s.level = static_cast<std::uint8_t>(
          r_.integer(r_.field(v, p, "level"), p + "/level", 255, "level"));
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
      parse_filters(v["filters"], p + "/filters", s);
      s.has_parameters = true;
    }
    if (v.contains("api")) {
      s.api = r_.string(v["api"], p + "/api");
      if (s.api != "EnableTraceEx2" && s.api != "EnableTraceEx" && s.api != "EnableTrace") {
        r_.fail(p + "/api", "api \"" + s.api +
                                "\" is not EnableTraceEx2, EnableTraceEx or EnableTrace");
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
    if (s.api != "EnableTraceEx2" && s.op == StepOp::kCaptureState) {
      r_.fail(p + "/api", "capture_state exists only with EnableTraceEx2");
    }
    if (v.contains("timeout_ms")) {
      s.timeout_ms = static_cast<std::uint32_t>(
          r_.integer(v["timeout_ms"], p + "/timeout_ms", 600000, "timeout_ms"));
    }
  }

  void parse_consume(const json& v, const std::string& p, Step& s, const Case& c) {
    r_.object(v, p, {"op", "consumer", "session", "agent", "mode", "context", "delay_us"});
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
    if (v.contains("delay_us")) {
      s.delay_us = static_cast<std::uint32_t>(
          r_.integer(v["delay_us"], p + "/delay_us", 1000000, "delay_us"));
    }
  }

  void parse_events(const json& v, const std::string& p, Step& s) {
    if (!v.is_array()) r_.fail(p, "expected an array, got " + json_type_name(v));
    if (v.empty()) r_.fail(p, "a write step needs at least one event");
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string pi = p + "/" + std::to_string(i);
      r_.object(v[i], pi, {"id", "version", "channel", "level", "opcode", "task", "keyword",
                           "count", "payload"});
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
        e.count = static_cast<std::uint32_t>(r_.integer(v[i]["count"], pi + "/count", 1000000, "count"));
        if (e.count == 0) r_.fail(pi + "/count", "count must be at least 1");
      }
      if (v[i].contains("payload")) e.payload = r_.bytes(v[i]["payload"], pi + "/payload");
      total += e.count;
      s.events.push_back(std::move(e));
    }
    if (total > 1000000) r_.fail(p, "more than 1000000 events in one write step");
  }

  // enable / disable: a provider label, or a provider group's GUID (groups).
  void parse_target(const json& v, const std::string& p, Step& s, const Case& c) {
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
  void parse_disallow(const json& v, const std::string& p, Step& s, const Case& c) {
    r_.object(v, p, {"op", "session", "providers", "expect"});
    s.session = ref(v, p, "session", c);
    const json& list = r_.field(v, p, "providers");
    if (!list.is_array()) r_.fail(p + "/providers", "expected an array, got " + json_type_name(list));
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string pi = p + "/providers/" + std::to_string(i);
      const std::string label = r_.string(list[i], pi);
      if (!c.providers.count(label)) r_.fail(pi, "unknown provider \"" + label + "\"");
      s.disallow.push_back(label);
    }
  }

  Step parse_step(const json& v, const std::string& p, const Case& c) {
    if (!v.is_object()) r_.fail(p, "expected an object, got " + json_type_name(v));
    Step s;
    s.pointer = p;
    const std::string op = r_.string(r_.field(v, p, "op"), p + "/op");
    static const std::vector<std::pair<std::string, StepOp>> ops = {
        {"start", StepOp::kStart},           {"stop", StepOp::kStop},
        {"register", StepOp::kRegister},     {"unregister", StepOp::kUnregister},
        {"enable", StepOp::kEnable},         {"disable", StepOp::kDisable},
        {"capture_state", StepOp::kCaptureState}, {"set_traits", StepOp::kSetTraits},
        {"query_enabled", StepOp::kQueryEnabled}, {"exit_agent", StepOp::kExitAgent},
        {"kill_agent", StepOp::kKillAgent}, {"consume", StepOp::kConsume},
        {"write", StepOp::kWrite},           {"flush", StepOp::kFlush},
        {"collect", StepOp::kCollect},       {"disallow", StepOp::kDisallow},
        {"register_classic", StepOp::kRegisterClassic},
        {"unregister_classic", StepOp::kUnregisterClassic},
        {"trace_event", StepOp::kTraceEvent}, {"trace_message", StepOp::kTraceMessage},
        {"subject_write", StepOp::kSubjectWrite}, {"inject_callback", StepOp::kInjectCallback}};
    auto it = std::find_if(ops.begin(), ops.end(), [&](const auto& o) { return o.first == op; });
    if (it == ops.end()) r_.fail(p + "/op", "unknown op \"" + op + "\"");
    s.op = it->second;
    switch (s.op) {
      case StepOp::kStart:
      case StepOp::kStop:
        r_.object(v, p, {"op", "session", "via", "expect"});
        s.session = ref(v, p, "session", c);
        break;
      case StepOp::kRegister:
      case StepOp::kUnregister:
        r_.object(v, p, {"op", "provider", "expect"});
        s.provider = ref(v, p, "provider", c);
        break;
      case StepOp::kEnable:
        r_.object(v, p, {"op", "session", "provider", "group", "via", "level", "match_any",
                         "match_all", "source_id", "enable_property", "filters", "api",
                         "timeout_ms", "expect"});
        s.session = ref(v, p, "session", c);
        parse_target(v, p, s, c);
        parse_call(v, p, s, true);
        break;
      case StepOp::kDisable:
        r_.object(v, p, {"op", "session", "provider", "group", "via", "source_id", "api",
                         "timeout_ms", "expect"});
        s.session = ref(v, p, "session", c);
        parse_target(v, p, s, c);
        parse_call(v, p, s, false);
        break;
      case StepOp::kCaptureState:
        r_.object(v, p, {"op", "session", "provider", "via", "level", "match_any", "match_all",
                         "source_id", "timeout_ms", "expect"});
        s.session = ref(v, p, "session", c);
        s.provider = ref(v, p, "provider", c);
        parse_call(v, p, s, true);
        break;
      case StepOp::kSetTraits:
        r_.object(v, p, {"op", "provider", "traits", "raw", "expect"});
        s.provider = ref(v, p, "provider", c);
        if (v.contains("traits") == v.contains("raw")) {
          r_.fail(p, "set_traits needs exactly one of \"traits\" and \"raw\"");
        }
        if (v.contains("raw")) {
          s.traits_blob = r_.bytes(v["raw"], p + "/raw");
          s.traits_raw = true;
        } else {
          parse_traits(v["traits"], p + "/traits", s);
        }
        break;
      case StepOp::kQueryEnabled:
        r_.object(v, p, {"op", "provider", "level", "keyword"});
        s.provider = ref(v, p, "provider", c);
        s.level = static_cast<std::uint8_t>(
            r_.integer(r_.field(v, p, "level"), p + "/level", 255, "level"));
        s.keyword = r_.hex64(r_.field(v, p, "keyword"), p + "/keyword", "keyword");
        break;
      case StepOp::kExitAgent:
      case StepOp::kKillAgent:
        r_.object(v, p, {"op", "agent"});
        s.agent = ref(v, p, "agent", c);
        break;
      case StepOp::kConsume:
        parse_consume(v, p, s, c);
        break;
      case StepOp::kWrite:
        r_.object(v, p, {"op", "provider", "events", "lossy", "expect"});
        s.provider = ref(v, p, "provider", c);
        parse_events(r_.field(v, p, "events"), p + "/events", s);
        if (v.contains("lossy")) {
          if (!v["lossy"].is_boolean()) {
            r_.fail(p + "/lossy", "expected a boolean, got " + json_type_name(v["lossy"]));
          }
          s.lossy = v["lossy"].get<bool>();
        }
        break;
      case StepOp::kFlush:
        r_.object(v, p, {"op", "session", "expect"});
        s.session = ref(v, p, "session", c);
        break;
      case StepOp::kCollect:
        r_.object(v, p, {"op"});
        break;
      case StepOp::kDisallow:
        parse_disallow(v, p, s, c);
        break;
      case StepOp::kRegisterClassic:
      case StepOp::kUnregisterClassic:
      case StepOp::kTraceEvent:
      case StepOp::kTraceMessage: {
        std::set<std::string> labels;
        for (const auto& [label, def] : c.providers) labels.insert(label);
        classic::parse_step(v, file_, p, labels, s);
        break;
      }
      case StepOp::kSubjectWrite:
      case StepOp::kInjectCallback:
        parse_subject_step(v, p, s, c);
        break;
    }
    if (v.contains("via")) s.via = ref(v, p, "via", c);
    if (v.contains("expect")) parse_expect(v["expect"], p + "/expect", s);
    return s;
  }

  const Reader& r_;
  const std::set<std::string>& known_rules_;
  std::string file_;
  std::set<std::string> consumers_;  // "<case id>\n<consumer label>"
};

}  // namespace

std::vector<Case> load_scenario_text(const std::string& text, const std::string& file,
                                     const std::set<std::string>& known_rules) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    // nlohmann's byte offset points one past the offending character.
    const std::size_t at = e.byte > 0 ? e.byte - 1 : 0;
    std::string reason = e.what();
    const auto colon = reason.rfind(": ");
    if (colon != std::string::npos) reason = reason.substr(colon + 2);
    throw ScenarioError(file + ": " + line_col(text, at) + ": JSON syntax error: " + reason);
  } catch (const json::out_of_range& e) {  // a number no double holds (1e999)
    throw ScenarioError(file + ": " + line_col(text, json_error_offset(text)) + ": " +
                        json_error_reason(e));
  }
  Reader r(file);
  r.object(doc, "", {"description", "cases"});
  if (doc.contains("description")) r.string(doc["description"], "/description");
  const json& cases = r.field(doc, "", "cases");
  if (!cases.is_array()) r.fail("/cases", "expected an array, got " + json_type_name(cases));
  std::vector<Case> out;
  CaseParser parser(r, known_rules, file);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string p = "/cases/" + std::to_string(i);
    Case c = parser.parse(cases[i], p);
    for (const Case& other : out) {
      if (other.id == c.id) {
        r.fail(p + "/id", "duplicate case id \"" + c.id + "\" (first at " + other.pointer + ")");
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<Case> load_scenario_file(const std::filesystem::path& file,
                                     const std::set<std::string>& known_rules) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ScenarioError(file.string() + ": -: cannot open the file");
  std::ostringstream text;
  text << in.rdbuf();
  return load_scenario_text(text.str(), file.string(), known_rules);
}

std::vector<Case> load_scenarios(const std::vector<std::filesystem::path>& paths,
                                 const std::set<std::string>& known_rules) {
  std::vector<std::filesystem::path> files;
  for (const auto& path : paths) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      std::vector<std::filesystem::path> found;
      for (const auto& entry : std::filesystem::directory_iterator(path)) {
        if (entry.path().extension() == ".json") found.push_back(entry.path());
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(path);
    }
  }
  std::vector<Case> all;
  for (const auto& f : files) {
    for (Case& c : load_scenario_file(f, known_rules)) {
      for (const Case& other : all) {
        if (other.id == c.id) {
          throw ScenarioError(c.file + ": " + c.pointer + "/id: duplicate case id \"" + c.id +
                              "\" (first in " + other.file + ")");
        }
      }
      all.push_back(std::move(c));
    }
  }
  return all;
}

}  // namespace etwh
