#include "harness/report/stress_formats.h"

#include "harness/report/compare_report.h"

#include <fmt/format.h>

namespace etwh::stress {
namespace {

using nlohmann::ordered_json;

// A value of the document, or 0 when the run has none (a harness error has no figures).
double number_at(const ordered_json& j, const ordered_json::json_pointer& at) {
  return j.contains(at) && j.at(at).is_number() ? j.at(at).get<double>() : 0.0;
}

std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string run_label(const ordered_json& r) {
  return fmt::format("`{}` #{}", r.value("id", "?"), r.value("repetition", 1));
}

std::string session_rows(const ordered_json& r) {
  std::string md;
  const std::string status = r.value("status", "?");
  const std::string shown = status == "PASS" ? status : "**" + status + "**";
  using P = ordered_json::json_pointer;
  const double cpu = number_at(r, P("/writers/cpu/ns_per_event"));
  if (!r.contains("sessions")) {
    return fmt::format("| {} | {} | | | | | | | |\n", run_label(r), shown);
  }
  for (const ordered_json& s : r["sessions"]) {
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {:.3g} | {:.1f} / {:.1f} | {:.1f} |\n",
                      run_label(r), shown, s.value("name", "?"),
                      s.value("written", std::uint64_t{0}), s.value("delivered", std::uint64_t{0}),
                      s.value("reported_lost", std::uint64_t{0}),
                      number_at(s, P("/throughput/events_per_s")),
                      number_at(s, P("/latency_us/p50")), number_at(s, P("/latency_us/p99")), cpu);
  }
  return md;
}

}  // namespace

std::string stress_markdown(const ordered_json& results, const compare::Comparison* baseline) {
  std::size_t failed = 0, runs = 0;
  std::string failures;
  for (const ordered_json& r : results.value("results", ordered_json::array())) {
    ++runs;
    if (r.value("status", "") == "PASS") continue;
    ++failed;
    failures += fmt::format("- {} **{}**: {}\n", run_label(r), r.value("status", "?"),
                            one_line(r.value("message", "")));
  }
  const std::string platform =
      results.contains("run_info") ? results["run_info"].value("platform", "?") : "?";
  std::string md = fmt::format("### etwh stress on {}: {}\n\n", platform,
                               failed == 0 ? fmt::format("all {} runs passed", runs)
                                           : fmt::format("{} of {} runs failed", failed, runs));
  if (!failures.empty()) md += failures + "\n";
  md +=
      "| run | status | session | written | delivered | lost | delivered/s | latency p50 / p99 "
      "(us) | writer CPU (ns/event) |\n|---|---|---|---:|---:|---:|---:|---:|---:|\n";
  for (const ordered_json& r : results.value("results", ordered_json::array())) {
    md += session_rows(r);
  }
  if (baseline != nullptr) {  // appended piece by piece, as tap_report.cc says why
    md += "\n";
    md += compare::markdown(*baseline);
  }
  return md;
}

std::string stress_markdown_text(const StressResults& r) {
  return stress_markdown(r.doc, r.baseline);
}

}  // namespace etwh::stress
