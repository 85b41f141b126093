#include "harness/model/expectations.h"

#include "harness/model/json_text.h"

#include <nlohmann/json.hpp>

namespace etwh {

namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& name, const std::string& pointer,
                       const std::string& reason) {
  throw InputError(name, pointer, reason);
}

// Escapes a key for a JSON pointer ("~" and "/" in case ids or file names).
std::string pointer_token(const std::string& key) {
  json::json_pointer pointer;
  pointer /= key;
  return pointer.to_string().substr(1);
}

ExpectationEntry parse_entry(const json& entry, const std::string& name, const std::string& p,
                             bool refs_allowed) {
  if (!entry.is_object()) fail(name, p, "expected an object {status, reason or reason_ref}");
  for (const auto& [k, v] : entry.items()) {
    if (k != "status" && k != "reason" && !(refs_allowed && k == "reason_ref")) {
      fail(name, p + "/" + pointer_token(k), "unknown field \"" + k + "\"");
    }
    if (!v.is_string()) fail(name, p + "/" + k, "expected a string, got " + json_type_name(v));
  }
  if (!entry.contains("status")) fail(name, p, "missing field \"status\"");
  const bool has_reason = entry.contains("reason"), has_ref = entry.contains("reason_ref");
  if (!has_reason && !has_ref) {
    fail(
        name, p,
        refs_allowed ? "missing field \"reason\" (or \"reason_ref\")" : "missing field \"reason\"");
  }
  if (has_reason && has_ref) {
    fail(name, p + "/reason_ref", "give \"reason\" or \"reason_ref\", not both");
  }
  const std::string text = entry["status"].get<std::string>();
  auto status = parse_status(text);
  // XFAIL and XPASS are verdicts, not expectations.
  if (!status || *status == Status::kXFail || *status == Status::kXPass) {
    fail(name, p + "/status",
         "status \"" + text +
             "\" is not one of PASS, FAIL, UNSUPPORTED, TIMEOUT, CRASH, "
             "HARNESS_ERROR");
  }
  return {*status, entry.value("reason", ""), entry.value("reason_ref", "")};
}

std::map<std::string, ExpectationEntry> parse_entries(const json& doc, const std::string& name,
                                                      const std::string& p, bool refs_allowed) {
  if (!doc.is_object()) {
    fail(name, p.empty() ? "/" : p, "expected an object, got " + json_type_name(doc));
  }
  std::map<std::string, ExpectationEntry> out;
  for (const auto& [key, entry] : doc.items()) {
    out[key] = parse_entry(entry, name, p + "/" + pointer_token(key), refs_allowed);
  }
  return out;
}

void check_refs(const ExpectationsFile& f, const std::map<std::string, ExpectationEntry>& entries,
                const std::string& name, const std::string& section) {
  for (const auto& [key, e] : entries) {
    if (!e.reason_ref.empty() && !f.reasons.count(e.reason_ref)) {
      fail(name, "/" + section + "/" + pointer_token(key) + "/reason_ref",
           "no reason \"" + e.reason_ref + "\" in /reasons");
    }
  }
}

ExpectationsFile parse_current(const json& doc, const std::string& name) {
  for (const auto& [k, v] : doc.items()) {
    if (k != "schema_version" && k != "reasons" && k != "files" && k != "cases") {
      fail(name, "/" + pointer_token(k), "unknown field \"" + k + "\"");
    }
  }
  if (doc["schema_version"] != 2) fail(name, "/schema_version", "expected 2");
  ExpectationsFile f;
  if (doc.contains("reasons")) {
    const json& reasons = doc["reasons"];
    if (!reasons.is_object()) fail(name, "/reasons", "expected an object of name -> text");
    for (const auto& [key, text] : reasons.items()) {
      if (!text.is_string() || text.get<std::string>().empty()) {
        fail(name, "/reasons/" + pointer_token(key), "expected a non-empty string");
      }
      f.reasons[key] = text.get<std::string>();
    }
  }
  if (doc.contains("files")) f.files = parse_entries(doc["files"], name, "/files", true);
  if (doc.contains("cases")) f.cases = parse_entries(doc["cases"], name, "/cases", true);
  check_refs(f, f.files, name, "files");
  check_refs(f, f.cases, name, "cases");
  return f;
}

