#include "harness/model/json_text.h"

#include <etwh/json_parse_failure.h>

#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>
#include <vector>

#ifndef _WIN32
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#endif

namespace etwh {

std::string json_type_name(const nlohmann::json& v) {
  using nlohmann::json;
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::string: return "a string";
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    case json::value_t::number_float: {
      // An integer written with an exponent or too large for 64 bits (1e30) parses as a double.
      const double d = v.get<double>();
      if (std::trunc(d) != d) return "a fractional number";
      return std::fabs(d) < 0x1p63 ? "a number in floating-point form" : "a number out of range";
    }
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

std::string not_regular(bool directory, bool fifo, bool socket, bool device) {
  if (directory) return "is a directory, not a regular file";
  if (fifo) return "is a FIFO, not a regular file";
  if (socket) return "is a socket, not a regular file";
  if (device) return "is a device, not a regular file";
  return "is not a regular file";
}

[[noreturn]] void too_large(const std::filesystem::path& file) {
  throw InputError(file.string(), "",
                   "larger than the maximum of " +
                       std::to_string(kMaxInputFileBytes / (1024 * 1024)) +
                       " MiB for an input file");
}

}  // namespace

#ifndef _WIN32
// Opened without blocking (a FIFO with no writer would block an ordinary open), then judged by
// what the descriptor is, so that nothing can be swapped in between: only a regular file is
// read, a device such as /dev/zero never is (it never ends).
std::string read_input_file(const std::filesystem::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    throw InputError(file.string(), "",
                     std::string("cannot open the file (") + std::strerror(errno) + ")");
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw InputError(file.string(), "", "cannot read the file");
  if (!S_ISREG(st.st_mode)) {
    throw InputError(file.string(), "",
                     not_regular(S_ISDIR(st.st_mode), S_ISFIFO(st.st_mode), S_ISSOCK(st.st_mode),
                                 S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)));
  }
  // Read in chunks and stop one byte past the maximum: the size fstat gave may change.
  std::string text;
  char chunk[64 * 1024];
  while (text.size() <= kMaxInputFileBytes) {
    const ssize_t got = ::read(fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw InputError(file.string(), "", "cannot read the file");
    if (got == 0) break;
    text.append(chunk, static_cast<std::size_t>(got));
  }
  if (text.size() > kMaxInputFileBytes) too_large(file);
  return text;
}
#else
// Windows: judged by its path first (no FIFO to block on there), then read.
std::string read_input_file(const std::filesystem::path& file) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(file, ec);
  if (ec) throw InputError(file.string(), "", "cannot open the file (" + ec.message() + ")");
  if (st.type() != fs::file_type::regular) {
    const fs::file_type t = st.type();
    throw InputError(file.string(), "",
                     not_regular(t == fs::file_type::directory, t == fs::file_type::fifo,
                                 t == fs::file_type::socket,
                                 t == fs::file_type::character || t == fs::file_type::block));
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file.string(), "", "cannot open the file");
  std::string text;
  char chunk[64 * 1024];
  while (text.size() <= kMaxInputFileBytes && in.read(chunk, sizeof chunk).gcount() > 0) {
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) throw InputError(file.string(), "", "cannot read the file");
  if (text.size() > kMaxInputFileBytes) too_large(file);
  return text;
}
#endif

namespace {

// Builds the document as json::parse does, refusing what it accepts silently: a key repeated in
// one object (the last value would win). Knows the JSON pointer of the value being read, for a
// number out of any double's range (1e999), which nlohmann reports without a place.
class CheckedBuilder : public nlohmann::json_sax<nlohmann::json> {
 public:
  using json = nlohmann::json;

  bool null() override { return put(json(nullptr)); }
  bool boolean(bool v) override { return put(json(v)); }
  bool number_integer(number_integer_t v) override { return put(json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return put(json(v)); }
  bool number_float(number_float_t v, const string_t&) override { return put(json(v)); }
  bool string(string_t& v) override { return put(json(std::move(v))); }
  bool binary(binary_t& v) override { return put(json::binary(std::move(v))); }
  bool start_object(std::size_t) override { return open(json::object()); }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    ++keys;
    Frame& f = frames_.back();
    if (f.value->contains(k)) {
      duplicate = k;
      pointer = pointer_to(frames_.size() - 1) + "/" + escaped(k);
      return false;
    }
    f.key = std::move(k);
    return true;
  }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& e) override {
    error_offset = position > 0 ? position - 1 : 0;
    error = json_error_reason(e);
    // nlohmann's syntax messages start with their own position, which ours replaces.
    if (const auto colon = error.rfind(": "); colon != std::string::npos && e.id != 406)
      error = error.substr(colon + 2);
    out_of_range = e.id == 406;
    if (out_of_range) pointer = pointer_to(frames_.size());
    return false;
  }

