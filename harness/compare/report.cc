// The comparison as a console table, as markdown (for a pull-request comment) and as JSON.
#include "compare.h"

#include <fmt/format.h>

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

nlohmann::ordered_json sample_json(const Sample& s) {
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
  std::string md = fmt::format("### etwh compare ({}): `{}` → `{}`\n\n", kind_name(c.kind),
                               c.old_source, c.new_source);
  md += "**" + summary(c) + "**\n\n";
  if (!c.figures.empty()) {
    md += "| figure | old (median) | new (median) | change | p | verdict |\n";
    md += "|---|---:|---:|---:|---:|---|\n";
    for (const auto& f : c.figures) {
      const bool bad = f.verdict == Verdict::kSlower;
      md += fmt::format("| {} ({}) | {} | {} | {} | {:.3g} | {}{}{} |\n", f.name, f.unit,
                        value_text(f.old_sample.median), value_text(f.new_sample.median),
                        change_text(f.change), f.p_value, bad ? "**" : "", verdict_name(f.verdict),
                        bad ? "**" : "");
    }
    md += "\n";
  }
  if (!c.cases.empty()) {
    md += "| case | old | new | change |\n|---|---|---|---|\n";
    for (const auto& k : c.cases) {
      md += fmt::format("| {} | {} | {} | {}{}{} |\n", k.id, status_text(k.old_status),
                        status_text(k.new_status), k.regression ? "**" : "", k.change,
                        k.regression ? "**" : "");
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
        {"test", f.exact ? "exact" : "normal"},
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

}  // namespace etwh::compare
