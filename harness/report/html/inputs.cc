#include "harness/report/html/inputs.h"

#include "harness/model/input_error.h"
#include "harness/model/json_text.h"

namespace etwh::report_html {
namespace {

using nlohmann::json;

bool has(const json& doc, const char* key) { return doc.is_object() && doc.contains(key); }

// compare: "kind" and "figures"; run: "results" and "rules"; stress: "results" whose entries
// name their "profile" (or none yet).
InputKind classify(const Input& in) {
  const json& doc = in.doc;
  if (!doc.is_object()) {
    throw InputError(in.file, "/",
                     "expected an object (an etwh run, stress or compare JSON output), got " +
                         json_type_name(doc));
  }
  if (has(doc, "kind") && has(doc, "figures")) return InputKind::kCompare;
  if (has(doc, "traceEvents")) return InputKind::kTrace;
  if (has(doc, "results") && has(doc, "rules")) return InputKind::kRun;
  if (has(doc, "results")) {
    const json& results = doc["results"];
    if (results.is_array() && (results.empty() || has(results[0], "profile"))) {
      return InputKind::kStress;
    }
    if (results.is_array()) {
      throw InputError(in.file, "/results/0",
                       "neither a stress result (no \"profile\") nor a run report (no \"rules\" "
                       "at the top)");
    }
  }
  throw InputError(in.file, "/",
                   "not an etwh output: expected \"kind\" and \"figures\" (compare), \"results\" "
                   "and \"rules\" (run), \"results\" with \"profile\" entries (stress) or "
                   "\"traceEvents\" (a --trace timeline)");
}

}  // namespace

const char* input_kind_name(InputKind kind) {
  switch (kind) {
    case InputKind::kRun: return "run";
    case InputKind::kStress: return "stress";
    case InputKind::kCompare: return "compare";
    case InputKind::kTrace: return "trace";
  }
  return "?";
}

Input parse_input(std::string text, const std::string& file) {
  Input in;
  in.file = file;
  in.text = std::move(text);
  in.doc = parse_input_json(in.text, file);
  try {
    in.kind = classify(in);
  } catch (const InputError& e) {
    throw e.located_in(in.text);
  }
  return in;
}

Input load_input(const std::filesystem::path& file) {
  return parse_input(read_input_file(file), file.string());
}

void Fields::fail(const std::string& pointer, const std::string& reason) const {
  throw InputError(input_.file, pointer.empty() ? "/" : pointer, reason).located_in(input_.text);
}

const json& Fields::member(const json& obj, const std::string& pointer, const char* key) const {
  if (!obj.is_object()) fail(pointer, "expected an object, got " + json_type_name(obj));
  auto it = obj.find(key);
  if (it == obj.end()) fail(pointer, std::string("missing field \"") + key + "\"");
  return *it;
}

const json& Fields::array(const json& obj, const std::string& pointer, const char* key) const {
  const json& v = member(obj, pointer, key);
  if (!v.is_array()) fail(pointer + "/" + key, "expected an array, got " + json_type_name(v));
  return v;
}

const json& Fields::object(const json& obj, const std::string& pointer, const char* key) const {
  const json& v = member(obj, pointer, key);
  if (!v.is_object()) fail(pointer + "/" + key, "expected an object, got " + json_type_name(v));
  return v;
}

std::string Fields::string(const json& obj, const std::string& pointer, const char* key) const {
  const json& v = member(obj, pointer, key);
  if (!v.is_string()) fail(pointer + "/" + key, "expected a string, got " + json_type_name(v));
  return v.get<std::string>();
}

double Fields::number(const json& obj, const std::string& pointer, const char* key) const {
  const json& v = member(obj, pointer, key);
  if (!v.is_number()) fail(pointer + "/" + key, "expected a number, got " + json_type_name(v));
  return v.get<double>();
}

std::string Fields::optional_string(const json& obj, const std::string& pointer,
                                    const char* key) const {
  if (!obj.is_object() || !obj.contains(key)) return "";
  return string(obj, pointer, key);
}

}  // namespace etwh::report_html
