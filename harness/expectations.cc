#include "expectations.h"

#include "json_text.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace etwh {

Expectations load_expectations(const std::filesystem::path& file,
                               const std::set<std::string>& known_cases) {
  using nlohmann::json;
  const std::string name = file.string();
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ExpectationsError(name + ": -: cannot open the file");
  std::ostringstream read;
  read << in.rdbuf();
  const std::string text = read.str();
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    throw ExpectationsError(name + ": byte " + std::to_string(e.byte) + ": JSON syntax error");
  } catch (const json::out_of_range& e) {  // a number no double holds (1e999)
    throw ExpectationsError(name + ": byte " + std::to_string(json_error_offset(text) + 1) +
                            ": " + json_error_reason(e));
  }
  auto fail = [&](const std::string& pointer, const std::string& reason) {
    throw ExpectationsError(name + ": " + pointer + ": " + reason);
  };
  if (!doc.is_object()) fail("/", "expected an object of case id -> {status, reason}");
  Expectations out;
  for (const auto& [id, entry] : doc.items()) {
    const std::string p = "/" + id;
    if (!known_cases.empty() && !known_cases.count(id)) fail(p, "unknown case id \"" + id + "\"");
    if (!entry.is_object()) fail(p, "expected an object {status, reason}");
    for (const auto& [k, v] : entry.items()) {
      if (k != "status" && k != "reason") fail(p + "/" + k, "unknown field \"" + k + "\"");
      if (!v.is_string()) fail(p + "/" + k, "expected a string");
    }
    if (!entry.contains("status")) fail(p, "missing field \"status\"");
    if (!entry.contains("reason")) fail(p, "missing field \"reason\"");
    auto status = parse_status(entry["status"].get<std::string>());
    // XFAIL and XPASS are verdicts, not expectations.
    if (!status || *status == Status::kXFail || *status == Status::kXPass) {
      fail(p + "/status", "status \"" + entry["status"].get<std::string>() +
                              "\" is not one of PASS, FAIL, UNSUPPORTED, TIMEOUT, CRASH, "
                              "HARNESS_ERROR");
    }
    out[id] = Expectation{*status, entry["reason"].get<std::string>()};
  }
  return out;
}

std::pair<Status, bool> classify(Status actual, const Expectations& expectations,
                                 const std::string& case_id) {
  auto it = expectations.find(case_id);
  const Status expected = it == expectations.end() ? Status::kPass : it->second.status;
  if (expected == Status::kFail) {
    if (actual == Status::kFail) return {Status::kXFail, true};
    if (actual == Status::kPass) return {Status::kXPass, false};
  }
  return {actual, actual == expected};
}

}  // namespace etwh
