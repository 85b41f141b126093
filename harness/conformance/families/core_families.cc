// The step families of the core, in one list: a new family adds its line here (and in
// driver_families.cc); a new op of a family touches only its folder.
#include "harness/conformance/families/core_families.h"

#include <stdexcept>
#include <unordered_map>

namespace etwh {

namespace {

std::vector<CoreOp> all_core_ops() {
  std::vector<CoreOp> all;
  using namespace family_core;  // the registrations, one per family
  for (std::vector<CoreOp> (*family)() :
       {&sessions_core_ops, &groups_core_ops, &providers_core_ops, &traits_core_ops,
        &data_path_core_ops, &classic_core_ops, &subjects_core_ops, &trace_files_core_ops}) {
    for (CoreOp& op : family()) all.push_back(op);
  }
  return all;
}

const std::unordered_map<std::string_view, const CoreOp*>& by_name() {
  static const std::unordered_map<std::string_view, const CoreOp*> index = [] {
    std::unordered_map<std::string_view, const CoreOp*> m;
    for (const CoreOp& op : core_ops()) {
      if (!m.emplace(op.name, &op).second) {
        throw std::logic_error("op \"" + std::string(op.name) + "\" is registered twice");
      }
    }
    return m;
  }();
  return index;
}

}  // namespace

const std::vector<CoreOp>& core_ops() {
  static const std::vector<CoreOp> ops = all_core_ops();
  return ops;
}

const CoreOp* find_core_op(std::string_view name) {
  const auto it = by_name().find(name);
  return it == by_name().end() ? nullptr : it->second;
}

}  // namespace etwh
