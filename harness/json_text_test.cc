// The loaders' shared positions: a JSON pointer found in the text it came from.
#include "json_text.h"

#include <gtest/gtest.h>

namespace etwh {
namespace {

std::string at(const std::string& text, const std::string& pointer) {
  const TextPosition p = position_of(text, locate_pointer(text, pointer));
  return std::to_string(p.line) + ":" + std::to_string(p.col);
}

TEST(LocatePointer, FindsValuesKeysAndIndexes) {
  const std::string text =
      "{\n  \"a\": {\"b\": [10, {\"c\": \"x,]}\"}, 30]},\n  \"d/e\": 4, \"f~g\": [\"q\"]\n}";
  EXPECT_EQ(at(text, ""), "1:1");
  EXPECT_EQ(at(text, "/"), "1:1");
  EXPECT_EQ(at(text, "/a"), "2:8");
  EXPECT_EQ(at(text, "/a/b/0"), "2:15");
  EXPECT_EQ(at(text, "/a/b/1/c"), "2:25");
  EXPECT_EQ(at(text, "/a/b/2"), "2:34");  // past a string holding , ] and }
  EXPECT_EQ(at(text, "/d~1e"), "3:10");
  EXPECT_EQ(at(text, "/f~0g/0"), "3:21");
  // What does not exist is reported at its deepest existing parent.
  EXPECT_EQ(at(text, "/a/b/7"), "2:14");
  EXPECT_EQ(at(text, "/a/zz/0"), "2:8");
}

TEST(ParseInputJson, SyntaxErrorsGiveLineAndColumn) {
  try {
    parse_input_json("{\n  \"a\": 1,,\n}", "f.json");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 2u);
    EXPECT_EQ(e.col(), 10u);
    EXPECT_EQ(std::string(e.what()).rfind("f.json:2:10: JSON syntax error: ", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace etwh
