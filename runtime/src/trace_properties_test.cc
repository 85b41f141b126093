#include "trace_properties.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace etwrt {
namespace {

// A properties buffer with room for names after the fixed part, valid for a real-time session.
struct Buffer {
  explicit Buffer(std::size_t extra = 256) : bytes(sizeof(EVENT_TRACE_PROPERTIES) + extra) {
    props()->Wnode.BufferSize = static_cast<ULONG>(bytes.size());
    props()->LoggerNameOffset = sizeof(EVENT_TRACE_PROPERTIES);
    props()->LogFileMode = EVENT_TRACE_REAL_TIME_MODE;
  }
  EVENT_TRACE_PROPERTIES* props() {
    return reinterpret_cast<EVENT_TRACE_PROPERTIES*>(bytes.data());
  }
  void set_log_file(const char* name, ULONG offset) {
    props()->LogFileNameOffset = offset;
    std::memcpy(bytes.data() + offset, name, std::strlen(name) + 1);
  }
  std::vector<char> bytes;
};

constexpr ULONG kFixed = sizeof(EVENT_TRACE_PROPERTIES);

TEST(CheckStartTrace, AcceptsARealTimeSession) {
  Buffer b;
  TRACEHANDLE h = 0;
  const auto c = check_start_trace(&h, "S", b.props());
  EXPECT_EQ(c.status, ERROR_SUCCESS) << c.reason;
  EXPECT_TRUE(c.log_file_name.empty());
}

TEST(CheckStartTrace, AcceptsAFileSessionAndReportsItsPath) {
  Buffer b;
  b.props()->LogFileMode = EVENT_TRACE_FILE_MODE_SEQUENTIAL;
  b.set_log_file("/tmp/x.etl", kFixed + 64);
  TRACEHANDLE h = 0;
  const auto c = check_start_trace(&h, "S", b.props());
  EXPECT_EQ(c.status, ERROR_SUCCESS) << c.reason;
  EXPECT_EQ(c.log_file_name, "/tmp/x.etl");
}

TEST(CheckStartTrace, NullArgumentsAreInvalidParameter) {
  Buffer b;
  TRACEHANDLE h = 0;
  EXPECT_EQ(check_start_trace(nullptr, "S", b.props()).status, ERROR_INVALID_PARAMETER);
  EXPECT_EQ(check_start_trace(&h, "S", nullptr).status, ERROR_INVALID_PARAMETER);
  EXPECT_EQ(check_start_trace(&h, nullptr, b.props()).status, ERROR_INVALID_PARAMETER);
  EXPECT_EQ(check_start_trace(&h, "", b.props()).status, ERROR_INVALID_PARAMETER);
}

TEST(CheckStartTrace, ShortBufferSizeIsBadLength) {
  Buffer b;
  b.props()->Wnode.BufferSize = kFixed - 1;
  TRACEHANDLE h = 0;
  EXPECT_EQ(check_start_trace(&h, "S", b.props()).status, ERROR_BAD_LENGTH);
}

TEST(CheckStartTrace, NameThatDoesNotFitIsBadLength) {
  Buffer b(8);
  TRACEHANDLE h = 0;
  EXPECT_EQ(check_start_trace(&h, "1234567", b.props()).status, ERROR_SUCCESS);
  EXPECT_EQ(check_start_trace(&h, "12345678", b.props()).status, ERROR_BAD_LENGTH);
  Buffer big(4096);
  const std::string too_long(kMaxSessionNameBytes + 1, 'n');
  EXPECT_EQ(check_start_trace(&h, too_long.c_str(), big.props()).status, ERROR_BAD_LENGTH);
}

TEST(CheckStartTrace, BadLoggerNameOffsetIsInvalidParameter) {
  TRACEHANDLE h = 0;
  for (ULONG offset : {0u, 8u, kFixed - 1, kFixed + 256, kFixed + 1000}) {
    Buffer b;
    b.props()->LoggerNameOffset = offset;
    EXPECT_EQ(check_start_trace(&h, "S", b.props()).status, ERROR_INVALID_PARAMETER) << offset;
  }
}

TEST(CheckStartTrace, BadLogFileNameOffsetIsInvalidParameter) {
  TRACEHANDLE h = 0;
  for (ULONG offset : {8u, kFixed - 4, kFixed + 256}) {
    Buffer b;
    b.props()->LogFileNameOffset = offset;
    EXPECT_EQ(check_start_trace(&h, "S", b.props()).status, ERROR_INVALID_PARAMETER) << offset;
  }
  Buffer unterminated(16);
  std::memset(unterminated.bytes.data() + kFixed + 8, 'x', 8);
  unterminated.props()->LogFileNameOffset = kFixed + 8;
  EXPECT_EQ(check_start_trace(&h, "S", unterminated.props()).status, ERROR_INVALID_PARAMETER);
}

TEST(CheckStartTrace, ContradictoryFileModesAreInvalidParameter) {
  TRACEHANDLE h = 0;
  for (ULONG mode : {ULONG{EVENT_TRACE_FILE_MODE_SEQUENTIAL | EVENT_TRACE_FILE_MODE_CIRCULAR},
                     ULONG{EVENT_TRACE_FILE_MODE_SEQUENTIAL | EVENT_TRACE_FILE_MODE_NEWFILE},
                     ULONG{EVENT_TRACE_FILE_MODE_CIRCULAR | EVENT_TRACE_FILE_MODE_APPEND}}) {
    Buffer b;
    b.props()->LogFileMode = mode;
    b.props()->MaximumFileSize = 10;
    b.set_log_file("/tmp/x.etl", kFixed + 64);
    EXPECT_EQ(check_start_trace(&h, "S", b.props()).status, ERROR_INVALID_PARAMETER) << mode;
  }
}

TEST(CheckStartTrace, CircularWithoutMaximumFileSizeIsInvalidParameter) {
  Buffer b;
  b.props()->LogFileMode = EVENT_TRACE_FILE_MODE_CIRCULAR;
  b.set_log_file("/tmp/x.etl", kFixed + 64);
  TRACEHANDLE h = 0;
  EXPECT_EQ(check_start_trace(&h, "S", b.props()).status, ERROR_INVALID_PARAMETER);
  b.props()->MaximumFileSize = 1;
  EXPECT_EQ(check_start_trace(&h, "S", b.props()).status, ERROR_SUCCESS);
}

TEST(CheckStartTrace, NoLogFileAndNoRealTimeIsBadPathname) {
  Buffer b;
  b.props()->LogFileMode = EVENT_TRACE_FILE_MODE_SEQUENTIAL;
  TRACEHANDLE h = 0;
  EXPECT_EQ(check_start_trace(&h, "S", b.props()).status, ERROR_BAD_PATHNAME);
  b.set_log_file("", kFixed + 64);  // An empty name is no log file either.
  EXPECT_EQ(check_start_trace(&h, "S", b.props()).status, ERROR_BAD_PATHNAME);
  b.props()->LogFileMode = EVENT_TRACE_BUFFERING_MODE;
  EXPECT_EQ(check_start_trace(&h, "S", b.props()).status, ERROR_SUCCESS);
}

TEST(CheckControlTrace, Codes) {
  Buffer b;
  for (ULONG code : {0u, 1u, 2u, 3u}) {
    EXPECT_EQ(check_control_trace(1, nullptr, b.props(), code), ERROR_SUCCESS) << code;
  }
  EXPECT_EQ(check_control_trace(1, nullptr, b.props(), 4), ERROR_INVALID_PARAMETER);
  EXPECT_EQ(check_control_trace(1, nullptr, b.props(), 99), ERROR_INVALID_PARAMETER);
}

TEST(CheckControlTrace, NeedsPropertiesAndAHandleOrName) {
  Buffer b;
  EXPECT_EQ(check_control_trace(1, nullptr, nullptr, 0), ERROR_INVALID_PARAMETER);
  EXPECT_EQ(check_control_trace(0, nullptr, b.props(), 0), ERROR_INVALID_PARAMETER);
  EXPECT_EQ(check_control_trace(0, "S", b.props(), 0), ERROR_SUCCESS);
  b.props()->Wnode.BufferSize = 16;
  EXPECT_EQ(check_control_trace(0, "S", b.props(), 0), ERROR_BAD_LENGTH);
}

TEST(WriteLoggerName, WritesOnlyWhenItFits) {
  Buffer b(6);
  EXPECT_TRUE(write_logger_name(b.props(), "abcde"));
  EXPECT_STREQ(b.bytes.data() + kFixed, "abcde");
  EXPECT_FALSE(write_logger_name(b.props(), "abcdef"));
  b.props()->LoggerNameOffset = 0;
  EXPECT_FALSE(write_logger_name(b.props(), "a"));
}

}  // namespace
}  // namespace etwrt
