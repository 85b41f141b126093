// The step families of the driver, in one list: a new family adds its line here (and in
// core_families.cc); a new op of a family touches only its folder.
#include "harness/conformance/families/driver_families.h"

#include "harness/conformance/families/core_families.h"
#include "harness/conformance/families/op_table.h"

#include <map>

namespace etwh {

namespace {

const OpTable<DriverOp>& table() {
  static const OpTable<DriverOp> ops(
      {&sessions_driver_ops, &groups_driver_ops, &providers_driver_ops, &traits_driver_ops,
       &data_path_driver_ops, &classic_driver_ops, &subjects_driver_ops, &trace_files_driver_ops});
  return ops;
}

}  // namespace

const std::vector<DriverOp>& driver_ops() { return table().ops(); }

// A runner registered twice is op_registration_mismatches()' to name; this finds the first.
const DriverOp* find_driver_op(std::string_view name) { return table().find(name); }

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
