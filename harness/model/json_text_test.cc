// The loaders' shared positions: a JSON pointer found in the text it came from.
#include "harness/model/json_text.h"
#include "tests/lib/thrown.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#ifndef _WIN32
#include <sys/stat.h>
#endif

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

std::string input_error_of(const std::filesystem::path& file) {
  return test_support::thrown<InputError>([&] { read_input_file(file); }, "no error");
}

class ReadInputFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("etwh-read-input-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
            "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(ReadInputFile, ReadsARegularFileWhole) {
  const auto file = dir_ / "a.json";
  std::ofstream(file, std::ios::binary) << std::string(200000, 'x');
  EXPECT_EQ(read_input_file(file).size(), 200000u);
}

TEST_F(ReadInputFile, RefusesADirectoryAMissingFileAndAnOversizedFile) {
  EXPECT_EQ(input_error_of(dir_), dir_.string() + ": is a directory, not a regular file");
  EXPECT_EQ(input_error_of(dir_ / "none.json")
                .rfind((dir_ / "none.json").string() + ": cannot open the file", 0),
            0u);
  const auto big = dir_ / "big.json";
  std::ofstream(big, std::ios::binary) << std::string(kMaxInputFileBytes + 1, ' ');
  EXPECT_EQ(input_error_of(big),
            big.string() + ": larger than the maximum of 16 MiB for an input file");
  std::filesystem::resize_file(big, kMaxInputFileBytes);
  EXPECT_EQ(read_input_file(big).size(), kMaxInputFileBytes);
}

#ifndef _WIN32
// Without the check, reading /dev/zero grows without end and opening a FIFO blocks.
TEST_F(ReadInputFile, RefusesDevicesAndFifosWithoutReadingThem) {
  EXPECT_EQ(input_error_of("/dev/zero"), "/dev/zero: is a device, not a regular file");
  const auto fifo = dir_ / "fifo.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(input_error_of(fifo), fifo.string() + ": is a FIFO, not a regular file");
}
#endif

TEST(ParseInputJson, HugeNumbersAndNulsInKeysGiveFileAndPlace) {
  try {
    parse_input_json("{\n  \"level\": 1e999\n}", "f.json");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 2u) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("f.json:2:", 0), 0u) << e.what();
  }
  try {
    parse_input_json(std::string("{\"le\0vel\": 1}", 13), "f.json");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("f.json:1:", 0), 0u) << e.what();
  }
}

// json::parse lets the last of two equal keys win: a loader then reads a value the file's
// author may not have meant. Refused with the pointer of the second and its place.
TEST(ParseInputJson, DuplicateKeysAreRefusedWithTheirPointerAndPlace) {
  const std::string text =
      "{\"cases\": [{\"id\": \"a\"},\n  {\"id\": \"b\", \"x/y\": 1,\n   \"x/y\": 2}]}";
  try {
    parse_input_json(text, "f.json");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "f.json:3:4: /cases/1/x~1y: duplicate key \"x/y\" (each key once per object)");
  }
  // Equal keys in two objects are no duplicate; the document is what json::parse builds.
  const std::string fine = "{\"a\": {\"k\": 1}, \"b\": [{\"k\": 2}, {\"k\": [1e3, null]}]}";
  EXPECT_EQ(parse_input_json(fine, "f.json"), nlohmann::json::parse(fine));
}

TEST(ParseInputJson, ANumberNoDoubleHoldsHasItsPointer) {
  try {
    parse_input_json("{\"a\": [0, {\"level\": 1e999}]}", "f.json");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/a/1/level") << e.what();
    EXPECT_NE(std::string(e.what()).find("1e999"), std::string::npos) << e.what();
  }
  try {
    parse_input_json("[1, 2, -1e400]", "f.json");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/2") << e.what();
  }
}

// 1e30 is a whole number, not a fractional one: "expected an integer, got ..." says why.
TEST(JsonTypeName, WholeNumbersInFloatingPointFormAreNamedSo) {
  EXPECT_EQ(json_type_name(nlohmann::json::parse("1e30")), "a number out of range");
  EXPECT_EQ(json_type_name(nlohmann::json::parse("-1e19")), "a number out of range");
  EXPECT_EQ(json_type_name(nlohmann::json::parse("1e3")), "a number in floating-point form");
  EXPECT_EQ(json_type_name(nlohmann::json::parse("0.5")), "a fractional number");
}

// A key with a NUL (\u0000 in the file) used to cut the message short where it was printed.
TEST(InputErrorText, ControlCharactersInPointerAndReasonAreEscaped) {
  const InputError e("f.json", std::string("/cases/0/le\0vel", 15),
                     std::string("unknown field \"le\0vel\"", 22), 1, 12);
  EXPECT_EQ(std::string(e.what()),
            "f.json:1:12: /cases/0/le\\u0000vel: unknown field \"le\\u0000vel\"");
  EXPECT_EQ(std::strlen(e.what()), std::string(e.what()).size());
}

}  // namespace
}  // namespace etwh
