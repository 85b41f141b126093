#include "harness/conformance/families/classic/classic_steps.h"
#include "harness/model/rules.h"

#include "harness/conformance/oracle.h"
#include "harness/conformance/scenario.h"
#include "harness/conformance/families/classic/classic_ops.h"
#include "harness/conformance/families/data_path/data_path_ops.h"
#include "harness/conformance/families/sessions/sessions_ops.h"
#include "win32_text.h"

#include <algorithm>
#include <optional>

namespace etwh::classic {

namespace {

using json = nlohmann::json;

// Values of evntrace.h / winerror.h, spelt out so the oracle stays independent of which
// SDK header is at hand.
constexpr std::uint32_t kWmiEnableEvents = 4;
constexpr std::uint32_t kWmiDisableEvents = 5;
constexpr std::uint32_t kTracedGuid = 0x00020000;  // WNODE_FLAG_TRACED_GUID
constexpr std::uint32_t kErrorInvalidFlagNumber = 186;
constexpr std::uint32_t kHeaderSize = 48;             // sizeof(EVENT_TRACE_HEADER)
constexpr std::uint32_t kBufferOverhead = 72;         // seed 002: Size < BufferSize - 72
constexpr std::uint32_t kMaxMofFields = 16;           // MAX_MOF_FIELDS
constexpr std::uint16_t kFlagClassicHeader = 0x0100;  // EVENT_HEADER_FLAG_CLASSIC_HEADER
constexpr std::uint16_t kFlagTraceMessage = 0x0008;   // EVENT_HEADER_FLAG_TRACE_MESSAGE

[[noreturn]] void bad(const std::string& file, const std::string& pointer,
                      const std::string& reason) {
  throw InputError(file, pointer, reason);
}

std::uint64_t unsigned_field(const json& v, const std::string& file, const std::string& p,
                             const char* key, std::uint64_t max) {
  const json& f = v.at(key);
  if (!f.is_number_unsigned() || f.get<std::uint64_t>() > max) {
    bad(file, p + "/" + key, "expected an integer 0.." + std::to_string(max) + ", got " + f.dump());
  }
  return f.get<std::uint64_t>();
}

}  // namespace

bool is_classic_op(const std::string& op) {
  return op == "register_classic" || op == "unregister_classic" || op == "trace_event" ||
         op == "trace_message";
}

void parse_step(const json& v, const std::string& file, const std::string& p,
                const std::set<std::string>& providers, Step& s) {
  const std::string op = v.at("op").get<std::string>();
  std::set<std::string> allowed = {"op", "provider", "expect"};
  if (op == "register_classic") allowed.insert("classes");
  if (op == "trace_event") {
    allowed.insert({"type", "level", "version", "payload", "count", "guid_ptr", "mof_fields",
                    "size", "flags", "only_enabled"});
  }
  if (op == "trace_message") allowed.insert({"number", "payload", "count"});
  for (const auto& [key, value] : v.items()) {
    if (!allowed.count(key)) bad(file, p + "/" + key, "unknown field for " + op);
  }
  if (!v.contains("provider") || !v["provider"].is_string()) {
    bad(file, p + "/provider", "expected the label of a provider");
  }
  ClassicStep& cs = s.body.emplace<ClassicStep>();
  cs.provider = v["provider"].get<std::string>();
  if (!providers.count(cs.provider)) {
    bad(file, p + "/provider", "unknown provider \"" + cs.provider + "\"");
  }
  json request = json::object();
  for (const char* key : {"type", "level", "number", "count", "mof_fields", "size", "version"}) {
    if (!v.contains(key)) continue;
    const std::uint64_t max = std::string(key) == "count"        ? 100000
                              : std::string(key) == "number"     ? 65535
                              : std::string(key) == "size"       ? 65535
                              : std::string(key) == "mof_fields" ? 64
                                                                 : 255;
    request[key] = unsigned_field(v, file, p, key, max);
  }
  if (v.contains("mof_fields") && request["mof_fields"].get<std::uint64_t>() < 2) {
    bad(file, p + "/mof_fields", "at least 2 (the sequence number and the payload)");
  }
  if (v.contains("payload")) {
    if (!v["payload"].is_string() || !hex_to_bytes(v["payload"].get<std::string>())) {
      bad(file, p + "/payload", "expected hex bytes");
    }
    request["payload"] = v["payload"];
  }
  if (v.contains("flags")) {
    if (!v["flags"].is_string() || !parse_hex(v["flags"].get<std::string>())) {
      bad(file, p + "/flags", "expected a \"0x\" hex string");
    }
    request["flags"] = v["flags"];
  }
  for (const char* key : {"guid_ptr", "only_enabled"}) {
    if (!v.contains(key)) continue;
    if (!v[key].is_boolean()) bad(file, p + "/" + key, "expected a boolean");
    request[key] = v[key];
  }
  if (v.contains("classes")) {
    const json& list = v["classes"];
    if (!list.is_array()) bad(file, p + "/classes", "expected an array of GUID strings");
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (!list[i].is_string() || !parse_guid(list[i].get<std::string>())) {
        bad(file, p + "/classes/" + std::to_string(i), "expected a GUID string");
      }
    }
    request["classes"] = list;
  }
  cs.request = request;
}

