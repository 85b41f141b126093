// TraceLogging event metadata lint (TL-META-*): the Type 1 descriptor a provider writes, in
// TraceLoggingProvider.h's encoding: UINT16 size (itself included), the event tags (7 bits a
// byte, bit 7 = another byte follows), the NUL-terminated event name, then per field a
// NUL-terminated name, UINT8 InType (bits 0-4 the type, 5-6 the count kind, bit 7 = OutType
// follows), UINT8 OutType (bit 7 = field tags follow), the field tags, a UINT16 count for a
// constant-count array and UINT16 size + bytes of a custom schema. Its own reading, not
// etwrt's: the harness judges every platform's providers.
#include "harness/conformance/lint.h"
#include "harness/model/rules.h"

#include <fmt/format.h>

#include <optional>

namespace etwh::lint {

namespace {

constexpr std::uint8_t kTypeMask = 0x1f;
constexpr std::uint8_t kCountMask = 0x60;
constexpr std::uint8_t kConstantCount = 0x20;
constexpr std::uint8_t kCustom = 0x60;
constexpr std::uint8_t kChain = 0x80;
// _TlgIn_t: NULL (0) and POINTER_unsupported (16) are no type; STRUCT is 24, COUNTEDBINARY 25
// the last one (TraceLoggingProvider.h).
constexpr std::uint8_t kInNull = 0;
constexpr std::uint8_t kInPointerUnsupported = 16;
constexpr std::uint8_t kInLast = 25;

// Reads the metadata; the first malformation stops it (what follows cannot be located).
class Reader {
 public:
  explicit Reader(const std::vector<std::uint8_t>& b) : b_(b) {}

  // A NUL-terminated string; nullopt when the metadata ends first.
  std::optional<std::string> name() {
    std::string s;
    for (; at_ < end_; ++at_) {
      if (b_[at_] == 0) {
        ++at_;
        return s;
      }
      s.push_back(static_cast<char>(b_[at_]));
    }
    return std::nullopt;
  }
  bool skip(std::size_t n) {
    if (end_ - at_ < n) return false;
    at_ += n;
    return true;
  }
  std::optional<std::uint8_t> byte() {
    if (at_ >= end_) return std::nullopt;
    return b_[at_++];
  }
  bool tags() {  // 1 to 4 bytes, bit 7 = another follows
    for (int i = 0; i < 4; ++i) {
      const auto t = byte();
      if (!t) return false;
      if ((*t & 0x80) == 0) return true;
    }
    return false;
  }
  std::optional<std::uint16_t> u16() {
    if (end_ - at_ < 2) return std::nullopt;
    const std::uint16_t v = static_cast<std::uint16_t>(b_[at_] | (b_[at_ + 1] << 8));
    at_ += 2;
    return v;
  }

  const std::vector<std::uint8_t>& b_;
  std::size_t at_ = 0;
  std::size_t end_ = 0;
};

}  // namespace

std::vector<Finding> lint_tl_metadata(const std::vector<std::uint8_t>& meta,
                                      const std::string& where, const Catalog& catalog) {
  std::vector<Finding> out;
  auto finding = [&](const char* rule, std::string message) {
    out.push_back(Finding{rule, severity_of(catalog, rule), where, std::move(message)});
  };
  auto malformed = [&](std::size_t at, const std::string& what) {
    finding(rules::kTlMetaFormat, fmt::format("event metadata byte {}: {}", at, what));
    return out;
  };
  Reader r(meta);
  r.end_ = meta.size();
  const auto size = r.u16();
  if (!size) return malformed(0, fmt::format("{} bytes, not even the UINT16 size", meta.size()));
  if (*size != meta.size()) {
    return malformed(
        0, fmt::format("the size says {} bytes, the descriptor has {}", *size, meta.size()));
  }
  if (!r.tags()) return malformed(r.at_, "the event tags run past the end");
  const auto event_name = r.name();
  if (!event_name) return malformed(r.at_, "the event name is not NUL-terminated");
  if (event_name->empty()) {
    finding(rules::kTlMetaEventName,
            "the event has no name (TraceLogging events are identified by their name)");
  }
  for (std::size_t field = 0; r.at_ < r.end_; ++field) {
    const std::size_t start = r.at_;
    const auto name = r.name();
    if (!name) return malformed(start, fmt::format("field {}'s name is not NUL-terminated", field));
    const auto in = r.byte();
    if (!in) return malformed(r.at_, fmt::format("field \"{}\" has no InType", *name));
    const std::uint8_t type = *in & kTypeMask;
    if (type == kInNull || type == kInPointerUnsupported || type > kInLast) {
      finding(rules::kTlMetaInType,
              fmt::format("field \"{}\" has InType {} (0x{:02x}), not a TraceLogging type", *name,
                          type, *in));
    }
    if ((*in & kChain) != 0) {
      const auto outtype = r.byte();
      if (!outtype) return malformed(r.at_, fmt::format("field \"{}\" has no OutType", *name));
      if ((*outtype & kChain) != 0 && !r.tags()) {
        return malformed(r.at_, fmt::format("field \"{}\"'s tags run past the end", *name));
      }
    }
    if ((*in & kCountMask) == kConstantCount && !r.u16()) {
      return malformed(r.at_, fmt::format("field \"{}\" has no constant count", *name));
    }
    if ((*in & kCountMask) == kCustom) {
      const auto schema = r.u16();
      if (!schema || !r.skip(*schema)) {
        return malformed(r.at_,
                         fmt::format("field \"{}\"'s custom schema runs past the end", *name));
      }
    }
  }
  return out;
}

}  // namespace etwh::lint
