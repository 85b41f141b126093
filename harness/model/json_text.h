// How the loaders (scenarios, catalog, expectations, mutants, stress profiles) name JSON
// things and places in their error messages.
#pragma once

#include "harness/model/input_error.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <exception>
#include <filesystem>
#include <string>

namespace etwh {

// "a string", "an object", "a fractional number", ... for "expected X, got Y" messages.
std::string json_type_name(const nlohmann::json& v);

struct TextPosition {
  std::size_t line = 1;  // 1-based, as editors count
  std::size_t col = 1;
};

// The line and column of the byte at `offset` in `text`.
TextPosition position_of(const std::string& text, std::size_t offset);

// "L:C" of the byte at `offset` in `text`.
std::string line_col(const std::string& text, std::size_t offset);

// The offset in `text` (a JSON document) of the value that the JSON pointer `pointer` names,
// or of its deepest enclosing value that exists (a missing field is reported at its object).
// 0 when `text` does not parse that far.
std::size_t locate_pointer(const std::string& text, const std::string& pointer);

// The largest input file the loaders read (scenarios, catalog, expectations, mutants,
// stress profiles): the shipped ones are under 30 KiB.
inline constexpr std::size_t kMaxInputFileBytes = 16 * 1024 * 1024;

// The whole content of an input file. Throws InputError "<file>: reason" when it cannot be
// opened, is not a regular file (a FIFO, a device, a directory: refused before opening, so
// nothing blocks or reads without end) or is larger than kMaxInputFileBytes.
std::string read_input_file(const std::filesystem::path& file);

// Parses `text` (the content of `file`). Throws InputError "<file>:<line>:<col>: JSON syntax
// error: reason".
nlohmann::json parse_input_json(const std::string& text, const std::string& file);

// Where json::parse gives up on `text`: the offset of the last byte it read (text.size() when
// it does not give up). For the error nlohmann throws without a position: a number that no
// double holds ("1e999") is a json::out_of_range (406), not a parse_error with its byte.
std::size_t json_error_offset(const std::string& text);

// An exception's message without nlohmann's "[json.exception.<kind>.<id>] " prefix.
std::string json_error_reason(const std::exception& e);

}  // namespace etwh