namespace {

struct Event {
  std::uint64_t seq = 0;
  std::string provider;
  EventDef def;
  std::uint16_t flags = 0;
  std::string flags_rule;
  std::string owner;  // the session that had the provider when it was written
  std::size_t step = 0;
};

// Replays the classic side of a case.
class Model {
 public:
  explicit Model(const Case& c) : c_(c) {}

  void apply(std::size_t index, const Step& step, oracle::StepExpectation& e) {
    const std::string_view op = step.op;
    if (op == ops::kEnable) {
      if (!step_provider(step).empty()) enable(step, e);
    } else if (op == ops::kDisable) {
      if (!step_provider(step).empty()) {
        disable(key(step_provider(step)), step_session(step), e, "disable");
      }
    } else if (op == ops::kStop) {
      for (auto& [guid, sessions] : enablers_) {
        if (std::count(sessions.begin(), sessions.end(), step_session(step))) {
          disable(guid, step_session(step), e, "stop of " + step_session(step));
        }
      }
    } else if (op == ops::kConsume) {
      consumers_[step_body<ConsumeStep>(step).consumer] = {step_session(step), index};
    } else if (op == ops::kRegisterClassic) {
      register_classic(step, e);
    } else if (op == ops::kUnregisterClassic) {
      registered_.erase(step_provider(step));
      set_status(step, e, 0, "");
    } else if (op == ops::kTraceEvent) {
      trace_event(index, step, e);
    } else if (op == ops::kTraceMessage) {
      trace_message(index, step, e);
    } else if (op == ops::kCollect) {
      collect(e);
    }
  }

 private:
  struct Settings {
    std::uint8_t level = 0;
    std::uint32_t flags = 0;
  };

  std::string key(const std::string& provider) const {
    return format_guid(c_.providers.at(provider).guid);
  }

  bool named(const char* rule) const {
    return std::find(c_.rules.begin(), c_.rules.end(), rule) != c_.rules.end();
  }

  // A check that judges two rules at once (a MOF event's Opcode is both DESC-MOF-OPCODE and
  // HDR-FLAGS; a WPP write both CON-WPP and SES-CLASSIC-ONE) is blamed on the one the case is
  // about, the other when it names neither.
  std::string rule_or(const char* preferred, const char* fallback) const {
    return named(preferred) ? preferred : fallback;
  }

  std::vector<std::string> classic_listeners(const std::string& guid) const {
    std::vector<std::string> out;
    for (const std::string& label : registered_) {
      if (key(label) == guid) out.push_back(label);
    }
    return out;
  }

  std::string owner(const std::string& guid) const {
    auto it = enablers_.find(guid);
    return it == enablers_.end() || it->second.empty() ? std::string() : it->second.back();
  }

  void set_status(const Step& step, oracle::StepExpectation& e, std::uint32_t status,
                  const std::string& rule, bool nonzero = false) {
    if (step.expect_status) return;  // The scenario's own expectation stands.
    e.status_nonzero = nonzero;
    e.status = nonzero ? std::nullopt : std::optional<std::uint32_t>(status);
    e.status_rule = rule;
  }

