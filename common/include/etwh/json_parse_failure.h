// Why a text did not parse as JSON: nlohmann's SAX parser run with a handler that accepts every
// value, so that all it keeps is the parser's error (where, and nlohmann's error id). etwrt
// reads the id (a number too large for a double is not a corrupt frame), the harness the place
// (a scenario's line and column). Header-only, over nlohmann_json, which both link.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>

namespace etwh {

class JsonParseFailure : public nlohmann::json_sax<nlohmann::json> {
 public:
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& e) override {
    failed = true;
    this->position = position;
    id = e.id;
    return false;
  }

  bool failed = false;
  std::size_t position = 0;  // nlohmann's: one past the character where the parser stopped
  int id = 0;                // nlohmann's error id (406: a number that overflows a double)
};

}  // namespace etwh
