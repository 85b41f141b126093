#include "etwh/pattern.h"

#include "linear_pattern.h"

#include <gtest/gtest.h>
#include <re2/re2.h>

#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace etwh {
namespace {

TEST(Pattern, SearchesAnywhereUnlessAnchored) {
  EXPECT_TRUE(Pattern("Write").found_in("BM_EventWrite/1"));
  EXPECT_FALSE(Pattern("^Write").found_in("BM_EventWrite/1"));
  EXPECT_TRUE(Pattern("^BM_Event(Write|Enabled)$").found_in("BM_EventEnabled"));
}

TEST(Pattern, ANonPatternSaysWhy) {
  try {
    Pattern("((a");
    FAIL() << "accepted";
  } catch (const PatternError& e) {
    EXPECT_NE(std::string(e.what()).find("missing )"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Pattern("a**"), PatternError);
  EXPECT_THROW(Pattern("[z-a]"), PatternError);
}

// The pattern that backtracks for minutes under std::regex (ECMAScript) on 30 a's: here it is
// one pass over the text. A hang fails the test by its CTest timeout.
const std::string kCatastrophic = "((a*)*)*((a*)*)*((a*)*)*b";

TEST(Pattern, CatastrophicPatternRunsInLinearTime) {
  const std::string text(100000, 'a');
  EXPECT_FALSE(Pattern(kCatastrophic).found_in(text));
  EXPECT_FALSE(detail::LinearPattern(kCatastrophic).found_in(text));
  EXPECT_TRUE(detail::LinearPattern(kCatastrophic).found_in(text + "b"));
}

// The fallback matcher (the Windows build's) against RE2, on every pattern of its subset below
// and every text: the same answer each time.
TEST(LinearPattern, AgreesWithRe2OnItsSubset) {
  // Tables, a few entries a row.
  // clang-format off
  const std::vector<std::string> patterns = {
      "", "a", "abc", "^abc$", "a|b|", "(a|ab)(c|bcd)(d*)", "a*", "a+b", "a?b?c", "(?:ab)+$",
      ".", "^.$", "[a-c]+", "[^a-c]", "[]a]", "[a-]", "\\d+", "\\D", "\\w+\\s\\W", "[\\d_]+$",
      "\\.", "x\\*y", "^(a*)*$", "(a|b)*c", "a*?b", "((a*)*)*b", "^$", "$^", "^", "$", "a^b",
      "colou?r", "a??b", "a+?", "[0-9]+(\\.[0-9]+)?", "^run/.*clocks", "\\(\\)", "[\\]]",
      "[\\-a]", "(|a)b"};
  const std::vector<std::string> texts = {
      "", "a", "b", "ab", "abc", "abcd", "xabcx", "aaab", "aaa", "c", "d", "\n", "a\nb",
      "color", "colour", "12.5", "12.", "x*y", "xy", "_9 !", "hello world", "run/a/clocks",
      "()", "]", "-", "abbcd", "aaaaac", "a b", "ba", "9"};
  // clang-format on
  for (const std::string& p : patterns) {
    RE2 re(p);
    ASSERT_TRUE(re.ok()) << p;
    const detail::LinearPattern ours(p);
    for (const std::string& t : texts) {
      EXPECT_EQ(ours.found_in(t), RE2::PartialMatch(t, re)) << "/" << p << "/ on \"" << t << "\"";
    }
  }
}

// Random patterns over a small alphabet and the operators of the subset, against RE2 on random
// texts: both accept or refuse each pattern, and agree on every text they match.
TEST(LinearPattern, AgreesWithRe2OnRandomPatterns) {
  std::mt19937 rng(20261128);
  const std::string pieces[] = {"a", "b", ".", "[ab]", "[^a]", "(",   ")",   "|", "*",
                                "+", "?", "^", "$",    "(?:",  "\\.", "\\d", "1"};
  const char letters[] = {'a', 'b', '1', '.', '\n'};
  int compared = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string p;
    for (std::size_t n = rng() % 8; n > 0; --n) p += pieces[rng() % std::size(pieces)];
    RE2 re(p, RE2::Quiet);
    bool ours_ok = true;
    std::optional<detail::LinearPattern> ours;
    try {
      ours.emplace(p);
    } catch (const PatternError&) {
      ours_ok = false;
    }
    // Flags "(?" are refused by the subset (RE2 takes some of them, "(?)" too).
    if (!ours_ok && p.find("(?") != std::string::npos) continue;
    ASSERT_EQ(ours_ok, re.ok()) << "/" << p << "/: " << re.error();
    if (!ours_ok) continue;
    for (int t = 0; t < 20; ++t) {
      std::string text;
      for (std::size_t n = rng() % 7; n > 0; --n) text += letters[rng() % std::size(letters)];
      ASSERT_EQ(ours->found_in(text), RE2::PartialMatch(text, re))
          << "/" << p << "/ on \"" << text << "\"";
      ++compared;
    }
  }
  EXPECT_GT(compared, 10000);
}

TEST(LinearPattern, RefusesWhatItDoesNotTake) {
  for (const char* p :
       {"a{2}", "(?i)a", "\\bword", "\\pL", "(a", "a)", "[a", "*a", "a\\", "a**", "[b-a]"}) {
    EXPECT_THROW(detail::LinearPattern{p}, PatternError) << p;
  }
  EXPECT_THROW(detail::LinearPattern(std::string(1001, 'a')), PatternError);
  EXPECT_NO_THROW(detail::LinearPattern(std::string(1000, 'a')));
}

}  // namespace
}  // namespace etwh
