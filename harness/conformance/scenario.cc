#include "harness/conformance/scenario.h"
#include "harness/conformance/scenario_parser.h"

#include "harness/conformance/families/core_families.h"
#include "harness/model/json_text.h"
#include "harness/conformance/families/data_path/data_path_ops.h"
#include "harness/conformance/families/providers/providers_ops.h"

#include "win32_text.h"

#include <evntrace.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace etwh {

const std::string& step_provider(const Step& step) { return step.body.provider(); }

const std::string& step_session(const Step& step) { return step.body.session(); }

namespace scenario_parse {

std::string pointer_token(const std::string& key) {
  std::string out;
  for (char ch : key) {
    if (ch == '~')
      out += "~0";
    else if (ch == '/')
      out += "~1";
    else
      out += ch;
  }
  return out;
}

Case CaseParser::parse(const json& v, const std::string& p) {
  r_.object(
      v, p,
      {"id", "rules", "description", "agents", "providers", "sessions", "steps", "expect_lint"});
  Case c;
  c.file = file_;
  c.pointer = p;
  case_events_ = 0;
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
  check_writes_registered(c);
  return c;
}

Step CaseParser::parse_step(const json& v, const std::string& p, const Case& c) {
  if (!v.is_object()) r_.fail(p, "expected an object, got " + json_type_name(v));
  Step s;
  s.pointer = p;
  const std::string op = r_.string(r_.field(v, p, "op"), p + "/op");
  const CoreOp* registered = find_core_op(op);
  if (registered == nullptr) r_.fail(p + "/op", "unknown op \"" + op + "\"");
  s.op = registered->name;  // the registration's, which outlives the JSON
  registered->parse(*this, v, p, s, c);
  if (v.contains("via")) s.via = ref(v, p, "via", c);
  if (v.contains("expect")) parse_expect(v["expect"], p + "/expect", s);
  return s;
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

// A write needs its provider's registration handle: one written before its register step (or
// after its unregister step) cannot run at all.
void CaseParser::check_writes_registered(const Case& c) {
  std::map<std::string, std::string> unregistered_at;  // provider -> unregister step pointer
  std::set<std::string> registered;
  for (const Step& step : c.steps) {
    if (const auto* ps = step.body.get_if<ProviderStep>()) {
      if (step.op == ops::kRegister) {
        registered.insert(ps->provider);
        unregistered_at.erase(ps->provider);
      } else if (registered.erase(ps->provider) > 0) {
        unregistered_at[ps->provider] = step.pointer;
      }
    }
    const auto* w = step.body.get_if<WriteStep>();
    if (w == nullptr || registered.count(w->provider)) continue;
    const auto gone = unregistered_at.find(w->provider);
    r_.fail(
        step.pointer + "/provider",
        "provider \"" + w->provider + "\" is written " +
            (gone == unregistered_at.end() ? "before any register step of it"
                                           : "after its unregister step (" + gone->second + ")") +
            ": a write needs a registered provider (add a register step before it)");
  }
}

void CaseParser::parse_rules(const json& v, const std::string& p, Case& c) {
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
void CaseParser::parse_expect_lint(const json& v, const std::string& p, Case& c) {
  if (!v.is_array()) r_.fail(p, "expected an array, got " + json_type_name(v));
  c.expect_lint.emplace();
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string pi = p + "/" + std::to_string(i);
    std::string id = r_.string(v[i], pi);
    if (!known_rules_.count(id)) r_.fail(pi, "unknown rule ID \"" + id + "\"");
    c.expect_lint->push_back(id);
  }
}

void CaseParser::parse_agents(const json& v, const std::string& p, Case& c) {
  if (!v.is_object()) r_.fail(p, "expected an object, got " + json_type_name(v));
  for (const auto& [label, def] : v.items()) {
    const std::string pa = p + "/" + pointer_token(label);
    r_.object(def, pa, {"subject"});
    c.agents.push_back(label);
    if (def.contains("subject") && r_.boolean(def["subject"], pa + "/subject")) {
      c.subject_agents.insert(label);
    }
  }
  if (c.agents.empty()) r_.fail(p, "a case needs at least one agent");
  if (c.agents.size() > kMaxAgentsPerCase) {
    r_.fail(p, std::to_string(c.agents.size()) + " agents, more than the " +
                   std::to_string(kMaxAgentsPerCase) + " a case may have");
  }
}

bool CaseParser::has_agent(const Case& c, const std::string& a) const {
  return std::find(c.agents.begin(), c.agents.end(), a) != c.agents.end();
}

void CaseParser::parse_providers(const json& v, const std::string& p, Case& c) {
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

void CaseParser::parse_sessions(const json& v, const std::string& p, Case& c) {
  if (!v.is_object()) r_.fail(p, "expected an object, got " + json_type_name(v));
  if (v.size() > kMaxSessionsPerCase) {
    r_.fail(p, std::to_string(v.size()) + " sessions, more than the " +
                   std::to_string(kMaxSessionsPerCase) + " a case may have");
  }
  for (const auto& [label, def] : v.items()) {
    const std::string ps = p + "/" + pointer_token(label);
    r_.object(def, ps,
              {"buffer_size_kb", "minimum_buffers", "maximum_buffers", "flush_timer",
               "log_file_mode", "maximum_file_size", "log_file", "client_context"});
    SessionDef s;
    s.label = label;
    for (const auto& [k, val] : def.items()) {
      if (k == "log_file") {
        s.log_file = r_.string(val, ps + "/log_file");
        // A plain name: the driver puts it in the run's temporary folder. One "%d" may stand for
        // a NEWFILE session's file number; no other '%'.
        std::string plain = s.log_file;
        if (const auto at = plain.find("%d"); at != std::string::npos) plain.erase(at, 2);
        if (s.log_file.empty() || plain.find_first_of("/\\:%") != std::string::npos) {
          r_.fail(ps + "/log_file",
                  "expected a file name without a folder or a '%' other than one %d, got \"" +
                      s.log_file + "\"");
        }
        continue;
      }
      s.settings[k] = r_.integer(val, ps + "/" + k, 0xFFFFFFFFu, k.c_str());
      // Wnode.ClientContext, the session's clock (WNODE_HEADER): 0 or 1 QPC, 2 system time,
      // 3 CPU cycle counter.
      if (k == "client_context" && s.settings[k].get<std::uint64_t>() > 3) {
        r_.fail(ps + "/" + k, "client_context " + s.settings[k].dump() +
                                  " is not a clock (0 or 1 QPC, 2 system time, 3 CPU cycles)");
      }
    }
    c.sessions[label] = s;
  }
}

// A provider under test: the user's code registers it (context and callback are theirs). Its
// GUID is the subject's; the case's `guid`, if any, only keys it in the oracle.
void CaseParser::parse_subject_provider(const json& def, const std::string& pp, Case& c,
                                        ProviderDef& d) {
  r_.object(def, pp, {"agent", "guid", "callback_budget_ms"});
  for (const auto& [label, other] : c.providers) {
    if (other.agent == d.agent) {
      r_.fail(pp + "/agent", "subject agent \"" + d.agent + "\" already hosts provider \"" + label +
                                 "\" (one provider under test per subject agent)");
    }
  }
  d.subject = true;
  if (def.contains("guid")) {
    d.guid = r_.guid(def["guid"], pp + "/guid");
  } else {
    // {5ab1ec70-0000-4000-8000-0000000000NN}: a stand-in unique in the case.
    d.guid = GUID{0x5ab1ec70,
                  0,
                  0x4000,
                  {0x80, 0, 0, 0, 0, 0, 0, static_cast<unsigned char>(c.providers.size())}};
  }
  if (def.contains("callback_budget_ms")) {
    d.callback_budget_ms = static_cast<std::uint32_t>(r_.integer(
        def["callback_budget_ms"], pp + "/callback_budget_ms", 60000, "callback_budget_ms"));
  }
  c.providers[d.label] = d;
}

std::string CaseParser::ref(const json& step, const std::string& p, const char* name,
                            const Case& c) {
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

}  // namespace scenario_parse

using nlohmann::json;
using scenario_parse::CaseParser;
using scenario_parse::Reader;

namespace {
std::vector<Case> parse_cases(const json& doc, const std::string& file,
                              const std::set<std::string>& known_rules);
}  // namespace

std::vector<Case> load_scenario_text(const std::string& text, const std::string& file,
                                     const std::set<std::string>& known_rules) {
  const json doc = parse_input_json(text, file);
  try {
    return parse_cases(doc, file, known_rules);
  } catch (const InputError& e) {
    throw e.located_in(text);
  }
}

namespace {

std::vector<Case> parse_cases(const json& doc, const std::string& file,
                              const std::set<std::string>& known_rules) {
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

}  // namespace

std::vector<Case> load_scenario_file(const std::filesystem::path& file,
                                     const std::set<std::string>& known_rules) {
  return load_scenario_text(read_input_file(file), file.string(), known_rules);
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
          throw InputError(c.file, c.pointer + "/id",
                           "duplicate case id \"" + c.id + "\" (first in " + other.file + ")");
        }
      }
      all.push_back(std::move(c));
    }
  }
  return all;
}

}  // namespace etwh
