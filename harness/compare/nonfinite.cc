#include "harness/compare/nonfinite.h"

#include <array>
#include <cmath>
#include <limits>
#include <string_view>

namespace etwh::compare {
namespace {

struct Token {
  std::string_view bare;    // as Google Benchmark writes it
  std::string_view marker;  // a JSON string no longer than `bare`
  std::string_view parsed;  // the marker as the parser gives it (UTF-8)
  double value;
};

// The markers are JSON strings that no benchmark field holds: "N" fits in the three bytes of
// NaN, "\u221e" (the infinity sign, escaped) in the eight of Infinity.
constexpr double kInf = std::numeric_limits<double>::infinity();
const std::array<Token, 4> kTokens = {{
    {"-Infinity", "\"-\\u221e\"", "-\xe2\x88\x9e", -kInf},
    {"Infinity", "\"\\u221e\"", "\xe2\x88\x9e", kInf},
    {"-NaN", "\"-N\"", "-N", -std::numeric_limits<double>::quiet_NaN()},
    {"NaN", "\"N\"", "N", std::numeric_limits<double>::quiet_NaN()},
}};

bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace

std::string nonfinite_as_markers(const std::string& text, int& replaced) {
  replaced = 0;
  std::string out = text;
  bool in_string = false;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const char c = out[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character, whatever it is
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      continue;
    }
    if (c != 'N' && c != 'I' && c != '-') continue;
    if (i > 0 && word_char(out[i - 1])) continue;
    for (const Token& t : kTokens) {
      const std::size_t end = i + t.bare.size();
      if (std::string_view(out).substr(i, t.bare.size()) != t.bare) continue;
      if (end < out.size() && word_char(out[end])) continue;  // NaNa is no token
      std::string with = std::string(t.marker);
      with.resize(t.bare.size(), ' ');
      out.replace(i, t.bare.size(), with);
      i = end - 1;
      ++replaced;
      break;
    }
  }
  return out;
}

std::optional<double> marker_value(const nlohmann::json& v) {
  if (!v.is_string()) return std::nullopt;
  const std::string& s = v.get_ref<const std::string&>();
  for (const Token& t : kTokens) {
    if (s == t.parsed) return t.value;
  }
  return std::nullopt;
}

}  // namespace etwh::compare
