#include "harness/model/catalog.h"

#include "harness/model/json_text.h"

#include <nlohmann/json.hpp>

#include <algorithm>

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

namespace {

// The one version this loader reads (catalog/rules.json): another is refused, never guessed.
void check_catalog_version(const nlohmann::json& doc, const std::string& name) {
  const auto it = doc.is_object() ? doc.find("schema_version") : doc.end();
  if (doc.is_object() && it == doc.end()) {
    throw InputError(name, "", "missing field \"schema_version\" (1)");
  }
  if (doc.is_object() && !(it->is_number_integer() && it->get<std::int64_t>() == 1)) {
    throw InputError(name, "/schema_version", "unsupported schema_version " + it->dump() + " (1)");
  }
}

Catalog parse_catalog(const nlohmann::json& doc, const std::string& name) {
  using nlohmann::json;
  auto fail = [&](const std::string& pointer, const std::string& reason) {
    throw InputError(name, pointer, reason);
  };
  check_catalog_version(doc, name);
  if (!doc.is_object() || !doc.contains("rules") || !doc["rules"].is_array()) {
    fail("/rules", "expected an array of rules");
  }
  static const std::set<std::string> kinds = {"runtime", "provider", "consumer", "lint"};
  Catalog catalog;
  if (!doc.contains("platforms") || !doc["platforms"].is_object() || doc["platforms"].empty()) {
    fail("/platforms", "expected an object of platform name -> description");
  }
  for (const auto& [platform, text] : doc["platforms"].items()) {
    if (!text.is_string() || text.get<std::string>().empty()) {
      fail("/platforms/" + platform, "the description must be a non-empty string");
    }
    catalog.platforms[platform] = text;
  }
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
      if (!r["unsupported"].is_object()) fail(p + "/unsupported", "expected an object");
      for (const auto& [platform, reason] : r["unsupported"].items()) {
        if (!catalog.platforms.count(platform)) {
          fail(p + "/unsupported/" + platform, "unknown platform (not in /platforms)");
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

}  // namespace

Catalog load_catalog(const std::filesystem::path& file) {
  return load_catalog_text(read_input_file(file), file.string());
}

Catalog load_catalog_text(const std::string& text, const std::string& name) {
  const nlohmann::json doc = parse_input_json(text, name);
  try {
    return parse_catalog(doc, name);
  } catch (const InputError& e) {
    throw e.located_in(text);
  }
}

}  // namespace etwh
