// etwh::OutputFile: what is refused before any work, what is replaced and how.
#include "etwh/output_file.h"

#include "tests/lib/scratch_dir.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;

class OutputFileTest : public ::testing::Test {
 protected:
  std::string at(const std::string& name) const { return (dir_ / name).string(); }
  static std::string read(const fs::path& file) {
    std::ifstream in(file);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // The files of the folder besides `except` (no temporary file left).
  std::size_t entries() const {
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir_), {}));
  }

  const etwh::test_support::ScratchDir scratch_{"etwh-output"};
  const fs::path& dir_ = scratch_.path();
};

// Refused with the path named, before anything is written, and left as it was.
void expect_refused(const std::string& path, const std::string& reason) {
  try {
    etwh::OutputFile file(path);
    ADD_FAILURE() << path << " accepted";
  } catch (const etwh::OutputRefused& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path + ": ", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
  }
}

TEST_F(OutputFileTest, ANewFileIsWrittenWhole) {
  etwh::OutputFile file(at("new.json"));
  EXPECT_FALSE(fs::exists(at("new.json")));  // nothing made by the check
  file.write("{}\n");
  EXPECT_EQ(read(at("new.json")), "{}\n");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(OutputFileTest, ARegularFileIsReplacedKeepingItsPermissions) {
  std::ofstream(at("old.json")) << "old content, longer than the new";
  fs::permissions(at("old.json"), fs::perms::owner_read | fs::perms::owner_write);
  const auto perms_before = fs::status(at("old.json")).permissions();
  etwh::OutputFile(at("old.json")).write("new");
  EXPECT_EQ(read(at("old.json")), "new");
  EXPECT_EQ(fs::status(at("old.json")).permissions(), perms_before);
  EXPECT_EQ(entries(), 1u);
}

TEST_F(OutputFileTest, ASymlinkToARegularFileStaysALinkAndItsTargetIsReplaced) {
  std::ofstream(at("real.json")) << "old";
  fs::create_symlink(at("real.json"), at("link.json"));
  etwh::OutputFile(at("link.json")).write("new");
  EXPECT_TRUE(fs::is_symlink(at("link.json")));
  EXPECT_EQ(read(at("real.json")), "new");
}

TEST_F(OutputFileTest, DevicesFifosDirectoriesAndLinksToThemAreRefused) {
  ASSERT_EQ(::mkfifo(at("fifo").c_str(), 0600), 0);
  fs::create_directory(at("dir"));
  fs::create_symlink("/dev/null", at("to-device"));
  fs::create_symlink(at("fifo"), at("to-fifo"));
  fs::create_symlink(at("nothing"), at("dangling"));
  expect_refused("/dev/null", "a device");
  expect_refused(at("fifo"), "a FIFO");
  expect_refused(at("dir"), "a directory");
  expect_refused(at("to-device"), "a symlink to a device");
  expect_refused(at("to-fifo"), "a symlink to a FIFO");
  expect_refused(at("dangling"), "a symlink to nothing");
  expect_refused(at("no-such-folder/out.json"), "does not exist");
  EXPECT_TRUE(fs::is_fifo(at("fifo")));
  EXPECT_TRUE(fs::is_symlink(at("to-device")));
  EXPECT_EQ(entries(), 5u);  // nothing created, nothing replaced
}

// A path that turned into something else between the check and the end is not replaced.
TEST_F(OutputFileTest, APathThatBecameAFifoAfterTheCheckIsNotReplaced) {
  etwh::OutputFile file(at("late"));
  ASSERT_EQ(::mkfifo(at("late").c_str(), 0600), 0);
  EXPECT_THROW(file.write("x"), etwh::OutputRefused);
  EXPECT_TRUE(fs::is_fifo(at("late")));
  EXPECT_EQ(entries(), 1u);
}

TEST_F(OutputFileTest, DashIsStandardOutput) {
  etwh::OutputFile file("-");
  EXPECT_TRUE(file.to_stdout());
  testing::internal::CaptureStdout();
  file.write("to stdout\n");
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "to stdout\n");
  EXPECT_FALSE(etwh::output_file("").has_value());
}

}  // namespace
