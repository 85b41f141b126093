#include "harness/model/expectations_update.h"

#include "harness/model/json_text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>

namespace etwh {

namespace {

using nlohmann::json;

// The outcome before expectations: what an entry must say for the case to be as expected.
Status raw_outcome(Status reported) {
  if (reported == Status::kXFail) return Status::kFail;
  if (reported == Status::kXPass) return Status::kPass;
  return reported;
}

const json& field(const json& object, const std::string& pointer, const char* key,
                  const std::string& name) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_string()) {
    throw InputError(name, pointer + "/" + key, "expected a string");
  }
  return object[key];
}

std::vector<ReportedCase> parse_report(const json& doc, const std::string& name,
                                       const std::string& platform) {
  const json version = doc.is_object() ? doc.value("schema_version", json()) : json();
  if (version != 2 && version != 3) {
    throw InputError(name, "/schema_version",
                     "expected an etwh run report of schema_version 2 or 3");
  }
  const std::string ran_on = field(doc.value("run_info", json()), "/run_info", "platform", name);
  if (ran_on != platform) {
    throw InputError(name, "/run_info/platform",
                     "a run on " + ran_on + ", not on --platform " + platform);
  }
  if (!doc.contains("results") || !doc["results"].is_array()) {
    throw InputError(name, "/results", "expected an array");
  }
  std::vector<ReportedCase> out;
  for (std::size_t i = 0; i < doc["results"].size(); ++i) {
    const json& r = doc["results"][i];
    const std::string p = "/results/" + std::to_string(i);
    ReportedCase c;
    c.id = field(r, p, "id", name);
    const std::string status = field(r, p, "status", name);
    const auto parsed = parse_status(status);
    if (!parsed) throw InputError(name, p + "/status", "unknown status \"" + status + "\"");
    c.outcome = raw_outcome(*parsed);
    if (r.contains("file")) c.file = field(r, p, "file", name);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

std::vector<ReportedCase> load_run_report(const std::filesystem::path& report,
                                          const std::string& platform) {
  const std::string name = report.string();
  const std::string text = read_input_file(report);
  try {
    return parse_report(parse_input_json(text, name), name, platform);
  } catch (const InputError& e) {
    throw e.located_in(text);
  }
}

UpdateSummary update_expectations(ExpectationsFile& file, const std::vector<ReportedCase>& cases) {
  UpdateSummary s;
  for (const ReportedCase& c : cases) {
    if (c.outcome == Status::kHarnessError) {
      s.ignored.push_back(c.id);
      continue;
    }
    const std::string file_name = std::filesystem::path(c.file).filename().string();
    const auto d = file.files.find(file_name);
    const Status by_default = d == file.files.end() ? Status::kPass : d->second.status;
    // A PASS against its file's default needs no person's reason.
    const ExpectationEntry fresh{c.outcome,
                                 c.outcome == Status::kPass
                                     ? "passes, unlike the default for " + file_name
                                     : kPlaceholderReason,
                                 ""};
    auto it = file.cases.find(c.id);
    if (it == file.cases.end()) {
      if (c.outcome == by_default) continue;
      file.cases[c.id] = fresh;
      s.added.push_back(c.id);
    } else if (it->second.status == c.outcome) {
      continue;
    } else if (c.outcome == by_default) {
      file.cases.erase(it);
      s.removed.push_back(c.id);
    } else {
      if (c.outcome == Status::kPass) it->second = fresh;
      it->second.status = c.outcome;
      s.changed.push_back(c.id);
    }
  }
  for (auto* list : {&s.added, &s.changed, &s.removed, &s.ignored}) {
    std::sort(list->begin(), list->end());
  }
  return s;
}

}  // namespace etwh
