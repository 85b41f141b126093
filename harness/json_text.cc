#include "json_text.h"

namespace etwh {

std::string json_type_name(const nlohmann::json& v) {
  using nlohmann::json;
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::string: return "a string";
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    case json::value_t::number_float: return "a fractional number";
    default: return "a number";
  }
}

std::string line_col(const std::string& text, std::size_t offset) {
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return std::to_string(line) + ":" + std::to_string(col);
}

namespace {

// Accepts every value and remembers where the parser stopped.
class ErrorLocator : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit ErrorLocator(std::size_t end) : offset(end) {}
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
                   const nlohmann::detail::exception&) override {
    offset = position > 0 ? position - 1 : 0;
    return false;
  }
  std::size_t offset;
};

}  // namespace

std::size_t json_error_offset(const std::string& text) {
  ErrorLocator locator(text.size());
  nlohmann::json::sax_parse(text, &locator);
  return locator.offset;
}

std::string json_error_reason(const std::exception& e) {
  std::string reason = e.what();
  if (reason.starts_with("[json.exception.")) {
    if (auto end = reason.find("] "); end != std::string::npos) reason.erase(0, end + 2);
  }
  return reason;
}

}  // namespace etwh