  void enable(const Step& step, oracle::StepExpectation& e) {
    const ControlStep& call = step_body<ControlStep>(step);
    const std::string guid = key(call.provider);
    std::vector<std::string>& sessions = enablers_[guid];
    const std::vector<std::string> listeners = classic_listeners(guid);
    const bool takeover = !sessions.empty() && sessions.back() != call.session;
    if (!listeners.empty()) {
      sessions.clear();  // SES-CLASSIC-ONE: the new session takes the provider over.
    } else {
      std::erase(sessions, call.session);
    }
    sessions.push_back(call.session);
    Settings s{call.level, static_cast<std::uint32_t>(call.match_any)};
    settings_[guid + "\n" + call.session] = s;
    for (const std::string& label : listeners) {
      e.classic.callbacks.push_back({label, kWmiEnableEvents, s.level, s.flags, call.session,
                                     "enable by " + call.session, takeover});
    }
  }

  void disable(const std::string& guid, const std::string& session, oracle::StepExpectation& e,
               const std::string& cause) {
    std::vector<std::string>& sessions = enablers_[guid];
    const bool was_owner = !sessions.empty() && sessions.back() == session;
    std::erase(sessions, session);
    if (!was_owner || !sessions.empty()) return;
    for (const std::string& label : classic_listeners(guid)) {
      e.classic.callbacks.push_back({label, kWmiDisableEvents, 0, 0, session, cause});
    }
  }

  void register_classic(const Step& step, oracle::StepExpectation& e) {
    const ClassicStep& cs = step_body<ClassicStep>(step);
    registered_.insert(cs.provider);
    set_status(step, e, 0, "");
    const std::string guid = key(cs.provider);
    const std::string by = owner(guid);
    if (by.empty()) return;
    const Settings s = settings_[guid + "\n" + by];
    e.classic.callbacks.push_back({cs.provider, kWmiEnableEvents, s.level, s.flags, by,
                                   "registration while " + by + " enables it"});
  }

  std::uint32_t buffer_bytes(const std::string& session) const {
    const json& settings = c_.sessions.at(session).settings;
    // The agent starts sessions with BufferSize 64 KB unless the scenario says otherwise.
    return static_cast<std::uint32_t>(settings.value("buffer_size_kb", 64u)) * 1024u;
  }

  // A write step's events take their sequence numbers whether or not they reach a session.
  std::uint64_t take_sequence(const json& r, oracle::StepExpectation& e) {
    const std::uint64_t count = r.value("count", std::uint64_t{1});
    e.classic.first_seq = next_seq_;
    next_seq_ += count;
    return count;
  }

  static Event step_event(const ClassicStep& cs, const std::string& by, std::size_t index) {
    Event ev;
    ev.provider = cs.provider;
    ev.owner = by;
    ev.step = index;
    return ev;
  }

  // `count` copies of `ev`, numbered from the step's first sequence number.
  void add_events(Event ev, std::uint64_t count, const oracle::StepExpectation& e) {
    for (std::uint64_t i = 0; i < count; ++i) {
      ev.seq = e.classic.first_seq + i;
      events_.push_back(ev);
    }
  }

