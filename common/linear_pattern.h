// etwh's own pattern matcher, for builds without RE2 (the Windows cross-build): a Thompson
// automaton simulated over the text, so matching takes time proportional to the pattern's length
// times the text's, never backtracking. Its syntax is a subset of RE2's, on bytes:
// literals, `.` (any byte but newline), classes `[a-z_]` and `[^...]`, the escapes \d \w \s
// \D \W \S \n \t \r \f \v and a backslash before any punctuation, anchors `^` `$` (the text's
// start and end), groups `(...)` and `(?:...)`, alternation `|`, repetition `*` `+` `?` (a
// trailing `?`, the lazy form, changes nothing for a search). Counted repetition `{n,m}`, flags,
// Unicode classes and other escapes are refused with a reason, as is a pattern over 1,000 bytes.
#pragma once

#include <bitset>
#include <string_view>
#include <vector>

namespace etwh::detail {

class LinearPattern {
 public:
  static constexpr std::size_t kMaxLength = 1000;

  // Throws PatternError (etwh/pattern.h) when `text` is not in the subset.
  explicit LinearPattern(std::string_view text);

  bool found_in(std::string_view text) const;

 private:
  enum class Op { kByte, kSplit, kJump, kBegin, kEnd, kMatch };
  struct Instruction {
    Op op;
    std::bitset<256> bytes;  // kByte: the bytes it takes
    int x = 0, y = 0;        // kSplit: both targets; kJump: x
  };
  friend class LinearCompiler;
  std::vector<Instruction> program_;
};

}  // namespace etwh::detail
