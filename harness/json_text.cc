#include "json_text.h"

#include <cctype>
#include <fstream>
#include <sstream>
#include <vector>

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

TextPosition position_of(const std::string& text, std::size_t offset) {
  TextPosition p;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++p.line;
      p.col = 1;
    } else {
      ++p.col;
    }
  }
  return p;
}

std::string line_col(const std::string& text, std::size_t offset) {
  const TextPosition p = position_of(text, offset);
  return std::to_string(p.line) + ":" + std::to_string(p.col);
}

namespace {

// Why `file` cannot be an input, or "" when it is a regular file (symbolic links followed).
// Checked before opening: opening a FIFO blocks until a writer comes, and a device such as
// /dev/zero never ends.
std::string not_an_input_file(const std::filesystem::path& file) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(file, ec);
  if (ec) return "cannot open the file (" + ec.message() + ")";
  switch (st.type()) {
    case fs::file_type::regular: return "";
    case fs::file_type::directory: return "is a directory, not a regular file";
    case fs::file_type::fifo: return "is a FIFO, not a regular file";
    case fs::file_type::socket: return "is a socket, not a regular file";
    case fs::file_type::character:
    case fs::file_type::block: return "is a device, not a regular file";
    default: return "is not a regular file";
  }
}

}  // namespace

std::string read_input_file(const std::filesystem::path& file) {
  if (const std::string why = not_an_input_file(file); !why.empty()) {
    throw InputError(file.string(), "", why);
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file.string(), "", "cannot open the file");
  // Read in chunks and stop one byte past the maximum: the size a stat gives may change.
  std::string text;
  char chunk[64 * 1024];
  while (text.size() <= kMaxInputFileBytes && in.read(chunk, sizeof chunk).gcount() > 0) {
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) throw InputError(file.string(), "", "cannot read the file");
  if (text.size() > kMaxInputFileBytes) {
    throw InputError(file.string(), "",
                     "larger than the maximum of " +
                         std::to_string(kMaxInputFileBytes / (1024 * 1024)) +
                         " MiB for an input file");
  }
  return text;
}

nlohmann::json parse_input_json(const std::string& text, const std::string& file) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann's byte offset points one past the offending character; its message starts with
    // its own position, which ours replaces.
    const TextPosition at = position_of(text, e.byte > 0 ? e.byte - 1 : 0);
    std::string reason = e.what();
    const auto colon = reason.rfind(": ");
    if (colon != std::string::npos) reason = reason.substr(colon + 2);
    throw InputError(file, "", "JSON syntax error: " + reason, at.line, at.col);
  } catch (const nlohmann::json::out_of_range& e) {  // a number no double holds (1e999)
    const TextPosition at = position_of(text, json_error_offset(text));
    throw InputError(file, "", json_error_reason(e), at.line, at.col);
  }
}

namespace {

// A scanner just good enough to find where values start in text that nlohmann already
// accepted: it never validates, only skips.
class PointerScanner {
 public:
  explicit PointerScanner(const std::string& text) : t_(text) {}

  std::size_t find(const std::vector<std::string>& tokens) {
    skip_ws();
    std::size_t found = at_;
    for (const std::string& token : tokens) {
      if (!enter(token)) break;
      found = at_;
    }
    return found;
  }

 private:
  // Moves to the value named `token` inside the container at at_; false if there is none.
  bool enter(const std::string& token) {
    if (at_ >= t_.size()) return false;
    const char open = t_[at_];
    if (open != '{' && open != '[') return false;
    ++at_;
    for (std::size_t index = 0;; ++index) {
      skip_ws();
      if (at_ >= t_.size() || t_[at_] == '}' || t_[at_] == ']') return false;
      bool match = open == '[' && token == std::to_string(index);
      if (open == '{') {
        match = read_string() == token;
        skip_ws();
        ++at_;  // ':'
        skip_ws();
      }
      if (match) return true;
      skip_value();
      skip_ws();
      if (at_ < t_.size() && t_[at_] == ',') ++at_;
    }
  }

  void skip_ws() {
    while (at_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[at_]))) ++at_;
  }

  // The string at at_ (escapes of \" \\ \/ and the single-letter ones decoded; \u kept as is,
  // enough to compare with pointer tokens of ASCII keys).
  std::string read_string() {
    std::string s;
    ++at_;  // '"'
    while (at_ < t_.size() && t_[at_] != '"') {
      if (t_[at_] == '\\' && at_ + 1 < t_.size()) ++at_;
      s += t_[at_++];
    }
    ++at_;
    return s;
  }

  void skip_value() {
    if (at_ >= t_.size()) return;
    if (t_[at_] == '"') {
      read_string();
      return;
    }
    if (t_[at_] != '{' && t_[at_] != '[') {
      while (at_ < t_.size() && t_[at_] != ',' && t_[at_] != '}' && t_[at_] != ']' &&
             !std::isspace(static_cast<unsigned char>(t_[at_])))
        ++at_;
      return;
    }
    int depth = 0;
    while (at_ < t_.size()) {
      const char c = t_[at_];
      if (c == '"') {
        read_string();
        continue;
      }
      ++at_;
      if (c == '{' || c == '[') ++depth;
      if ((c == '}' || c == ']') && --depth == 0) return;
    }
  }

  const std::string& t_;
  std::size_t at_ = 0;
};

}  // namespace

std::size_t locate_pointer(const std::string& text, const std::string& pointer) {
  // "/a/b~1c" -> {"a", "b/c"}; "" and "/" name the whole document.
  std::vector<std::string> tokens;
  for (std::size_t at = 0; at < pointer.size() && pointer[at] == '/';) {
    std::size_t end = pointer.find('/', at + 1);
    if (end == std::string::npos) end = pointer.size();
    std::string token;
    for (std::size_t i = at + 1; i < end; ++i) {
      if (pointer[i] == '~' && i + 1 < end) {
        token += pointer[++i] == '1' ? '/' : '~';
      } else {
        token += pointer[i];
      }
    }
    if (!(tokens.empty() && token.empty() && end == pointer.size())) tokens.push_back(token);
    at = end;
  }
  return PointerScanner(text).find(tokens);
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
