// Test support: TraceLogging event metadata built field by field (tracelogging.h's encoding).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace etwrt::testing {

class TlMetadata {
 public:
  explicit TlMetadata(const std::string& event_name, std::uint8_t tag_byte = 0) {
    bytes_ = {0, 0, tag_byte};
    add_sz(event_name);
  }
  // in_type may carry count flags; out_type 0 = no OutType byte.
  TlMetadata& field(const std::string& name, std::uint8_t in_type, std::uint8_t out_type = 0) {
    add_sz(name);
    bytes_.push_back(static_cast<std::uint8_t>(in_type | (out_type != 0 ? 0x80 : 0)));
    if (out_type != 0) bytes_.push_back(out_type);
    return *this;
  }
  TlMetadata& raw(std::vector<std::uint8_t> more) {
    bytes_.insert(bytes_.end(), more.begin(), more.end());
    return *this;
  }
  std::vector<std::uint8_t> bytes() const {
    std::vector<std::uint8_t> out = bytes_;
    out[0] = static_cast<std::uint8_t>(out.size() & 0xff);
    out[1] = static_cast<std::uint8_t>(out.size() >> 8);
    return out;
  }

 private:
  void add_sz(const std::string& s) {
    bytes_.insert(bytes_.end(), s.begin(), s.end());
    bytes_.push_back(0);
  }
  std::vector<std::uint8_t> bytes_;
};

}  // namespace etwrt::testing
