// The data path and consumers family's core registration: each op's name, parser, oracle part and
// body (families/core_families.h), and its parsers.
#include "harness/conformance/families/family_core.h"
#include "harness/conformance/families/data_path/data_path_ops.h"

#include <filesystem>

namespace etwh::family_core {

using scenario_parse::kMaxEventsPerCase;

namespace {

// An event's descriptors with a Type: 1 (event metadata) or 2 (provider metadata). Type 3 (a
// timestamp override) cannot be judged by the oracle (its unit is the session's clock; the
// runtime test covers it).
void parse_typed(CaseParser& cp, const json& v, const std::string& p, EventDef& e) {
  const Reader& r = cp.reader();
  if (!v.is_array()) r.fail(p, "expected an array, got " + json_type_name(v));
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string pi = p + "/" + std::to_string(i);
    r.object(v[i], pi, {"type", "data"});
    TypedData t;
    t.type =
        static_cast<std::uint8_t>(r.integer(r.field(v[i], pi, "type"), pi + "/type", 255, "type"));
    if (t.type != 1 && t.type != 2) {
      r.fail(pi + "/type", "type " + std::to_string(t.type) +
                               " is not 1 (event metadata) or 2 (provider metadata)");
    }
    t.data = r.bytes(r.field(v[i], pi, "data"), pi + "/data");
    e.typed.push_back(std::move(t));
  }
}

void parse_events(CaseParser& cp, const json& v, const std::string& p, WriteStep& s) {
  const Reader& r = cp.reader();
  if (!v.is_array()) r.fail(p, "expected an array, got " + json_type_name(v));
  if (v.empty()) r.fail(p, "a write step needs at least one event");
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string pi = p + "/" + std::to_string(i);
    r.object(v[i], pi,
             {"id", "version", "channel", "level", "opcode", "task", "keyword", "count", "payload",
              "descriptors"});
    EventDef e;
    auto num = [&](const char* k, std::uint64_t max) -> std::uint64_t {
      return v[i].contains(k) ? r.integer(v[i][k], pi + "/" + k, max, k) : 0;
    };
    e.id = static_cast<std::uint16_t>(num("id", 0xFFFF));
    e.version = static_cast<std::uint8_t>(num("version", 255));
    e.channel = static_cast<std::uint8_t>(num("channel", 255));
    e.level = static_cast<std::uint8_t>(num("level", 255));
    e.opcode = static_cast<std::uint8_t>(num("opcode", 255));
    e.task = static_cast<std::uint16_t>(num("task", 0xFFFF));
    if (v[i].contains("keyword")) e.keyword = r.hex64(v[i]["keyword"], pi + "/keyword", "keyword");
    if (v[i].contains("count")) {
      e.count =
          static_cast<std::uint32_t>(r.integer(v[i]["count"], pi + "/count", 1000000, "count"));
      if (e.count == 0) r.fail(pi + "/count", "count must be at least 1");
    }
    if (v[i].contains("payload")) e.payload = r.bytes(v[i]["payload"], pi + "/payload");
    if (v[i].contains("descriptors")) parse_typed(cp, v[i]["descriptors"], pi + "/descriptors", e);
    total += e.count;
    s.events.push_back(std::move(e));
  }
  if (total > 1000000) r.fail(p, "more than 1000000 events in one write step");
  if (cp.add_case_events(total) > kMaxEventsPerCase) {
    r.fail(p, "more than " + std::to_string(kMaxEventsPerCase) + " events in one case");
  }
}

void parse_data_step(CaseParser& cp, const json& v, const std::string& p, Step& s, const Case& c) {
  const Reader& r = cp.reader();
  if (s.op == ops::kCollect) {
    r.object(v, p, {"op"});
    s.body = CollectStep{};
    return;
  }
  r.object(v, p, {"op", "provider", "events", "lossy", "use_descriptor_type", "expect"});
  WriteStep w;
  w.provider = cp.ref(v, p, "provider", c);
  if (v.contains("use_descriptor_type")) {
    w.use_descriptor_type = r.boolean(v["use_descriptor_type"], p + "/use_descriptor_type");
  }
  parse_events(cp, r.field(v, p, "events"), p + "/events", w);
  if (v.contains("lossy")) w.lossy = r.boolean(v["lossy"], p + "/lossy");
  s.body = std::move(w);
}

