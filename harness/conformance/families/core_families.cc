// The step families of the core, in one list: a new family adds its line here (and in
// driver_families.cc); a new op of a family touches only its folder.
#include "harness/conformance/families/core_families.h"

#include "harness/conformance/families/op_table.h"

#include <stdexcept>

namespace etwh {

namespace {

const OpTable<CoreOp>& table() {
  using namespace family_core;  // the registrations, one per family
  static const OpTable<CoreOp> ops({&sessions_core_ops, &groups_core_ops, &providers_core_ops,
                                    &traits_core_ops, &data_path_core_ops, &classic_core_ops,
                                    &subjects_core_ops, &trace_files_core_ops});
  return ops;
}

}  // namespace

const std::vector<CoreOp>& core_ops() { return table().ops(); }

const CoreOp* find_core_op(std::string_view name) {
  if (!table().registered_twice().empty()) {
    throw std::logic_error("op \"" + std::string(table().registered_twice().front()) +
                           "\" is registered twice");
  }
  return table().find(name);
}

}  // namespace etwh
