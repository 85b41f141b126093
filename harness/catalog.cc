#include "catalog.h"

#include "json_text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace etwh {

std::set<std::string> Catalog::ids() const {
  std::set<std::string> out;
  for (const Rule& r : rules) out.insert(r.id);
  return out;
}

const Rule* Catalog::find(const std::string& id) const {
  auto it = std::find_if(rules.begin(), rules.end(), [&](const Rule& r) { return r.id == id; });
  return it == rules.end() ? nullptr : &*it;
}

Catalog load_catalog(const std::filesystem::path& file) {
  using nlohmann::json;
  const std::string name = file.string();
  std::ifstream in(file, std::ios::binary);
  if (!in) throw CatalogError(name + ": -: cannot open the file");
  std::ostringstream read;
  read << in.rdbuf();
  const std::string text = read.str();
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    throw CatalogError(name + ": byte " + std::to_string(e.byte) + ": " + e.what());
  } catch (const json::out_of_range& e) {  // a number no double holds (1e999)
    throw CatalogError(name + ": byte " + std::to_string(json_error_offset(text) + 1) + ": " +
                       json_error_reason(e));
  }
  auto fail = [&](const std::string& pointer, const std::string& reason) {
    throw CatalogError(name + ": " + pointer + ": " + reason);
  };
  if (!doc.is_object() || !doc.contains("rules") || !doc["rules"].is_array()) {
    fail("/rules", "expected an array of rules");
  }
  static const std::set<std::string> kinds = {"runtime", "provider", "consumer", "lint"};
  Catalog catalog;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < doc["rules"].size(); ++i) {
    const json& r = doc["rules"][i];
    const std::string p = "/rules/" + std::to_string(i);
    for (const char* f : {"id", "text", "citation"}) {
      if (!r.contains(f) || !r[f].is_string() || r[f].get<std::string>().empty()) {
        fail(p + "/" + f, "missing or not a non-empty string");
      }
    }
    Rule rule;
    rule.id = r["id"];
    rule.text = r["text"];
    rule.citation = r["citation"];
    if (!seen.insert(rule.id).second) fail(p + "/id", "duplicate rule ID \"" + rule.id + "\"");
    if (!r.contains("kind")) fail(p + "/kind", "missing");
    if (r["kind"].is_string()) {
      rule.kinds.push_back(r["kind"]);
    } else if (r["kind"].is_array()) {
      for (const json& k : r["kind"]) {
        if (!k.is_string()) fail(p + "/kind", "kinds must be strings");
        rule.kinds.push_back(k);
      }
    }
    if (rule.kinds.empty()) fail(p + "/kind", "a rule needs a kind");
    for (const std::string& k : rule.kinds) {
      if (!kinds.count(k)) fail(p + "/kind", "unknown kind \"" + k + "\"");
    }
    if (r.contains("observed")) {
      if (!r["observed"].is_boolean()) fail(p + "/observed", "expected a boolean");
      rule.observed = r["observed"];
    }
    if (r.contains("severity")) {
      if (!r["severity"].is_string() ||
          (r["severity"] != "warning" && r["severity"] != "failure")) {
        fail(p + "/severity", "expected \"warning\" or \"failure\"");
      }
      if (std::find(rule.kinds.begin(), rule.kinds.end(), "lint") == rule.kinds.end()) {
        fail(p + "/severity", "only lint rules have a severity");
      }
      rule.severity = r["severity"];
    }
    if (r.contains("unsupported")) {
      static const std::set<std::string> platforms = {"etwrt", "wine", "windows"};
      if (!r["unsupported"].is_object()) fail(p + "/unsupported", "expected an object");
      for (const auto& [platform, reason] : r["unsupported"].items()) {
        if (!platforms.count(platform)) {
          fail(p + "/unsupported/" + platform, "unknown platform (etwrt, wine, windows)");
        }
        if (!reason.is_string() || reason.get<std::string>().empty()) {
          fail(p + "/unsupported/" + platform, "the reason must be a non-empty string");
        }
        rule.unsupported[platform] = reason;
      }
    }
    catalog.rules.push_back(std::move(rule));
  }
  return catalog;
}

}  // namespace etwh
