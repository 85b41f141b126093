// Bad input, the one error type every loader throws (scenarios, catalog, expectations, mutants,
// stress profiles): the file, where in it (line:col and the JSON pointer, as far as known) and
// why. `etwh` prints what() and exits 2.
#pragma once

#include <stdexcept>
#include <string>

namespace etwh {

class InputError : public std::runtime_error {
 public:
  // `line` and `col` are 1-based; 0 when unknown (a value from the command line, a file that
  // cannot be opened). `pointer` is empty when the problem is not at a JSON value.
  InputError(std::string file, std::string pointer, std::string reason, std::size_t line = 0,
             std::size_t col = 0);

  const std::string& file() const { return file_; }
  const std::string& pointer() const { return pointer_; }
  const std::string& reason() const { return reason_; }
  std::size_t line() const { return line_; }
  std::size_t col() const { return col_; }

  // The same error with its line:col found from the pointer in `text` (the file's content),
  // unless it has one already.
  InputError located_in(const std::string& text) const;

 private:
  std::string file_, pointer_, reason_;
  std::size_t line_ = 0, col_ = 0;
};

// "<file>:<line>:<col>: <pointer>: <reason>", leaving out what is unknown:
// "<file>: <pointer>: <reason>" without a position, "<file>:<line>:<col>: <reason>" without a
// pointer (a JSON syntax error).
std::string format_input_error(const std::string& file, const std::string& pointer,
                               const std::string& reason, std::size_t line, std::size_t col);

}  // namespace etwh
