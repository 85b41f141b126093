#include "input_error.h"

#include "json_text.h"

namespace etwh {

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
    s += pointer;
    s += ": ";
  }
  s += reason;
  return s;
}

InputError::InputError(std::string file, std::string pointer, std::string reason,
                       std::size_t line, std::size_t col)
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