ExpectationsFile parse_file(const json& doc, const std::string& name) {
  if (!doc.is_object()) fail(name, "/", "expected an object");
  if (doc.contains("schema_version") && doc["schema_version"].is_number()) {
    return parse_current(doc, name);
  }
  // The first format: case id -> {status, reason}.
  ExpectationsFile f;
  f.format = 1;
  f.cases = parse_entries(doc, name, "", false);
  return f;
}

json entry_json(const ExpectationEntry& e) {
  json out = json::object();
  out["status"] = status_name(e.status);
  if (e.reason_ref.empty()) {
    out["reason"] = e.reason;
  } else {
    out["reason_ref"] = e.reason_ref;
  }
  return out;
}

Expectation resolved(const ExpectationsFile& f, const ExpectationEntry& e) {
  return {e.status, e.reason_ref.empty() ? e.reason : f.reasons.at(e.reason_ref)};
}

}  // namespace

bool reason_is_placeholder(const std::string& reason) { return reason == kPlaceholderReason; }

ExpectationsFile load_expectations_file(const std::filesystem::path& file) {
  const std::string name = file.string();
  const std::string text = read_input_file(file);
  const json doc = parse_input_json(text, name);
  try {
    return parse_file(doc, name);
  } catch (const InputError& e) {
    throw e.located_in(text);
  }
}

std::string expectations_text(const ExpectationsFile& file) {
  // nlohmann::json keeps keys sorted; the sections in their documented order.
  nlohmann::ordered_json doc;
  doc["schema_version"] = 2;
  json reasons = json::object(), files = json::object(), cases = json::object();
  for (const auto& [key, e] : file.files) files[key] = entry_json(e);
  for (const auto& [key, e] : file.cases) cases[key] = entry_json(e);
  for (const auto* entries : {&file.files, &file.cases}) {
    for (const auto& [key, e] : *entries) {
      if (!e.reason_ref.empty()) reasons[e.reason_ref] = file.reasons.at(e.reason_ref);
    }
  }
  doc["reasons"] = reasons;
  doc["files"] = files;
  doc["cases"] = cases;
  return doc.dump(2) + "\n";
}

Expectations load_expectations(const std::filesystem::path& file,
                               const std::set<std::string>& known_cases,
                               const std::vector<CaseFile>& cases) {
  const std::string name = file.string();
  const std::string text = read_input_file(file);
  const json doc = parse_input_json(text, name);
  std::set<std::string> run_files;
  for (const CaseFile& c : cases)
    run_files.insert(std::filesystem::path(c.file).filename().string());
  try {
    const ExpectationsFile f = parse_file(doc, name);
    const std::string section = f.format == 1 ? "/" : "/cases/";
    Expectations out;
    for (const auto& [id, e] : f.cases) {
      if (!known_cases.empty() && !known_cases.count(id)) {
        fail(name, section + pointer_token(id), "unknown case id \"" + id + "\"");
      }
      out[id] = resolved(f, e);
    }
    for (const auto& [file_name, e] : f.files) {
      if (!known_cases.empty() && !cases.empty() && !run_files.count(file_name)) {
        fail(name, "/files/" + pointer_token(file_name),
             "no scenario file \"" + file_name + "\" among the run's");
      }
    }
    for (const CaseFile& c : cases) {
      auto d = f.files.find(std::filesystem::path(c.file).filename().string());
      if (d != f.files.end() && !out.count(c.id)) out[c.id] = resolved(f, d->second);
    }
    return out;
  } catch (const InputError& e) {
    throw e.located_in(text);
  }
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
