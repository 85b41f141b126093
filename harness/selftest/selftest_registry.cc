// `etwh selftest`'s registry (mutants/mutants.json, format in mutants/README.md): loaded and
// checked whole before anything runs.
#include "harness/selftest/selftest.h"

#include "harness/model/json_text.h"
#include "harness/model/named_values.h"

#include <optional>
#include <regex>

namespace etwh::selftest {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr NamedValue<MutantKind> kMutantKinds[] = {{"runtime", MutantKind::kRuntime},
                                                   {"provider", MutantKind::kProvider},
                                                   {"observe", MutantKind::kObserve}};

class RegistryParser {
 public:
  RegistryParser(const std::string& file, const std::set<std::string>& known_rules)
      : file_(file), known_rules_(known_rules) {}

  Registry parse(const json& doc);

 private:
  [[noreturn]] void fail(const std::string& pointer, const std::string& reason) const {
    throw InputError(file_, pointer, reason);
  }
  std::vector<std::string> string_list(const json& m, const std::string& p, const char* f,
                                       bool required) const;
  Mutant parse_mutant(const json& m, const std::string& p);

  const std::string& file_;
  const std::set<std::string>& known_rules_;
  std::set<std::string> names_;
};

std::vector<std::string> RegistryParser::string_list(const json& m, const std::string& p,
                                                     const char* f, bool required) const {
  std::vector<std::string> list;
  if (!m.contains(f)) {
    if (required) fail(p + "/" + f, "missing");
    return list;
  }
  if (!m[f].is_array()) fail(p + "/" + f, "expected an array of strings");
  for (std::size_t j = 0; j < m[f].size(); ++j) {
    if (!m[f][j].is_string() || m[f][j].get<std::string>().empty()) {
      fail(p + "/" + f + "/" + std::to_string(j), "expected a non-empty string");
    }
    list.push_back(m[f][j]);
  }
  if (required && list.empty()) fail(p + "/" + f, "must not be empty");
  return list;
}

Mutant RegistryParser::parse_mutant(const json& m, const std::string& p) {
  static const std::set<std::string> fields = {"name",         "kind",      "description",
                                               "expect_rules", "etwh_args", "scenarios"};
  static const std::regex name_pattern("[a-z0-9]+(-[a-z0-9]+)*");
  if (!m.is_object()) fail(p, "expected an object");
  for (const auto& [key, value] : m.items()) {
    if (!fields.count(key)) fail(p + "/" + key, "unknown field");
  }
  auto string_field = [&](const char* f) {
    if (!m.contains(f) || !m[f].is_string() || m[f].get<std::string>().empty()) {
      fail(p + "/" + f, "missing or not a non-empty string");
    }
    return m[f].get<std::string>();
  };
  Mutant mutant;
  mutant.name = string_field("name");
  if (!std::regex_match(mutant.name, name_pattern)) {
    fail(p + "/name", "\"" + mutant.name + "\" is not of the form [a-z0-9]+(-[a-z0-9]+)*");
  }
  if (!names_.insert(mutant.name).second)
    fail(p + "/name", "duplicate mutant \"" + mutant.name + "\"");
  const std::string kind = string_field("kind");
  if (const std::optional<MutantKind> k = value_named(kind, kMutantKinds)) {
    mutant.kind = *k;
  } else {
    fail(p + "/kind", "unknown kind \"" + kind + "\" (" + names_listed(kMutantKinds) + ")");
  }
  mutant.description = string_field("description");
  mutant.expect_rules = string_list(m, p, "expect_rules", true);
  for (std::size_t j = 0; j < mutant.expect_rules.size(); ++j) {
    if (!known_rules_.count(mutant.expect_rules[j])) {
      fail(p + "/expect_rules/" + std::to_string(j),
           "unknown rule \"" + mutant.expect_rules[j] + "\"");
    }
  }
  mutant.etwh_args = string_list(m, p, "etwh_args", mutant.kind != MutantKind::kRuntime);
  mutant.scenarios = string_list(m, p, "scenarios", false);
  if (mutant.kind == MutantKind::kObserve && m.contains("scenarios"))
    fail(p + "/scenarios", "an observe mutant runs no scenario");
  for (std::size_t j = 0; j < mutant.scenarios.size(); ++j) {
    if (fs::path(mutant.scenarios[j]).is_absolute()) {
      fail(p + "/scenarios/" + std::to_string(j), "must be relative to scenarios/conformance/");
    }
  }
  return mutant;
}

Registry RegistryParser::parse(const json& doc) {
  if (!doc.is_object()) fail("", "expected an object");
  if (doc.value("schema_version", 0) != 1) fail("/schema_version", "expected 1");
  for (const auto& [key, value] : doc.items()) {
    if (key != "schema_version" && key != "mutants" && key != "observe_clean")
      fail("/" + key, "unknown field");
  }
  if (!doc.contains("mutants") || !doc["mutants"].is_array()) {
    fail("/mutants", "expected an array of mutants");
  }
  Registry out;
  for (std::size_t i = 0; i < doc["mutants"].size(); ++i) {
    out.mutants.push_back(parse_mutant(doc["mutants"][i], "/mutants/" + std::to_string(i)));
  }
  out.observe_clean = string_list(doc, "", "observe_clean", false);
  const bool any_observe = std::any_of(out.mutants.begin(), out.mutants.end(), [](const Mutant& m) {
    return m.kind == MutantKind::kObserve;
  });
  if (any_observe && out.observe_clean.empty()) {
    fail("/observe_clean", "required with an observe mutant: the correct program's arguments");
  }
  return out;
}

}  // namespace

Registry load_registry_text(const std::string& text, const std::string& file,
                            const std::set<std::string>& known_rules) {
  const json doc = parse_input_json(text, file);
  try {
    return RegistryParser(file, known_rules).parse(doc);
  } catch (const InputError& e) {
    throw e.located_in(text);
  }
}

Registry load_registry(const fs::path& file, const std::set<std::string>& known_rules) {
  return load_registry_text(read_input_file(file), file.string(), known_rules);
}

std::vector<Mutant> load_mutants_text(const std::string& text, const std::string& file,
                                      const std::set<std::string>& known_rules) {
  return load_registry_text(text, file, known_rules).mutants;
}

std::vector<Mutant> load_mutants(const fs::path& file, const std::set<std::string>& known_rules) {
  return load_mutants_text(read_input_file(file), file.string(), known_rules);
}

}  // namespace etwh::selftest
