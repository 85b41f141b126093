// The step families of the driver, in one list: a new family adds its line here (and in
// core_families.cc); a new op of a family touches only its folder.
#include "harness/conformance/families/driver_families.h"

#include "harness/conformance/families/core_families.h"

#include <map>

namespace etwh {

namespace {

std::vector<DriverOp> all_driver_ops() {
  std::vector<DriverOp> all;
  for (std::vector<DriverOp> (*family)() :
       {&sessions_driver_ops, &groups_driver_ops, &providers_driver_ops, &traits_driver_ops,
        &data_path_driver_ops, &classic_driver_ops, &subjects_driver_ops}) {
    for (DriverOp& op : family()) all.push_back(op);
  }
  return all;
}

}  // namespace

const std::vector<DriverOp>& driver_ops() {
  static const std::vector<DriverOp> ops = all_driver_ops();
  return ops;
}

const DriverOp* find_driver_op(std::string_view name) {
  static const std::map<std::string_view, const DriverOp*> index = [] {
    std::map<std::string_view, const DriverOp*> m;
    for (const DriverOp& op : driver_ops()) m.emplace(op.name, &op);
    return m;
  }();
  const auto it = index.find(name);
  return it == index.end() ? nullptr : it->second;
}

std::vector<std::string> op_registration_mismatches() {
  std::map<std::string_view, int> runners;
  for (const DriverOp& op : driver_ops()) ++runners[op.name];
  std::map<std::string_view, int> core;
  for (const CoreOp& op : core_ops()) ++core[op.name];
  std::vector<std::string> out;
  for (const auto& [name, count] : core) {
    const std::string op(name);
    if (count > 1)
      out.push_back("op \"" + op + "\" is registered " + std::to_string(count) +
                    " times in the core");
    const int n = runners.count(name) ? runners.at(name) : 0;
    if (n != 1) out.push_back("op \"" + op + "\" has " + std::to_string(n) + " runners");
  }
  for (const auto& [name, count] : runners) {
    if (!core.count(name)) {
      out.push_back("runner of op \"" + std::string(name) + "\", which the core does not have");
    }
  }
  return out;
}

}  // namespace etwh
