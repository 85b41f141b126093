// A pattern a user gives etwh (`run --filter`, `compare --only`, `expect_event().field_matches`):
// matched in time linear in the pattern and the text, whatever the pattern, so that no pattern
// can hang a run (ECMAScript backtracking takes exponential time on `((a*)*)*b`).
//
//   etwh::Pattern only("^BM_Event(Write|Enabled)");  // throws PatternError when it is not one
//   if (only.found_in(name)) ...
//
// The syntax is RE2's (Linux builds, with the Debian package libre2). Where RE2 is not built
// (the Windows cross-build: mingw has no RE2), etwh's own linear-time matcher takes the subset
// described in pattern_syntax() and refuses anything else with a reason.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace etwh {

// Not a pattern: what() says why (e.g. "missing ): ((a"), without the option's name.
class PatternError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Pattern {
 public:
  // Compiles `text`; throws PatternError when it is not a pattern of this build's syntax.
  explicit Pattern(std::string_view text);
  ~Pattern();
  Pattern(const Pattern&);
  Pattern& operator=(const Pattern&);

  // Whether the pattern matches somewhere in `text` (a search: anchor with ^ and $).
  bool found_in(std::string_view text) const;

 private:
  struct Engine;
  std::shared_ptr<const Engine> engine_;
};

// The syntax this build accepts, in one line for help texts: RE2's, or the subset.
const char* pattern_syntax();

}  // namespace etwh
