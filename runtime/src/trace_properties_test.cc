#include "trace_properties.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string_view>
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

// Audit row 37: ControlTrace writes the session name, then the log file name, each where the
// caller's offsets put it when the buffer holds it; otherwise ERROR_MORE_DATA.
std::string_view with_nul(const char* text) { return {text, std::strlen(text) + 1}; }

TEST(WriteControlNames, WritesBothNamesAtTheCallersOffsets) {
  Buffer b(32);
  b.props()->LogFileNameOffset = kFixed + 16;
  EXPECT_EQ(write_control_names(b.props(), with_nul("abc"), with_nul("f.etl")), ERROR_SUCCESS);
  EXPECT_STREQ(b.bytes.data() + kFixed, "abc");
  EXPECT_STREQ(b.bytes.data() + kFixed + 16, "f.etl");
  EXPECT_EQ(b.props()->LoggerNameOffset, kFixed);
  EXPECT_EQ(b.props()->LogFileNameOffset, kFixed + 16);
}

TEST(WriteControlNames, ZeroOffsetsPlaceTheNamesAfterTheFixedPart) {
  Buffer b(8);
  b.props()->LoggerNameOffset = 0;
  EXPECT_EQ(write_control_names(b.props(), with_nul("abc"), with_nul("")), ERROR_SUCCESS);
  EXPECT_EQ(b.props()->LoggerNameOffset, kFixed);
  EXPECT_STREQ(b.bytes.data() + kFixed, "abc");
  EXPECT_EQ(b.props()->LogFileNameOffset, kFixed + 4);  // The empty log file name after it.
}

TEST(WriteControlNames, NoRoomIsMoreData) {
  Buffer bare(0);  // The fixed part only: no room for any name.
  bare.props()->LoggerNameOffset = 0;
  EXPECT_EQ(write_control_names(bare.props(), with_nul("abc"), with_nul("")), ERROR_MORE_DATA);
  EXPECT_EQ(bare.props()->LoggerNameOffset, 0u);

  Buffer logger_only(4);  // "abc" fits, the log file name's NUL does not.
  EXPECT_EQ(write_control_names(logger_only.props(), with_nul("abc"), with_nul("")),
            ERROR_MORE_DATA);
  EXPECT_STREQ(logger_only.bytes.data() + kFixed, "abc");
  EXPECT_EQ(logger_only.props()->LogFileNameOffset, 0u);

  // The session name's room ends where the log file name begins.
  Buffer squeezed(64);
  squeezed.props()->LogFileNameOffset = kFixed + 3;
  EXPECT_EQ(write_control_names(squeezed.props(), with_nul("abc"), with_nul("")), ERROR_MORE_DATA);

  Buffer inside(64);  // An offset inside the fixed part has no room.
  inside.props()->LoggerNameOffset = 8;
  EXPECT_EQ(write_control_names(inside.props(), with_nul("a"), with_nul("")), ERROR_MORE_DATA);
}

TEST(WriteControlNames, WideNamesCountTwoBytesAUnit) {
  Buffer b(8);  // "abc" in UTF-16 with its NUL is 8 bytes: no room left for the log file's.
  const char16_t abc[] = u"abc";
  const std::string_view wide(reinterpret_cast<const char*>(abc), sizeof abc);
  const char16_t none[] = u"";
  const std::string_view wide_none(reinterpret_cast<const char*>(none), sizeof none);
  EXPECT_EQ(write_control_names(b.props(), wide, wide_none), ERROR_MORE_DATA);
  Buffer room(10);
  EXPECT_EQ(write_control_names(room.props(), wide, wide_none), ERROR_SUCCESS);
  EXPECT_EQ(std::memcmp(room.bytes.data() + kFixed, abc, sizeof abc), 0);
}

}  // namespace
}  // namespace etwrt
