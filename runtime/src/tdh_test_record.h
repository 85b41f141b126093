// Test support: an EVENT_RECORD made by hand and what tdh.h says of it (tdh_test.cc gives it a
// TraceLogging schema item, tdh_manifest_test.cc the header of a manifest event), and readers
// of the TRACE_EVENT_INFO that TDH returns; Lcg, arbitrary input that is the same every run.
#pragma once

#include <windows.h>
#include <evntcons.h>
#include <tdh.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace etwrt::testing {

using Bytes = std::vector<std::uint8_t>;

// Owns the record's user data; the test fills in the header and any extended data.
class TdhRecord {
 public:
  explicit TdhRecord(Bytes data) : data_(std::move(data)) {
    record_.UserData = data_.data();
    record_.UserDataLength = static_cast<USHORT>(data_.size());
  }
  EVENT_RECORD* get() { return &record_; }

  // TdhGetEventInformation's answer, asked as a caller does: the size first, then one byte
  // short (ERROR_INSUFFICIENT_BUFFER and the size again, nothing written), then filled.
  Bytes info() {
    ULONG size = 0;
    EXPECT_EQ(TdhGetEventInformation(&record_, 0, nullptr, nullptr, &size),
              ULONG{ERROR_INSUFFICIENT_BUFFER});
    Bytes out(size);
    ULONG small = size - 1;
    EXPECT_EQ(TdhGetEventInformation(&record_, 0, nullptr,
                                     reinterpret_cast<TRACE_EVENT_INFO*>(out.data()), &small),
              ULONG{ERROR_INSUFFICIENT_BUFFER});
    EXPECT_EQ(small, size);
    EXPECT_EQ(TdhGetEventInformation(&record_, 0, nullptr,
                                     reinterpret_cast<TRACE_EVENT_INFO*>(out.data()), &size),
              ULONG{ERROR_SUCCESS});
    return out;
  }

  // The property named by `path` (one name, or struct then member), element `index`: TDH's
  // status and the bytes.
  std::pair<ULONG, Bytes> property(std::vector<std::u16string> path, ULONG index = ~ULONG{0}) {
    std::vector<PROPERTY_DATA_DESCRIPTOR> d(path.size());
    for (std::size_t i = 0; i < path.size(); ++i) {
      d[i].PropertyName = reinterpret_cast<ULONGLONG>(path[i].c_str());
      d[i].ArrayIndex = index;
    }
    const auto count = static_cast<ULONG>(d.size());
    ULONG size = 0;
    const ULONG s = TdhGetPropertySize(&record_, 0, nullptr, count, d.data(), &size);
    if (s != ERROR_SUCCESS) return {s, {}};
    Bytes out(size + 1);
    const ULONG g = TdhGetProperty(&record_, 0, nullptr, count, d.data(),
                                   static_cast<ULONG>(out.size()), out.data());
    out.resize(size);
    return {g, out};
  }

 private:
  Bytes data_;
  EVENT_RECORD record_{};
};

// The NUL-terminated UTF-16LE text at `offset` of a TRACE_EVENT_INFO (empty for offset 0).
inline std::u16string text16(const Bytes& info, ULONG offset) {
  std::u16string s;
  for (std::size_t i = offset; offset != 0 && i + 1 < info.size(); i += 2) {
    const char16_t c = static_cast<char16_t>(info[i] | (info[i + 1] << 8));
    if (c == 0) break;
    s.push_back(c);
  }
  return s;
}

inline const TRACE_EVENT_INFO& as_info(const Bytes& b) {
  return *reinterpret_cast<const TRACE_EVENT_INFO*>(b.data());
}

// The same pseudo-random numbers on every run (a linear congruential generator, 24 bits a call),
// for the tests that feed TDH arbitrary bytes: a failure names a case that comes again.
class Lcg {
 public:
  explicit Lcg(std::uint32_t seed) : seed_(seed) {}
  std::uint32_t operator()() {
    seed_ = seed_ * 1664525u + 1013904223u;
    return seed_ >> 8;
  }

 private:
  std::uint32_t seed_;
};

}  // namespace etwrt::testing