void parse_consume(CaseParser& cp, const json& v, const std::string& p, Step& step, const Case& c) {
  const Reader& r = cp.reader();
  r.object(v, p,
           {"op", "consumer", "session", "agent", "mode", "context", "delay_us", "manifest",
            "overwrite_logfile"});
  ConsumeStep& s = step.body.emplace<ConsumeStep>();
  s.consumer = r.label(r.field(v, p, "consumer"), p + "/consumer");
  if (!cp.new_consumer(c, s.consumer)) {
    r.fail(p + "/consumer", "consumer label \"" + s.consumer + "\" is used twice in the case");
  }
  s.session = cp.ref(v, p, "session", c);
  s.agent = cp.ref(v, p, "agent", c);
  if (v.contains("mode")) {
    const std::string mode = r.string(v["mode"], p + "/mode");
    if (mode != "event_record" && mode != "event_trace") {
      r.fail(p + "/mode", "mode \"" + mode + "\" is neither \"event_record\" nor \"event_trace\"");
    }
    s.event_record_mode = mode == "event_record";
  }
  if (v.contains("context")) s.context = r.hex64(v["context"], p + "/context", "context");
  if (v.contains("overwrite_logfile")) {
    s.overwrite_logfile = r.boolean(v["overwrite_logfile"], p + "/overwrite_logfile");
  }
  if (v.contains("delay_us")) {
    s.delay_us =
        static_cast<std::uint32_t>(r.integer(v["delay_us"], p + "/delay_us", 1000000, "delay_us"));
  }
  if (v.contains("manifest")) {  // relative to the scenario file, which must exist
    const std::filesystem::path rel = r.string(v["manifest"], p + "/manifest");
    const std::filesystem::path path =
        std::filesystem::absolute(std::filesystem::path(cp.file()).parent_path() / rel);
    if (!std::filesystem::is_regular_file(path)) {
      r.fail(p + "/manifest", "manifest file " + path.string() + " does not exist");
    }
    s.manifest = path.string();
  }
}

// last_error: `api` (OpenTrace, GetTraceLoggerHandle, GetTraceEnableLevel or
// GetTraceEnableFlags) called in `agent`.
void parse_last_error(CaseParser& cp, const json& v, const std::string& p, Step& step,
                      const Case& c) {
  const Reader& r = cp.reader();
  r.object(v, p, {"op", "api", "agent", "expect"});
  LastErrorStep& s = step.body.emplace<LastErrorStep>();
  s.api = r.string(r.field(v, p, "api"), p + "/api");
  if (s.api != "OpenTrace" && s.api != "GetTraceLoggerHandle" && s.api != "GetTraceEnableLevel" &&
      s.api != "GetTraceEnableFlags") {
    r.fail(p + "/api", "api \"" + s.api +
                           "\" is none of \"OpenTrace\", \"GetTraceLoggerHandle\", "
                           "\"GetTraceEnableLevel\", \"GetTraceEnableFlags\"");
  }
  s.agent = cp.ref(v, p, "agent", c);
}

}  // namespace

std::vector<CoreOp> data_path_core_ops() {
  return {
      core_op<ConsumeStep>(ops::kConsume, parse_consume, model_part<&Model::consume>),
      core_op<WriteStep>(ops::kWrite, parse_data_step, model_part<&Model::write>),
      core_op<CollectStep>(ops::kCollect, parse_data_step, model_part<&Model::collect>),
      core_op<LastErrorStep>(ops::kLastError, parse_last_error, model_part<&Model::last_error>),
  };
}

}  // namespace etwh::family_core
