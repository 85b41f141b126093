// How the logger's bytes reach a trace file (etl_output.h): page-aligned memory, O_DIRECT where
// the file system takes it, and a buffered write when a direct one is refused.
#include "etl_output.h"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace etwrt::broker {
namespace {

// A file of its own in the temporary folder, removed at the end.
class TempFile {
 public:
  TempFile() {
    path_ = (std::filesystem::temp_directory_path() /
             ("etwrt-etl-output-" + std::to_string(::getpid()) + ".bin"))
                .string();
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  }
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    std::filesystem::remove(path_);
  }
  int fd() const { return fd_; }
  std::vector<std::byte> contents() const {
    std::vector<std::byte> out(std::filesystem::file_size(path_));
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    EXPECT_EQ(::pread(fd, out.data(), out.size(), 0), static_cast<ssize_t>(out.size()));
    ::close(fd);
    return out;
  }

 private:
  std::string path_;
  int fd_ = -1;
};

std::vector<std::byte> pattern(std::size_t n, unsigned seed) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 31 + seed) & 0xFF);
  return v;
}

TEST(EtlOutput, AlignedBytesStartOnAPage) {
  const AlignedBytes b = aligned_bytes(5000);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.get()) % 4096, 0u);
}

TEST(EtlOutput, AlignedWholeBuffersAreWrittenDirect) {
  TempFile f;
  ASSERT_GE(f.fd(), 0);
  if (!use_direct_io(f.fd())) GTEST_SKIP() << "the temporary folder's file system refuses O_DIRECT";
  const std::vector<std::byte> data = pattern(3 * 4096, 7);
  const AlignedBytes b = aligned_bytes(data.size());
  std::copy(data.begin(), data.end(), b.get());
  bool direct = true;
  ASSERT_TRUE(write_fully(f.fd(), direct, b.get(), 2 * 4096, 4096));
  ASSERT_TRUE(write_fully(f.fd(), direct, b.get() + 2 * 4096, 4096, 0));
  EXPECT_TRUE(direct);
  const std::vector<std::byte> got = f.contents();
  ASSERT_EQ(got.size(), data.size());
  EXPECT_TRUE(std::equal(data.begin(), data.begin() + 2 * 4096, got.begin() + 4096));
  EXPECT_TRUE(std::equal(data.begin() + 2 * 4096, data.end(), got.begin()));
}

// O_DIRECT refuses memory or offsets not aligned as the device wants (EINVAL): the write is
// made buffered, and the descriptor stays buffered after.
TEST(EtlOutput, ADirectWriteRefusedForItsAlignmentIsMadeBuffered) {
  TempFile f;
  ASSERT_GE(f.fd(), 0);
  if (!use_direct_io(f.fd())) GTEST_SKIP() << "the temporary folder's file system refuses O_DIRECT";
  const std::vector<std::byte> data = pattern(4096 + 1, 3);
  const AlignedBytes b = aligned_bytes(data.size());
  std::copy(data.begin(), data.end(), b.get());
  bool direct = true;
  ASSERT_TRUE(write_fully(f.fd(), direct, b.get() + 1, 4096, 100));  // odd memory, odd offset
  EXPECT_FALSE(direct);
  EXPECT_EQ(::fcntl(f.fd(), F_GETFL) & O_DIRECT, 0);
  const std::vector<std::byte> got = f.contents();
  ASSERT_EQ(got.size(), 100u + 4096u);
  EXPECT_TRUE(std::equal(data.begin() + 1, data.end(), got.begin() + 100));
}

TEST(EtlOutput, AFailedWriteSaysSoWithErrno) {
  bool direct = false;
  const std::vector<std::byte> data = pattern(16, 1);
  errno = 0;
  EXPECT_FALSE(write_fully(-1, direct, data.data(), data.size(), 0));
  EXPECT_EQ(errno, EBADF);
}

TEST(EtlOutput, TheBackgroundWriterWritesEachJobAndSaysHowItWent) {
  TempFile f;
  ASSERT_GE(f.fd(), 0);
  const std::vector<std::byte> a = pattern(8192, 5), b = pattern(8192, 9);
  BackgroundWriter writer;
  writer.start(f.fd(), false, a.data(), a.size(), 8192);
  const BackgroundWriter::Outcome wrote = writer.wait();
  EXPECT_TRUE(wrote.ok);
  EXPECT_EQ(wrote.bytes, 8192u);
  writer.start(f.fd(), false, b.data(), b.size(), 0);
  EXPECT_TRUE(writer.wait().ok);
  writer.start(-1, false, b.data(), b.size(), 0);
  const BackgroundWriter::Outcome failed = writer.wait();
  EXPECT_FALSE(failed.ok);
  EXPECT_EQ(failed.error, EBADF);
  const std::vector<std::byte> got = f.contents();
  ASSERT_EQ(got.size(), 16384u);
  EXPECT_TRUE(std::equal(b.begin(), b.end(), got.begin()));
  EXPECT_TRUE(std::equal(a.begin(), a.end(), got.begin() + 8192));
  EXPECT_EQ(failed.bytes, 0u);
}

// Buffers from anywhere in memory reach the file one after the other (the logger's
// per-processor buffers, staged without a copy): an empty part is skipped.
TEST(EtlOutput, PartsAreWrittenOneAfterAnotherWhereverTheyAreInMemory) {
  TempFile f;
  ASSERT_GE(f.fd(), 0);
  bool direct = use_direct_io(f.fd());
  std::vector<AlignedBytes> parts;
  std::vector<std::byte> expected;
  for (unsigned k = 0; k < 3; ++k) {
    const std::vector<std::byte> data = pattern(4096, 11 + k);
    parts.push_back(aligned_bytes(data.size()));
    std::copy(data.begin(), data.end(), parts.back().get());
    expected.insert(expected.end(), data.begin(), data.end());
  }
  // In memory: the third, the first, (nothing), the second; in the file, in that order.
  std::vector<iovec> order = {
      {parts[2].get(), 4096}, {parts[0].get(), 4096}, {parts[1].get(), 0}, {parts[1].get(), 4096}};
  ASSERT_TRUE(write_fully(f.fd(), direct, order, 4096));
  const std::vector<std::byte> got = f.contents();
  ASSERT_EQ(got.size(), 4 * 4096u);
  EXPECT_TRUE(std::equal(expected.begin() + 8192, expected.end(), got.begin() + 4096));
  EXPECT_TRUE(std::equal(expected.begin(), expected.begin() + 4096, got.begin() + 8192));
  EXPECT_TRUE(std::equal(expected.begin() + 4096, expected.begin() + 8192, got.begin() + 12288));
}

}  // namespace
}  // namespace etwrt::broker
