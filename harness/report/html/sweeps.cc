// Sweeps: a figure against the one parameter the runs of a profile differ in.
#include "harness/report/html/view.h"

#include <algorithm>
#include <set>

namespace etwh::report_html {
namespace {

using nlohmann::json;

// The parameters whose value is not the same in every point (absent counts as a value).
std::vector<std::string> varying(const std::vector<const SweepPoint*>& group) {
  std::set<std::string> names;
  for (const SweepPoint* p : group) {
    for (const auto& [name, value] : p->parameters) names.insert(name);
  }
  std::vector<std::string> out;
  for (const std::string& name : names) {
    auto value_of = [&](const SweepPoint* p) {
      auto it = p->parameters.find(name);
      return it == p->parameters.end() ? json(nullptr) : it->second;
    };
    const json first = value_of(group.front());
    for (const SweepPoint* p : group) {
      if (value_of(p) != first) {
        out.push_back(name);
        break;
      }
    }
  }
  return out;
}

// The x axis: the numeric varying parameter with the most distinct values.
std::string pick_dimension(const std::vector<const SweepPoint*>& group,
                           const std::vector<std::string>& names) {
  std::string best;
  std::size_t best_count = 0;
  for (const std::string& name : names) {
    std::set<double> values;
    bool numeric = true;
    for (const SweepPoint* p : group) {
      auto it = p->parameters.find(name);
      if (it == p->parameters.end() || !it->second.is_number()) {
        numeric = false;
        break;
      }
      values.insert(it->second.get<double>());
    }
    if (numeric && values.size() > best_count) {
      best = name;
      best_count = values.size();
    }
  }
  return best;
}

// "sessions=2, payload_bytes=64": the other varying parameters of a point, naming its series.
std::string series_name(const SweepPoint& p, const std::vector<std::string>& others) {
  std::string name;
  for (const std::string& o : others) {
    auto it = p.parameters.find(o);
    const std::string value = it == p.parameters.end() ? "-"
                              : it->second.is_string() ? it->second.get<std::string>()
                                                       : it->second.dump();
    name += (name.empty() ? "" : ", ") + o + "=" + value;
  }
  return name.empty() ? "all runs" : name;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// One figure: per series every point [x, y] and the line through the median of each x.
json figure_series(const std::vector<const SweepPoint*>& group, const std::string& figure,
                   const std::string& dimension, const std::vector<std::string>& others) {
  std::map<std::string, std::map<double, std::vector<double>>> by_series;
  for (const SweepPoint* p : group) {
    auto y = p->figures.find(figure);
    if (y == p->figures.end()) continue;
    by_series[series_name(*p, others)][p->parameters.at(dimension).get<double>()].push_back(
        y->second);
  }
  json series = json::array();
  for (const auto& [name, by_x] : by_series) {
    json points = json::array(), line = json::array();
    for (const auto& [x, ys] : by_x) {
      for (double y : ys) points.push_back({x, y});
      line.push_back({x, median(ys)});
    }
    series.push_back({{"name", name}, {"points", points}, {"line", line}});
  }
  return series;
}

json sweep_of(const std::string& name, const std::vector<const SweepPoint*>& group,
              json& no_sweep) {
  if (group.size() < 2) {
    no_sweep.push_back(name + ": one run, no sweep");
    return nullptr;
  }
  const std::vector<std::string> names = varying(group);
  const std::string dimension = pick_dimension(group, names);
  if (dimension.empty()) {
    no_sweep.push_back(name + (names.empty()
                                   ? ": every run has the same parameters (repetitions), no sweep"
                                   : ": the runs differ in no numeric parameter, no sweep"));
    return nullptr;
  }
  std::vector<std::string> others;
  for (const std::string& n : names) {
    if (n != dimension) others.push_back(n);
  }
  std::set<std::string> figure_names;
  for (const SweepPoint* p : group) {
    for (const auto& [f, value] : p->figures) figure_names.insert(f);
  }
  json figures = json::array();
  for (const std::string& f : figure_names) {
    figures.push_back({{"name", f}, {"series", figure_series(group, f, dimension, others)}});
  }
  return {{"group", name}, {"dimension", dimension}, {"series_by", others}, {"figures", figures}};
}

}  // namespace

json sweeps_of(const std::vector<SweepPoint>& points) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const SweepPoint*>> groups;
  for (const SweepPoint& p : points) {
    auto& g = groups[p.group];
    if (g.empty()) order.push_back(p.group);
    g.push_back(&p);
  }
  json view = {{"sweeps", json::array()}, {"no_sweep", json::array()}};
  for (const std::string& name : order) {
    json sweep = sweep_of(name, groups[name], view["no_sweep"]);
    if (!sweep.is_null()) view["sweeps"].push_back(std::move(sweep));
  }
  return view;
}

}  // namespace etwh::report_html
