// Input fields that take one of a few names (an action's op, a mutant's kind): a table from
// name to value, so that what a field accepts and what its error message lists are one list.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace etwh {

template <class E>
using NamedValue = std::pair<std::string_view, E>;

// The value `name` stands for in `names`, or nullopt.
template <class E, std::size_t N>
std::optional<E> value_named(std::string_view name, const NamedValue<E> (&names)[N]) {
  for (const auto& [n, value] : names) {
    if (n == name) return value;
  }
  return std::nullopt;
}

// The names, for a message: "a", "a or b", "a, b or c".
template <class E, std::size_t N>
std::string names_listed(const NamedValue<E> (&names)[N]) {
  std::string out;
  for (std::size_t i = 0; i < N; ++i) {
    if (i > 0) out += i + 1 == N ? " or " : ", ";
    out += names[i].first;
  }
  return out;
}

}  // namespace etwh