  void trace_event(std::size_t index, const Step& step, oracle::StepExpectation& e) {
    const ClassicStep& cs = step_body<ClassicStep>(step);
    const json& r = cs.request;
    const std::uint64_t count = take_sequence(r, e);
    const std::string guid = key(cs.provider);
    const std::string by = registered_.count(cs.provider) ? owner(guid) : std::string();
    const std::uint8_t level = r.value("level", std::uint8_t{0});
    const bool only_enabled = r.value("only_enabled", false);
    if (r.contains("flags") &&
        (parse_hex(r["flags"].get<std::string>()).value_or(0) & kTracedGuid) == 0) {
      set_status(step, e, kErrorInvalidFlagNumber, rules::kHdrFlags);
      return;
    }
    if (by.empty()) {
      if (only_enabled) {
        e.classic.skipped = count;
        set_status(step, e, 0, rules::kHdrClassicLevel);
      } else {
        set_status(step, e, 0, rules::kSesClassicOne, true);
      }
      return;
    }
    const Settings s = settings_[guid + "\n" + by];
    // HDR-CLASSIC-LEVEL: the provider writes what its level includes (it reads it with
    // GetTraceEnableLevel; a higher level includes the lower ones).
    if (only_enabled && level != 0 && level > s.level) {
      e.classic.skipped = count;
      set_status(step, e, 0, rules::kHdrClassicLevel);
      return;
    }
    std::vector<std::uint8_t> payload;
    if (r.contains("payload")) payload = *hex_to_bytes(r["payload"].get<std::string>());
    const std::uint32_t natural =
        kHeaderSize + (r.contains("mof_fields") ? r["mof_fields"].get<std::uint32_t>() * 16
                                                : 8 + static_cast<std::uint32_t>(payload.size()));
    const std::uint32_t size = r.value("size", natural);
    if (size < kHeaderSize || size >= buffer_bytes(by) - kBufferOverhead) {
      set_status(step, e, 0, rules::kHdrSize, true);
      return;
    }
    if (r.contains("mof_fields") && r["mof_fields"].get<std::uint32_t>() > kMaxMofFields) {
      set_status(step, e, 0, rules::kHdrFlags, true);
      return;
    }
    set_status(step, e, 0, rules::kHdrFlags);
    if (!r.contains("mof_fields") && size > natural)
      payload.resize(payload.size() + size - natural);
    Event ev = step_event(cs, by, index);
    ev.def.opcode = r.value("type", std::uint8_t{0});
    ev.def.level = level;
    ev.def.version = r.value("version", std::uint8_t{0});
    ev.def.payload = std::move(payload);
    ev.flags = kFlagClassicHeader;
    ev.flags_rule = rule_or(rules::kDescMofOpcode, rules::kHdrFlags);
    add_events(std::move(ev), count, e);
  }

  void trace_message(std::size_t index, const Step& step, oracle::StepExpectation& e) {
    const ClassicStep& cs = step_body<ClassicStep>(step);
    const json& r = cs.request;
    const std::uint64_t count = take_sequence(r, e);
    const std::string by = registered_.count(cs.provider) ? owner(key(cs.provider)) : std::string();
    if (by.empty()) {
      set_status(step, e, 0, rule_or(rules::kConWpp, rules::kSesClassicOne), true);
      return;
    }
    set_status(step, e, 0, rule_or(rules::kConWpp, rules::kSesClassicOne));
    std::vector<std::uint8_t> payload;
    if (r.contains("payload")) payload = *hex_to_bytes(r["payload"].get<std::string>());
    Event ev = step_event(cs, by, index);
    ev.def.id = r.value("number", std::uint16_t{0});
    ev.def.payload = std::move(payload);
    ev.flags = kFlagTraceMessage;
    ev.flags_rule = rules::kConWpp;
    add_events(std::move(ev), count, e);
  }

  void collect(oracle::StepExpectation& e) {
    for (oracle::ConsumerExpectation& consumer : e.consumers) {
      auto it = consumers_.find(consumer.consumer);
      if (it == consumers_.end()) continue;
      const auto& [session, attached] = it->second;
      for (const Event& ev : events_) {
        if (ev.step < attached) continue;  // Not judged: written before it attached.
        if (ev.owner == session) {
          oracle::ExpectedEvent x;
          x.seq = ev.seq;
          x.provider = ev.provider;
          x.def = ev.def;
          x.flags = ev.flags;
          x.flags_rule = ev.flags_rule;
          x.rule = rule_or(rules::kSesClassicOne, ev.flags_rule.c_str());
          consumer.events.push_back(x);
        } else {
          consumer.excluded[ev.seq] = {rules::kSesClassicOne,
                                       "written through " + ev.owner +
                                           "'s logger while it had the provider, not " + session};
        }
      }
      consumers_.erase(it);  // Judged once, at the collect that ends it.
    }
  }

  const Case& c_;
  std::set<std::string> registered_;
  std::map<std::string, std::vector<std::string>> enablers_;  // GUID -> sessions, owner last
  std::map<std::string, Settings> settings_;                  // "GUID\nsession" -> settings
  std::map<std::string, std::pair<std::string, std::size_t>> consumers_;  // -> session, step
  std::vector<Event> events_;
  std::uint64_t next_seq_ = kFirstSequence;
};

}  // namespace

void expect(const Case& c, std::vector<oracle::StepExpectation>& out) {
  Model model(c);
  for (std::size_t i = 0; i < c.steps.size() && i < out.size(); ++i) {
    model.apply(i, c.steps[i], out[i]);
  }
}

}  // namespace etwh::classic
