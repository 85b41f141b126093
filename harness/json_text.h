// How the loaders (scenarios, stress profiles) name JSON things in their error messages.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <exception>
#include <string>

namespace etwh {

// "a string", "an object", "a fractional number", ... for "expected X, got Y" messages.
std::string json_type_name(const nlohmann::json& v);

// "L:C" (1-based, as editors count) of the byte at `offset` in `text`.
std::string line_col(const std::string& text, std::size_t offset);

// Where json::parse gives up on `text`: the offset of the last byte it read (text.size() when
// it does not give up). For the error nlohmann throws without a position: a number that no
// double holds ("1e999") is a json::out_of_range (406), not a parse_error with its byte.
std::size_t json_error_offset(const std::string& text);

// An exception's message without nlohmann's "[json.exception.<kind>.<id>] " prefix.
std::string json_error_reason(const std::exception& e);

}  // namespace etwh
