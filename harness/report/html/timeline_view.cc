// The timeline of `--trace` files (the Trace Event Format that etwh run and etwh stress write):
// one lane per process and thread, named by the file's metadata events, and every other event
// as a mark on its lane (a slice with its duration, an instant, a counter's sample).
#include "harness/report/html/view.h"

#include <map>
#include <utility>

namespace etwh::report_html {
namespace {

using nlohmann::json;

// Lanes in order of first appearance, named "process / thread" from the metadata events.
struct Lanes {
  std::map<std::pair<std::int64_t, std::int64_t>, std::size_t> index;
  std::map<std::int64_t, std::string> process_names;
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> thread_names;
  std::vector<std::pair<std::int64_t, std::int64_t>> order;

  std::size_t of(std::int64_t pid, std::int64_t tid) {
    auto [it, added] = index.try_emplace({pid, tid}, order.size());
    if (added) order.emplace_back(pid, tid);
    return it->second;
  }

  json names() const {
    json out = json::array();
    for (const auto& [pid, tid] : order) {
      const auto p = process_names.find(pid);
      const auto t = thread_names.find({pid, tid});
      std::string name = p != process_names.end() ? p->second : "process " + std::to_string(pid);
      if (t != thread_names.end()) name += " / " + t->second;
      out.push_back(name);
    }
    return out;
  }
};

std::int64_t integer(const Fields& f, const json& e, const std::string& at, const char* key) {
  if (!e.contains(key)) return 0;  // counters may leave tid out
  return static_cast<std::int64_t>(f.number(e, at, key));
}

json one_trace(const Input& in) {
  const Fields f(in);
  const json& events = f.array(in.doc, "", "traceEvents");
  Lanes lanes;
  json marks = json::array();
  for (std::size_t i = 0; i < events.size(); ++i) {
    const std::string at = "/traceEvents/" + std::to_string(i);
    const json& e = events[i];
    if (!e.is_object()) f.fail(at, std::string("expected an object, got ") + e.type_name());
    const std::string ph = f.string(e, at, "ph");
    const std::int64_t pid = integer(f, e, at, "pid"), tid = integer(f, e, at, "tid");
    if (ph == "M") {
      const std::string what = f.string(e, at, "name");
      const std::string name = f.string(f.object(e, at, "args"), at + "/args", "name");
      if (what == "process_name") lanes.process_names[pid] = name;
      if (what == "thread_name") lanes.thread_names[{pid, tid}] = name;
      continue;
    }
    json mark = {{"lane", lanes.of(pid, tid)},
                 {"ph", ph},
                 {"name", f.optional_string(e, at, "name")},
                 {"ts", f.number(e, at, "ts")}};
    if (ph == "X") mark["dur"] = f.number(e, at, "dur");
    if (e.contains("args") && e["args"].is_object()) mark["args"] = e["args"];
    marks.push_back(std::move(mark));
  }
  return {{"file", in.file}, {"lanes", lanes.names()}, {"marks", std::move(marks)}};
}

}  // namespace

json timeline_view(const std::vector<const Input*>& traces) {
  json out = json::array();
  for (const Input* in : traces) out.push_back(one_trace(*in));
  return out;
}

}  // namespace etwh::report_html
