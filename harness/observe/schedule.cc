#include "harness/observe/schedule.h"

#include "harness/model/input_error.h"
#include "harness/model/json_text.h"
#include "harness/model/named_values.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>
#include <set>

namespace etwh::observe {
namespace {

using nlohmann::json;

void only_keys(const json& object, const std::set<std::string>& known, const std::string& at,
               const std::string& file) {
  for (const auto& [key, value] : object.items()) {
    if (!known.count(key)) throw InputError(file, at + "/" + key, "unknown field \"" + key + "\"");
  }
}

std::uint64_t unsigned_field(const json& object, const char* key, std::uint64_t max,
                             std::uint64_t fallback, const std::string& at,
                             const std::string& file) {
  if (!object.contains(key)) return fallback;
  const json& v = object[key];
  if (!v.is_number_unsigned() || v.get<std::uint64_t>() > max) {
    throw InputError(file, at + "/" + key,
                     "must be an integer from 0 to " + std::to_string(max) + ", not " + v.dump());
  }
  return v.get<std::uint64_t>();
}

EventIdFilter parse_event_ids(const json& f, const std::string& at, const std::string& file) {
  if (!f.is_object()) throw InputError(file, at, "event_ids must be an object");
  only_keys(f, {"filter_in", "ids"}, at, file);
  EventIdFilter filter;
  if (f.contains("filter_in")) {
    if (!f["filter_in"].is_boolean())
      throw InputError(file, at + "/filter_in", "filter_in must be true or false");
    filter.filter_in = f["filter_in"].get<bool>();
  }
  if (!f.contains("ids") || !f["ids"].is_array() || f["ids"].empty() || f["ids"].size() > 64) {
    throw InputError(file, at + "/ids",
                     "ids must be an array of 1 to 64 event IDs (MAX_EVENT_FILTER_EVENT_ID_COUNT)");
  }
  for (std::size_t i = 0; i < f["ids"].size(); ++i) {
    const json& id = f["ids"][i];
    if (!id.is_number_unsigned() || id.get<std::uint64_t>() > 65535) {
      throw InputError(file, at + "/ids/" + std::to_string(i),
                       "an event ID is an integer from 0 to 65535, not " + id.dump());
    }
    filter.ids.push_back(static_cast<std::uint16_t>(id.get<std::uint64_t>()));
  }
  return filter;
}

constexpr NamedValue<ActionOp> kActionOps[] = {{"enable", ActionOp::kEnable},
                                               {"disable", ActionOp::kDisable},
                                               {"capture_state", ActionOp::kCaptureState}};

Action parse_action(const json& a, const std::string& at, const std::string& file) {
  if (!a.is_object()) throw InputError(file, at, "an action must be an object");
  only_keys(a, {"op", "session", "level", "match_any", "match_all", "event_ids"}, at, file);
  Action action;
  const std::optional<ActionOp> op = value_named(a.value("op", ""), kActionOps);
  if (!op) throw InputError(file, at + "/op", "op must be " + names_listed(kActionOps));
  action.op = *op;
  action.session = unsigned_field(a, "session", kMaxSessions - 1, 0, at, file);
  action.level = static_cast<std::uint8_t>(unsigned_field(a, "level", 255, 0, at, file));
  action.match_any = unsigned_field(a, "match_any", UINT64_MAX, 0, at, file);
  action.match_all = unsigned_field(a, "match_all", UINT64_MAX, 0, at, file);
  if (a.contains("event_ids"))
    action.event_ids = parse_event_ids(a["event_ids"], at + "/event_ids", file);
  if (action.op != ActionOp::kEnable) {
    for (const char* key : {"level", "match_any", "match_all", "event_ids"}) {
      if (a.contains(key))
        throw InputError(file, at + "/" + key, "only an enable has " + std::string(key));
    }
  }
  return action;
}

Schedule parse_root(const json& root, const std::string& file) {
  if (!root.is_object()) throw InputError(file, "", "a schedule is a JSON object");
  only_keys(root, {"$schema", "description", "step_ms", "callback_limit_ms", "steps"}, "", file);
  Schedule s;
  s.step_ms = static_cast<std::uint32_t>(unsigned_field(root, "step_ms", 60000, 150, "", file));
  s.callback_limit_ms =
      static_cast<std::uint32_t>(unsigned_field(root, "callback_limit_ms", 60000, 100, "", file));
  if (s.step_ms < 10) throw InputError(file, "/step_ms", "must be at least 10");
  if (!root.contains("steps") || !root["steps"].is_array() || root["steps"].empty()) {
    throw InputError(file, "/steps", "steps must be a non-empty array");
  }
  for (std::size_t i = 0; i < root["steps"].size(); ++i) {
    const json& st = root["steps"][i];
    const std::string at = "/steps/" + std::to_string(i);
    if (!st.is_object()) throw InputError(file, at, "a step must be an object");
    only_keys(st, {"name", "actions"}, at, file);
    if (!st.contains("name") || !st["name"].is_string() || st["name"].get<std::string>().empty()) {
      throw InputError(file, at + "/name", "a step needs a name");
    }
    if (!st.contains("actions") || !st["actions"].is_array() || st["actions"].empty()) {
      throw InputError(file, at + "/actions", "actions must be a non-empty array");
    }
    Step step{st["name"].get<std::string>(), {}};
    for (std::size_t k = 0; k < st["actions"].size(); ++k) {
      step.actions.push_back(
          parse_action(st["actions"][k], at + "/actions/" + std::to_string(k), file));
      s.sessions = std::max(s.sessions, step.actions.back().session + 1);
    }
    s.steps.push_back(std::move(step));
  }
  return s;
}

}  // namespace

bool EventIdFilter::excludes(std::uint16_t id) const {
  const bool listed = std::find(ids.begin(), ids.end(), id) != ids.end();
  return filter_in ? !listed : listed;
}

std::optional<std::size_t> first_step_disabling_all(const Schedule& schedule) {
  std::set<std::size_t> enabled;
  for (std::size_t i = 0; i < schedule.steps.size(); ++i) {
    const bool before = !enabled.empty();
    for (const Action& a : schedule.steps[i].actions) {
      if (a.op == ActionOp::kEnable) enabled.insert(a.session);
      if (a.op == ActionOp::kDisable) enabled.erase(a.session);
    }
    if (before && enabled.empty()) return i;
  }
  return std::nullopt;
}

Schedule parse_schedule(const std::string& text, const std::string& file) {
  const json root = parse_input_json(text, file);
  try {
    return parse_root(root, file);
  } catch (const InputError& e) {
    throw e.located_in(text);
  }
}

Schedule load_schedule(const std::filesystem::path& file) {
  return parse_schedule(read_input_file(file), file.string());
}

}  // namespace etwh::observe
