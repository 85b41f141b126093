#include "harness/model/input_error.h"

#include "harness/model/json_text.h"

namespace etwh {

namespace {

// A pointer or reason quotes the input's keys and values: a control character there (a NUL
// would end the message where it is printed as a C string) is written as JSON escapes it.
void append_printable(std::string& out, const std::string& text) {
  static const char kHex[] = "0123456789abcdef";
  for (const char ch : text) {
    const auto byte = static_cast<unsigned char>(ch);
    if (byte >= 0x20 && byte != 0x7f) {
      out += ch;
      continue;
    }
    out += "\\u00";
    out += kHex[byte >> 4];
    out += kHex[byte & 0xf];
  }
}

}  // namespace

std::string format_input_error(const std::string& file, const std::string& pointer,
                               const std::string& reason, std::size_t line, std::size_t col) {
  // Appended piece by piece: GCC 12 (mingw-w64, -O2) sees a false -Wrestrict in
  // `":" + std::to_string(...)`.
  std::string s = file;
  if (line > 0) {
    s += ':';
    s += std::to_string(line);
    s += ':';
    s += std::to_string(col);
  }
  s += ": ";
  if (!pointer.empty()) {
    append_printable(s, pointer);
    s += ": ";
  }
  append_printable(s, reason);
  return s;
}

InputError::InputError(std::string file, std::string pointer, std::string reason, std::size_t line,
                       std::size_t col)
    : std::runtime_error(format_input_error(file, pointer, reason, line, col)),
      file_(std::move(file)),
      pointer_(std::move(pointer)),
      reason_(std::move(reason)),
      line_(line),
      col_(col) {}

InputError InputError::located_in(const std::string& text) const {
  if (line_ > 0 || pointer_.empty()) return *this;
  const TextPosition at = position_of(text, locate_pointer(text, pointer_));
  return InputError(file_, pointer_, reason_, at.line, at.col);
}

}  // namespace etwh
