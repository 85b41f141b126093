#include "harness/compare/compare.h"

#include "harness/compare/mann_whitney.h"
#include "harness/compare/welch.h"

#include <etwh/pattern.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

namespace etwh::compare {
namespace {

Sample describe(std::vector<double> values) {
  Sample s;
  s.n = values.size();
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  s.median = values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
  s.min = values.front();
  s.max = values.back();
  return s;
}

bool failing(const std::string& status) {
  return status == "FAIL" || status == "CRASH" || status == "TIMEOUT" || status == "HARNESS_ERROR";
}

CaseChange classify(const std::string& id, const std::optional<std::string>& old_status,
                    const std::optional<std::string>& new_status) {
  CaseChange c{id, old_status, new_status, "changed", false};
  const bool was_failing = old_status && failing(*old_status);
  if (new_status && failing(*new_status) && !was_failing) {
    c.change = "new failure";
    c.regression = true;
  } else if (new_status == "XPASS" && old_status != "XPASS") {
    c.change = "new XPASS";  // a stale expectation, as `etwh run` judges it
    c.regression = true;
  } else if (!new_status) {
    c.change = "removed";
  } else if (was_failing && !failing(*new_status)) {
    c.change = "fixed";
  } else if (!old_status) {
    c.change = "added";
  }
  return c;
}

void compare_statuses(const Document& old_doc, const Document& new_doc, Comparison& out) {
  std::set<std::string> ids;
  for (const auto& [id, s] : old_doc.cases) ids.insert(id);
  for (const auto& [id, s] : new_doc.cases) ids.insert(id);
  auto status = [](const std::map<std::string, std::string>& m,
                   const std::string& id) -> std::optional<std::string> {
    auto it = m.find(id);
    return it == m.end() ? std::nullopt : std::optional(it->second);
  };
  for (const std::string& id : ids) {
    const auto before = status(old_doc.cases, id), after = status(new_doc.cases, id);
    if (before == after) continue;
    out.cases.push_back(classify(id, before, after));
    if (out.cases.back().regression) ++out.regressions;
  }
  std::set<std::string> rule_ids;
  for (const auto& [id, s] : old_doc.rules) rule_ids.insert(id);
  for (const auto& [id, s] : new_doc.rules) rule_ids.insert(id);
  for (const std::string& id : rule_ids) {
    const auto before = status(old_doc.rules, id), after = status(new_doc.rules, id);
    if (before != after) out.rules.push_back({id, before, after});
  }
}

// A figure's sample: its values, or the summary an aggregates-only file kept of them.
Sample sample_of(const Figure& fig) {
  if (!fig.summary) return describe(fig.values);
  Sample s;
  s.n = fig.summary->n;
  s.median = fig.summary->median;
  s.summary = fig.summary;
  return s;
}

// Mean and standard deviation (n - 1) of a figure, for Welch's test.
SampleStats stats_of(const Figure& fig) {
  if (fig.summary) return {fig.summary->n, fig.summary->mean, fig.summary->stddev};
  SampleStats s{fig.values.size(), 0, 0};
  if (s.n == 0) return s;
  for (double v : fig.values) s.mean += v;
  s.mean /= static_cast<double>(s.n);
  double squares = 0;
  for (double v : fig.values) squares += (v - s.mean) * (v - s.mean);
  if (s.n > 1) s.stddev = std::sqrt(squares / static_cast<double>(s.n - 1));
  return s;
}

FigureComparison compare_figure(const Figure& old_fig, const Figure& new_fig, const Thresholds& t) {
  FigureComparison f;
  f.name = new_fig.name;
  f.unit = new_fig.unit;
  f.better = new_fig.better;
  f.old_sample = sample_of(old_fig);
  f.new_sample = sample_of(new_fig);
  if (f.old_sample.median != 0) {
    f.change = (f.new_sample.median - f.old_sample.median) / std::abs(f.old_sample.median);
  } else if (f.new_sample.median != 0) {
    f.change = f.new_sample.median > 0 ? HUGE_VAL : -HUGE_VAL;
  }
  if (old_fig.summary || new_fig.summary) {
    f.welch = true;
    f.p_value = welch_t_test(stats_of(old_fig), stats_of(new_fig)).p_value;
  } else {
    const MannWhitney test = mann_whitney_u(old_fig.values, new_fig.values);
    f.u = test.u;
    f.p_value = test.p_value;
    f.exact = test.exact;
  }
  f.verdict = judge_figure(f.change, f.p_value, f.better, t);
  return f;
}

bool wanted_name(const std::optional<Pattern>& only, const std::string& name) {
  return !only || only->found_in(name);
}

}  // namespace

Verdict judge_figure(double change, double p_value, Better better, const Thresholds& t) {
  const bool significant = p_value < t.alpha;
  const bool large = std::abs(change) >= t.min_effect;
  if (significant && large) {
    const bool worse = better == Better::kLower ? change > 0 : change < 0;
    return worse ? Verdict::kSlower : Verdict::kFaster;
  }
  return large ? Verdict::kNoisy : Verdict::kSame;
}

Comparison compare_documents(const Document& old_doc, const Document& new_doc,
                             const Thresholds& thresholds) {
  if (old_doc.kind != new_doc.kind) {
    throw CompareInputError(new_doc.source + ": a " + kind_name(new_doc.kind) +
                            " file cannot be compared with " + old_doc.source + ", a " +
                            kind_name(old_doc.kind) + " file");
  }
  std::optional<Pattern> only;
  if (!thresholds.only.empty()) {
    try {
      only.emplace(thresholds.only);
    } catch (const PatternError& e) {
      throw CompareInputError("--only: \"" + thresholds.only +
                              "\": not a regular expression: " + e.what());
    }
  }
  Comparison out;
  out.kind = new_doc.kind;
  out.old_source = old_doc.source;
  out.new_source = new_doc.source;
  out.thresholds = thresholds;
  if (new_doc.kind == Kind::kRun) {
    compare_statuses(old_doc, new_doc, out);
    return out;
  }
  // A figure with a value that is not finite on either side is named, not compared.
  std::set<std::string> set_apart;
  for (const Document* d : {&old_doc, &new_doc}) {
    for (const auto& [name, why] : d->not_comparable) {
      if (!wanted_name(only, name)) continue;
      out.unmatched.push_back(name + " (" + why + ")");
      set_apart.insert(name);
    }
  }
  auto wanted = [&](const std::string& name) {
    return wanted_name(only, name) && !set_apart.count(name);
  };
  for (const Figure& nf : new_doc.figures) {
    if (!wanted(nf.name)) continue;
    auto of = std::find_if(old_doc.figures.begin(), old_doc.figures.end(),
                           [&](const Figure& f) { return f.name == nf.name; });
    if (of == old_doc.figures.end()) {
      out.unmatched.push_back(nf.name + " (only in NEW)");
      continue;
    }
    out.figures.push_back(compare_figure(*of, nf, thresholds));
    if (out.figures.back().verdict == Verdict::kSlower) ++out.regressions;
  }
  for (const Figure& of : old_doc.figures) {
    if (!wanted(of.name)) continue;
    if (std::none_of(new_doc.figures.begin(), new_doc.figures.end(),
                     [&](const Figure& f) { return f.name == of.name; })) {
      out.unmatched.push_back(of.name + " (only in OLD)");
    }
  }
  return out;
}

}  // namespace etwh::compare
