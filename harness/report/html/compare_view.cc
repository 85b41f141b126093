// `etwh compare --json` outputs: the figures with their verdicts, the cases and rules that moved.
#include "harness/report/html/view.h"

#include "harness/model/json_text.h"

namespace etwh::report_html {
namespace {

using nlohmann::json;

std::string at_index(const std::string& base, std::size_t i) {
  return base + "/" + std::to_string(i);
}

json nullable_number(const Fields& f, const json& obj, const std::string& at, const char* key) {
  const json& v = f.member(obj, at, key);
  if (!v.is_null() && !v.is_number()) {
    f.fail(at + "/" + key, "expected a number or null, got " + json_type_name(v));
  }
  return v;
}

json nullable_string(const Fields& f, const json& obj, const std::string& at, const char* key) {
  const json& v = f.member(obj, at, key);
  if (!v.is_null() && !v.is_string()) {
    f.fail(at + "/" + key, "expected a string or null, got " + json_type_name(v));
  }
  return v;
}

json figure_entry(const Fields& f, const json& fig, const std::string& at) {
  const json& old_sample = f.object(fig, at, "old");
  const json& new_sample = f.object(fig, at, "new");
  return {{"name", f.string(fig, at, "name")},
          {"unit", f.string(fig, at, "unit")},
          {"better", f.string(fig, at, "better")},
          {"old_median", f.number(old_sample, at + "/old", "median")},
          {"old_n", f.number(old_sample, at + "/old", "n")},
          {"new_median", f.number(new_sample, at + "/new", "median")},
          {"new_n", f.number(new_sample, at + "/new", "n")},
          {"change", nullable_number(f, fig, at, "change")},
          {"p_value", f.number(fig, at, "p_value")},
          {"verdict", f.string(fig, at, "verdict")}};
}

json compare_entry(const Input& in) {
  const Fields f(in);
  const json& doc = in.doc;
  const json& v = f.member(doc, "", "schema_version");
  if (v != 1) f.fail("/schema_version", "unsupported schema_version " + v.dump() + " (expected 1)");
  json entry = {{"file", in.file},
                {"kind", f.string(doc, "", "kind")},
                {"old", f.string(doc, "", "old")},
                {"new", f.string(doc, "", "new")},
                {"regressions", f.number(doc, "", "regressions")},
                {"figures", json::array()},
                {"cases", json::array()}};
  const json& figures = f.array(doc, "", "figures");
  for (std::size_t i = 0; i < figures.size(); ++i) {
    entry["figures"].push_back(figure_entry(f, figures[i], at_index("/figures", i)));
  }
  const json& cases = f.array(doc, "", "cases");
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string at = at_index("/cases", i);
    entry["cases"].push_back({{"id", f.string(cases[i], at, "id")},
                              {"old", nullable_string(f, cases[i], at, "old")},
                              {"new", nullable_string(f, cases[i], at, "new")},
                              {"change", f.string(cases[i], at, "change")}});
  }
  return entry;
}

}  // namespace

json compare_view(const std::vector<const Input*>& compares) {
  json view = json::array();
  for (const Input* in : compares) view.push_back(compare_entry(*in));
  return view;
}

json build_view(const std::vector<Input>& inputs, const std::string& generator) {
  std::vector<const Input*> runs, stress, compares, traces;
  json listed = json::array();
  for (const Input& in : inputs) {
    (in.kind == InputKind::kRun      ? runs
     : in.kind == InputKind::kStress ? stress
     : in.kind == InputKind::kTrace  ? traces
                                     : compares)
        .push_back(&in);
    listed.push_back({{"file", in.file}, {"kind", input_kind_name(in.kind)}});
  }
  return {{"generator", generator},
          {"inputs", listed},
          {"conformance", conformance_view(runs)},
          {"stress", stress_view(stress)},
          {"compare", compare_view(compares)},
          {"timeline", timeline_view(traces)}};
}

}  // namespace etwh::report_html
