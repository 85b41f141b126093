// What the two sides of the op registry share (core_families.cc, driver_families.cc): each
// family's registrations concatenated in one list, in family order, and an index by name.
#pragma once

#include <initializer_list>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace etwh {

template <class Op>  // CoreOp or DriverOp: a `name` each
class OpTable {
 public:
  explicit OpTable(std::initializer_list<std::vector<Op> (*)()> families) {
    for (std::vector<Op> (*family)() : families) {
      for (Op& op : family()) ops_.push_back(op);
    }
    for (const Op& op : ops_) {
      if (!by_name_.emplace(op.name, &op).second) registered_twice_.push_back(op.name);
    }
  }
  // The index points into ops_: the table stays where it was built.
  OpTable(const OpTable&) = delete;
  OpTable& operator=(const OpTable&) = delete;

  const std::vector<Op>& ops() const { return ops_; }
  // The op named `name` (its first registration), or nullptr.
  const Op* find(std::string_view name) const {
    const auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : it->second;
  }
  // Each name registered more than once, at its second registration and after.
  const std::vector<std::string_view>& registered_twice() const { return registered_twice_; }

 private:
  std::vector<Op> ops_;
  std::unordered_map<std::string_view, const Op*> by_name_;
  std::vector<std::string_view> registered_twice_;
};

}  // namespace etwh
