// The result files `etwh report` turns into a page: `etwh run --json`, `etwh stress --json` and
// `etwh compare --json` outputs and `--trace` timelines, each kind told from the file's content
// (not its name).
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

namespace etwh::report_html {

enum class InputKind { kRun, kStress, kCompare, kTrace };
const char* input_kind_name(InputKind kind);

struct Input {
  std::string file;  // as named on the command line, for messages and the page
  std::string text;  // the file's content, to find line:col of a bad value
  InputKind kind = InputKind::kRun;
  nlohmann::json doc;
};

// Reads and classifies one result file. Throws InputError (file, line:col, JSON pointer,
// reason) when it cannot be read, is not JSON or is none of the three kinds.
Input load_input(const std::filesystem::path& file);

// The same from text already read; `file` names it in messages.
Input parse_input(std::string text, const std::string& file);

// Checked reads of an input's values: each throws InputError naming the input's file, the JSON
// pointer of the value and, found from the pointer, its line:col.
class Fields {
 public:
  explicit Fields(const Input& input) : input_(input) {}

  [[noreturn]] void fail(const std::string& pointer, const std::string& reason) const;
  const nlohmann::json& member(const nlohmann::json& obj, const std::string& pointer,
                               const char* key) const;
  const nlohmann::json& array(const nlohmann::json& obj, const std::string& pointer,
                              const char* key) const;
  const nlohmann::json& object(const nlohmann::json& obj, const std::string& pointer,
                               const char* key) const;
  std::string string(const nlohmann::json& obj, const std::string& pointer, const char* key) const;
  double number(const nlohmann::json& obj, const std::string& pointer, const char* key) const;
  // A string, or "" when the member is absent (optional fields).
  std::string optional_string(const nlohmann::json& obj, const std::string& pointer,
                              const char* key) const;

 private:
  const Input& input_;
};

}  // namespace etwh::report_html
