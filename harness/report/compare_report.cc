#include "harness/report/compare_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ostream>

namespace etwh::compare {
namespace {

std::string value_text(double v) { return fmt::format("{:.4g}", v); }

std::string change_text(double change) {
  if (!std::isfinite(change)) return change > 0 ? "+inf" : "-inf";
  return fmt::format("{:+.1f}%", change * 100);
}

std::string status_text(const std::optional<std::string>& s) { return s ? *s : "(absent)"; }

std::string summary(const Comparison& c) {
  if (c.kind == Kind::kRun) {
    return fmt::format("{} cases changed, {} rules changed, {} regressions", c.cases.size(),
                       c.rules.size(), c.regressions);
  }
  std::size_t counts[4] = {};
  for (const auto& f : c.figures) ++counts[static_cast<int>(f.verdict)];
  return fmt::format(
      "{} figures: {} faster, {} slower, {} same, {} noisy (p < {}, effect >= "
      "{}%); {} regressions",
      c.figures.size(), counts[0], counts[1], counts[2], counts[3], c.thresholds.alpha,
      c.thresholds.min_effect * 100, c.regressions);
}

// From an aggregates-only file: no minimum nor maximum, the mean and deviation instead.
nlohmann::ordered_json sample_json(const Sample& s) {
  if (s.summary) {
    return {{"n", s.n},       {"median", s.median},      {"min", nullptr},
            {"max", nullptr}, {"mean", s.summary->mean}, {"stddev", s.summary->stddev}};
  }
  return {{"n", s.n}, {"median", s.median}, {"min", s.min}, {"max", s.max}};
}

nlohmann::ordered_json optional_json(const std::optional<std::string>& s) {
  return s ? nlohmann::ordered_json(*s) : nlohmann::ordered_json(nullptr);
}

}  // namespace

void print_console(const Comparison& c, std::ostream& out) {
  out << fmt::format("compare ({}): {} -> {}\n", kind_name(c.kind), c.old_source, c.new_source);
  if (!c.figures.empty()) {
    out << fmt::format("{:<48} {:>12} {:>12} {:>8} {:>9}  {}\n", "FIGURE", "OLD", "NEW", "CHANGE",
                       "P", "VERDICT");
  }
  for (const auto& f : c.figures) {
    out << fmt::format("{:<48} {:>12} {:>12} {:>8} {:>9.3g}  {}\n", f.name + " (" + f.unit + ")",
                       value_text(f.old_sample.median), value_text(f.new_sample.median),
                       change_text(f.change), f.p_value, verdict_name(f.verdict));
  }
  for (const auto& u : c.unmatched) out << "not compared: " << u << "\n";
  for (const auto& k : c.cases) {
    out << fmt::format("{:<12} {}: {} -> {}\n", k.change, k.id, status_text(k.old_status),
                       status_text(k.new_status));
  }
  for (const auto& r : c.rules) {
    out << fmt::format("rule {}: {} -> {}\n", r.id, status_text(r.old_status),
                       status_text(r.new_status));
  }
  out << summary(c) << "\n";
}

std::string markdown(const Comparison& c) {
  std::string md = fmt::format(
      "### etwh compare ({}): {}\n\n`{}` → `{}`: {}\n\n", kind_name(c.kind),
      c.regressions == 0 ? "no regression" : fmt::format("**{} regressions**", c.regressions),
      c.old_source, c.new_source, summary(c));
  if (!c.figures.empty()) {
    std::vector<const FigureComparison*> order;
    for (const auto& f : c.figures) order.push_back(&f);
    static constexpr int kRank[] = {2, 0, 3, 1};  // by Verdict: faster, slower, same, noisy
    std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
      return kRank[static_cast<int>(a->verdict)] < kRank[static_cast<int>(b->verdict)];
    });
    md += "| figure | old (median) | new (median) | change | p | verdict |\n";
    md += "|---|---:|---:|---:|---:|---|\n";
    for (const FigureComparison* f : order) {
      const bool bad = f->verdict == Verdict::kSlower;
      md += fmt::format("| {} ({}) | {} | {} | {} | {:.3g}{} | {}{}{} |\n", f->name, f->unit,
                        value_text(f->old_sample.median), value_text(f->new_sample.median),
                        change_text(f->change), f->p_value, f->welch ? " (t)" : "", bad ? "**" : "",
                        verdict_name(f->verdict), bad ? "**" : "");
    }
    md += "\n";
  }
  if (!c.cases.empty()) {
    std::vector<const CaseChange*> order;
    for (const auto& k : c.cases) order.push_back(&k);
    std::stable_partition(order.begin(), order.end(), [](const auto* k) { return k->regression; });
    md += "| case | old | new | change |\n|---|---|---|---|\n";
    for (const CaseChange* k : order) {
      md += fmt::format("| {} | {} | {} | {}{}{} |\n", k->id, status_text(k->old_status),
                        status_text(k->new_status), k->regression ? "**" : "", k->change,
                        k->regression ? "**" : "");
    }
    md += "\n";
  }
  if (!c.rules.empty()) {
    md += "| rule | old | new |\n|---|---|---|\n";
    for (const auto& r : c.rules) {
      md += fmt::format("| {} | {} | {} |\n", r.id, status_text(r.old_status),
                        status_text(r.new_status));
    }
    md += "\n";
  }
  for (const auto& u : c.unmatched) md += "- not compared: " + u + "\n";
  if (std::any_of(c.figures.begin(), c.figures.end(), [](const auto& f) { return f.welch; })) {
    md += "\n(t): from the files' aggregates only, by Welch's t-test.\n";
  }
  return md;
}

