#include "etwh/pattern.h"

#include "linear_pattern.h"

#ifdef ETWH_PATTERN_RE2
#include <re2/re2.h>
#endif

namespace etwh {

#ifdef ETWH_PATTERN_RE2

struct Pattern::Engine {
  explicit Engine(std::string_view text)
      : re(re2::StringPiece(text.data(), text.size()), options()) {}
  static RE2::Options options() {
    RE2::Options o;
    o.set_log_errors(false);  // the caller says what was wrong, once
    return o;
  }
  RE2 re;
};

Pattern::Pattern(std::string_view text) : engine_(std::make_shared<const Engine>(text)) {
  if (!engine_->re.ok()) throw PatternError(engine_->re.error());
}

bool Pattern::found_in(std::string_view text) const {
  return RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), engine_->re);
}

const char* pattern_syntax() { return "RE2 syntax, matched in linear time"; }

#else

struct Pattern::Engine {
  explicit Engine(std::string_view text) : matcher(text) {}
  detail::LinearPattern matcher;
};

Pattern::Pattern(std::string_view text) : engine_(std::make_shared<const Engine>(text)) {}

bool Pattern::found_in(std::string_view text) const { return engine_->matcher.found_in(text); }

const char* pattern_syntax() {
  return "a subset of RE2 syntax, linear time: literals . [a-z] [^...] \\d \\w \\s \\D \\W \\S "
         "^ $ (...) (?:...) | * + ?";
}

#endif

Pattern::~Pattern() = default;
Pattern::Pattern(const Pattern&) = default;
Pattern& Pattern::operator=(const Pattern&) = default;

}  // namespace etwh
