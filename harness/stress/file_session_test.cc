#include "harness/stress/file_session.h"

#include "harness/environment/session_properties.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>

namespace etwh::stress {
namespace {

// fio 3.33's --output-format=json, cut to what is read (a job's write bandwidth in bytes/s).
constexpr const char* kFioOutput =
    R"(note: both iodepth >= 1 and synchronous I/O engine are selected
{
  "fio version" : "fio-3.33",
  "jobs" : [
    {
      "jobname" : "etwh-disk-write",
      "error" : 0,
      "read" : {"io_bytes" : 0, "bw_bytes" : 0},
      "write" : {"io_bytes" : 134217728, "bw_bytes" : 523241472, "bw" : 510977}
    }
  ]
})";

TEST(StressFileSession, FioWriteRateIsReadFromItsJson) {
  std::string why;
  const auto mb = fio_write_mb_per_s(kFioOutput, why);
  ASSERT_TRUE(mb) << why;
  EXPECT_DOUBLE_EQ(*mb, 523.241472);
}

TEST(StressFileSession, FioOutputWithoutARateGivesNoneAndSaysWhy) {
  std::string why;
  EXPECT_FALSE(fio_write_mb_per_s("fio: command not found", why));
  EXPECT_EQ(why, "fio's output is not JSON");
  EXPECT_FALSE(fio_write_mb_per_s(R"({"jobs": []})", why));
  EXPECT_EQ(why, "fio's output names no job");
  EXPECT_FALSE(fio_write_mb_per_s(R"({"jobs": [{"error": 5, "write": {"bw_bytes": 9}}]})", why));
  EXPECT_EQ(why, "fio's job failed with error 5");
  EXPECT_FALSE(fio_write_mb_per_s(R"({"jobs": [{"error": 0, "write": {"bw_bytes": 0}}]})", why));
  EXPECT_EQ(why, "fio measured no write bandwidth");
  EXPECT_FALSE(fio_write_mb_per_s(R"({"jobs": [{"error": 0, "read": {"bw_bytes": 7}}]})", why));
  EXPECT_EQ(why, "fio's output has no write bandwidth");
}

TEST(StressFileSession, LogFileGoesIntoTheProperties) {
  Properties p;
  set_log_file(p.get(), p.size(), "/tmp/x/s.etl", {FileMode::kCircular, 5});
  EXPECT_EQ(p.get()->LogFileMode, static_cast<ULONG>(EVENT_TRACE_FILE_MODE_CIRCULAR));
  EXPECT_EQ(p.get()->MaximumFileSize, 5u);
  ASSERT_GT(p.get()->LogFileNameOffset, p.get()->LoggerNameOffset);
  EXPECT_STREQ(reinterpret_cast<const char*>(p.get()) + p.get()->LogFileNameOffset, "/tmp/x/s.etl");
  Properties q;
  set_log_file(q.get(), q.size(), "a.etl", {FileMode::kSequential, 0});
  EXPECT_EQ(q.get()->LogFileMode, static_cast<ULONG>(EVENT_TRACE_FILE_MODE_SEQUENTIAL));
  EXPECT_THROW(set_log_file(q.get(), q.size(), std::string(2000, 'a'), {}), StressHarnessError);
}

TEST(StressFileSession, RunFolderIsMadeAndRemoved) {
  std::filesystem::path kept;
  {
    RunFolder f("test");
    kept = f.path();
    EXPECT_TRUE(std::filesystem::is_directory(kept));
    std::ofstream(kept / "inside") << "x";
  }
  EXPECT_FALSE(std::filesystem::exists(kept));
}

// A wrapped circular file's rate counts the overwritten buffers (STOP's BuffersWritten beyond
// the header's) as written; a sequential file (both counts equal) its size alone.
TEST(StressFileSession, WrittenRateCountsTheBuffersACircularFileOverwrote) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "etwh-file-session-rate-test.etl";
  std::ofstream(path, std::ios::binary) << std::string(4 * 1024, 'x');
  SessionResult s;
  s.file.emplace();
  s.file->path = path.string();
  s.file->header_buffers_written = 4;
  s.buffers_written = 4;
  s.buffer_size_kb = 1;
  note_file_written(s, 0, 1000000000);
  EXPECT_EQ(s.file->bytes, 4096u);
  EXPECT_DOUBLE_EQ(s.file->mb_per_s, 4096 / 1e6);
  s.buffers_written = 10;  // 6 buffers overwritten
  note_file_written(s, 0, 1000000000);
  EXPECT_DOUBLE_EQ(s.file->mb_per_s, 10 * 1024 / 1e6);
  std::filesystem::remove(path);
}

// A sequential file with no room for one more buffer under its MaximumFileSize is marked: its
// rate is what the run got to write before it was full.
TEST(StressFileSession, ASequentialFileWithNoRoomLeftIsMarkedAtItsMaximumSize) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "etwh-file-session-full-test.etl";
  std::ofstream(path, std::ios::binary) << std::string(4 * 1024, 'x');
  SessionResult s;
  s.file.emplace();
  s.file->path = path.string();
  s.buffer_size_kb = 1;
  note_file_written(s, 0, 1000000000, 4 * 1024);
  EXPECT_TRUE(s.file->at_maximum_size) << "4 buffers of a 4 KB maximum";
  note_file_written(s, 0, 1000000000, 5 * 1024);
  EXPECT_FALSE(s.file->at_maximum_size) << "room for a fifth";
  note_file_written(s, 0, 1000000000, 0);
  EXPECT_FALSE(s.file->at_maximum_size) << "no maximum (or not sequential)";
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace etwh::stress