nlohmann::ordered_json to_json(const Comparison& c) {
  nlohmann::ordered_json j;
  j["schema_version"] = 1;
  j["kind"] = kind_name(c.kind);
  j["old"] = c.old_source;
  j["new"] = c.new_source;
  j["thresholds"] = {{"alpha", c.thresholds.alpha},
                     {"min_effect", c.thresholds.min_effect},
                     {"only", c.thresholds.only}};
  j["regressions"] = c.regressions;
  j["figures"] = nlohmann::ordered_json::array();
  for (const auto& f : c.figures) {
    j["figures"].push_back(nlohmann::ordered_json{
        {"name", f.name},
        {"unit", f.unit},
        {"better", f.better == Better::kLower ? "lower" : "higher"},
        {"old", sample_json(f.old_sample)},
        {"new", sample_json(f.new_sample)},
        {"change", std::isfinite(f.change) ? nlohmann::ordered_json(f.change) : nullptr},
        {"u", f.u},
        {"p_value", f.p_value},
        {"test", f.welch   ? "welch"
                 : f.exact ? "exact"
                           : "normal"},
        {"verdict", verdict_name(f.verdict)}});
  }
  j["not_compared"] = c.unmatched;
  j["cases"] = nlohmann::ordered_json::array();
  for (const auto& k : c.cases) {
    j["cases"].push_back(nlohmann::ordered_json{{"id", k.id},
                                                {"old", optional_json(k.old_status)},
                                                {"new", optional_json(k.new_status)},
                                                {"change", k.change},
                                                {"regression", k.regression}});
  }
  j["rules"] = nlohmann::ordered_json::array();
  for (const auto& r : c.rules) {
    j["rules"].push_back(nlohmann::ordered_json{
        {"id", r.id}, {"old", optional_json(r.old_status)}, {"new", optional_json(r.new_status)}});
  }
  return j;
}

namespace {

std::string json_text(const Comparison& c) { return to_json(c).dump(2) + "\n"; }

constexpr FileFormat<Comparison> kFormats[] = {
    {"markdown",
     "Write markdown to FILE (- for standard output), for a CI job summary or a merge-request "
     "comment",
     markdown},
    {"json", "Write JSON to FILE", json_text},
};

}  // namespace

std::span<const FileFormat<Comparison>> compare_formats() { return kFormats; }

}  // namespace etwh::compare