  json take() { return std::move(root_); }

  std::size_t keys = 0;   // key events so far: the last one is the duplicate's
  std::string duplicate;  // the repeated key, when that stopped the parse
  std::string pointer;    // where the duplicate or the number out of range is
  std::string error;
  std::size_t error_offset = 0;
  bool out_of_range = false;

 private:
  struct Frame {
    json* value;
    std::string key;  // an object's current key
  };

  static std::string escaped(const std::string& token) {
    std::string out;
    for (const char c : token) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
    return out;
  }
  // The pointer of the value being read inside the first `depth` frames: in an enclosing array
  // its last element, in the innermost one the element to come.
  std::string pointer_to(std::size_t depth) const {
    std::string p;
    for (std::size_t i = 0; i < depth && i < frames_.size(); ++i) {
      const Frame& f = frames_[i];
      // Appended in two steps: mingw-w64's GCC 12 at -O3 warns (-Wrestrict, a false positive)
      // on "/" + std::string&&.
      p += '/';
      if (f.value->is_object()) {
        p += escaped(f.key);
      } else {
        const std::size_t size = f.value->size();
        p += std::to_string(i + 1 < frames_.size() ? size - 1 : size);
      }
    }
    return p;
  }
  json* place(json&& v) {
    if (frames_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    json& parent = *frames_.back().value;
    if (parent.is_object()) {
      json& slot = parent[frames_.back().key];
      slot = std::move(v);
      return &slot;
    }
    parent.push_back(std::move(v));
    return &parent.back();
  }
  bool put(json&& v) {
    place(std::move(v));
    return true;
  }
  bool open(json&& container) {
    frames_.push_back({place(std::move(container)), ""});
    return true;
  }
  bool close() {
    frames_.pop_back();
    return true;
  }

  json root_;
  std::vector<Frame> frames_;
};

// The offset of the `n`th key (1-based) of `text`, a JSON document read that far: keys are the
// strings a ':' follows, met in the order the parser reports them.
std::size_t offset_of_key(const std::string& text, std::size_t n) {
  std::size_t seen = 0;
  for (std::size_t at = 0; at < text.size(); ++at) {
    if (text[at] != '"') continue;
    const std::size_t start = at;
    for (++at; at < text.size() && text[at] != '"'; ++at) {
      if (text[at] == '\\') ++at;
    }
    std::size_t next = at + 1;
    while (next < text.size() && std::isspace(static_cast<unsigned char>(text[next]))) ++next;
    if (next < text.size() && text[next] == ':' && ++seen == n) return start;
  }
  return 0;
}

}  // namespace

nlohmann::json parse_input_json(const std::string& text, const std::string& file) {
  CheckedBuilder builder;
  if (nlohmann::json::sax_parse(text, &builder)) return builder.take();
  if (!builder.duplicate.empty()) {
    const TextPosition at = position_of(text, offset_of_key(text, builder.keys));
    throw InputError(file, builder.pointer,
                     "duplicate key \"" + builder.duplicate + "\" (each key once per object)",
                     at.line, at.col);
  }
  const TextPosition at = position_of(text, builder.error_offset);
  if (builder.out_of_range) {  // a number no double holds (1e999): its field is known
    throw InputError(file, builder.pointer, builder.error, at.line, at.col);
  }
  throw InputError(file, "", "JSON syntax error: " + builder.error, at.line, at.col);
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

std::size_t json_error_offset(const std::string& text) {
  etwh::JsonParseFailure failure;
  nlohmann::json::sax_parse(text, &failure);
  if (!failure.failed) return text.size();
  return failure.position > 0 ? failure.position - 1 : 0;
}

std::string json_error_reason(const std::exception& e) {
  std::string reason = e.what();
  if (reason.starts_with("[json.exception.")) {
    if (auto end = reason.find("] "); end != std::string::npos) reason.erase(0, end + 2);
  }
  return reason;
}

}  // namespace etwh
