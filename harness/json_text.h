// How the loaders (scenarios, stress profiles) name JSON things in their error messages.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>

namespace etwh {

// "a string", "an object", "a fractional number", ... for "expected X, got Y" messages.
std::string json_type_name(const nlohmann::json& v);

// "L:C" (1-based, as editors count) of the byte at `offset` in `text`.
std::string line_col(const std::string& text, std::size_t offset);

}  // namespace etwh
