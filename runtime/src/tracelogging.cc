#include "tracelogging.h"

#include <cstring>

namespace etwrt {
namespace {

void append(std::vector<std::byte>& to, const EVENT_DATA_DESCRIPTOR& d) {
  const auto* p = reinterpret_cast<const std::byte*>(static_cast<std::uintptr_t>(d.Ptr));
  if (d.Size != 0) to.insert(to.end(), p, p + d.Size);
}

// One kind of metadata (Type 1 or 2): a span on the caller's bytes when there is one
// descriptor, a joined copy when there are several.
void add_part(std::span<const std::byte>& part, std::vector<std::byte>& joined,
              const EVENT_DATA_DESCRIPTOR& d) {
  const auto* p = reinterpret_cast<const std::byte*>(static_cast<std::uintptr_t>(d.Ptr));
  if (part.empty() && joined.empty()) {
    part = std::span<const std::byte>(p, d.Size);
    return;
  }
  if (joined.empty()) joined.assign(part.begin(), part.end());
  append(joined, d);
  part = std::span<const std::byte>(joined.data(), joined.size());
}

// Reads the metadata of one event, remembering the first problem with its offset.
class MetadataReader {
 public:
  explicit MetadataReader(std::span<const std::byte> bytes) : bytes_(bytes) {}

  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }
  bool at_end() const { return pos_ == bytes_.size(); }
  std::size_t pos() const { return pos_; }

  void fail(std::size_t at, const std::string& why) {
    if (error_.empty()) error_ = "offset " + std::to_string(at) + ": " + why;
  }
  std::uint8_t u8(const char* what) {
    if (pos_ >= bytes_.size()) {
      fail(pos_, std::string("metadata ends before ") + what);
      return 0;
    }
    return static_cast<std::uint8_t>(bytes_[pos_++]);
  }
  std::uint16_t u16(const char* what) {
    const std::uint8_t lo = u8(what);
    const std::uint8_t hi = u8(what);
    return static_cast<std::uint16_t>(lo | (hi << 8));
  }
  std::string sz(const char* what) {
    const std::size_t start = pos_;
    while (pos_ < bytes_.size() && bytes_[pos_] != std::byte{0}) ++pos_;
    if (pos_ == bytes_.size()) {
      fail(start, std::string(what) + " is not NUL-terminated");
      return {};
    }
    std::string s(reinterpret_cast<const char*>(bytes_.data() + start), pos_ - start);
    ++pos_;
    return s;
  }
  // 28-bit tags: up to four bytes of 7 bits, most significant first, bit 7 chaining.
  std::uint32_t tags() {
    std::uint32_t value = 0;
    for (int i = 0; i < 4; ++i) {
      const std::uint8_t b = u8("tags");
      value |= static_cast<std::uint32_t>(b & 0x7f) << (21 - 7 * i);
      if ((b & kTlChain) == 0) return value;
    }
    fail(pos_ - 1, "tags chain longer than 4 bytes");
    return value;
  }
  void skip(std::size_t n, const char* what) {
    if (bytes_.size() - pos_ < n) {
      fail(pos_, std::string("metadata ends inside ") + what);
      return;
    }
    pos_ += n;
  }

 private:
  std::span<const std::byte> bytes_;
  std::size_t pos_ = 0;
  std::string error_;
};

void read_field(MetadataReader& r, TlField& f) {
  const std::size_t at = r.pos();
  f.name = r.sz("field name");
  const std::uint8_t in = r.u8("InType");
  f.in_type = in & kTlTypeMask;
  f.count_kind = in & kTlCountMask;
  if (f.in_type == kTlNull || f.in_type > kTlCountedBinary) {
    r.fail(at, "field \"" + f.name + "\" has unknown InType " + std::to_string(f.in_type));
  } else if (f.in_type == kTlPointerUnsupported) {
    r.fail(at, "field \"" + f.name + "\" has InType 16 (_TlgInPOINTER_unsupported)");
  }
  if ((in & kTlChain) != 0) {
    const std::uint8_t out = r.u8("OutType");
    f.out_type = out & 0x7f;
    if ((out & kTlChain) != 0) f.tags = r.tags();
  }
  if (f.in_type == kTlStruct && f.out_type == 0)
    r.fail(at, "struct field \"" + f.name + "\" has no member count (OutType)");
  if (f.count_kind == kTlConstantCount) f.constant_count = r.u16("constant count");
  if (f.count_kind == kTlCustom) r.skip(r.u16("custom schema size"), "custom schema");
}

// Sets each field's parent from the member counts of the structs before it.
void link_structs(MetadataReader& r, TlEventSchema& s) {
  struct Open {
    std::size_t index;
    std::size_t left;
  };
  std::vector<Open> open;
  for (std::size_t i = 0; i < s.fields.size(); ++i) {
    while (!open.empty() && open.back().left == 0) open.pop_back();
    if (!open.empty()) {
      s.fields[i].parent = open.back().index;
      --open.back().left;
    }
    if (s.fields[i].in_type == kTlStruct) open.push_back({i, s.fields[i].out_type});
  }
  while (!open.empty() && open.back().left == 0) open.pop_back();
  if (!open.empty()) {
    r.fail(r.pos(), "struct \"" + s.fields[open.back().index].name + "\" lacks " +
                        std::to_string(open.back().left) + " member(s)");
  }
}

std::size_t fixed_size(std::uint8_t in_type) {
  switch (in_type) {
    case kTlInt8:
    case kTlUInt8: return 1;
    case kTlInt16:
    case kTlUInt16: return 2;
    case kTlInt32:
    case kTlUInt32:
    case kTlFloat:
    case kTlBool32:
    case kTlHexInt32: return 4;
    case kTlInt64:
    case kTlUInt64:
    case kTlDouble:
    case kTlFileTime:
    case kTlHexInt64: return 8;
    case kTlGuid:
    case kTlSystemTime: return 16;
    default: return 0;
  }
}

std::uint16_t read_u16(std::span<const std::byte> p, std::size_t at) {
  return static_cast<std::uint16_t>(static_cast<unsigned>(p[at]) |
                                    (static_cast<unsigned>(p[at + 1]) << 8));
}

}  // namespace

std::size_t tl_value_size(std::uint8_t in_type, std::span<const std::byte> p, std::size_t at) {
  if (at > p.size()) return SIZE_MAX;
  const std::size_t left = p.size() - at;
  if (const std::size_t n = fixed_size(in_type); n != 0) return n <= left ? n : SIZE_MAX;
  switch (in_type) {
    case kTlAnsiString:
      for (std::size_t i = at; i < p.size(); ++i) {
        if (p[i] == std::byte{0}) return i - at + 1;
      }
      return SIZE_MAX;
    case kTlUnicodeString:
      for (std::size_t i = at; i + 1 < p.size(); i += 2) {
        if (p[i] == std::byte{0} && p[i + 1] == std::byte{0}) return i - at + 2;
      }
      return SIZE_MAX;
    case kTlBinary:
    case kTlCountedString:
    case kTlCountedAnsiString:
    case kTlCountedBinary: {
      if (left < 2) return SIZE_MAX;
      const std::size_t n = 2 + std::size_t{read_u16(p, at)};
      return n <= left ? n : SIZE_MAX;
    }
    case kTlSid: {
      if (left < 8) return SIZE_MAX;
      const std::size_t n = 8 + 4 * static_cast<std::size_t>(p[at + 1]);
      return n <= left ? n : SIZE_MAX;
    }
    default: return SIZE_MAX;
  }
}

ULONG split_by_type(std::span<const EVENT_DATA_DESCRIPTOR> data, bool traits_set, TypedEvent& out) {
  for (const EVENT_DATA_DESCRIPTOR& d : data) {
    switch (d.Type) {
      case EVENT_DATA_DESCRIPTOR_TYPE_NONE: out.payload[out.payload_count++] = d; break;
      case EVENT_DATA_DESCRIPTOR_TYPE_EVENT_METADATA:
        add_part(out.schema, out.joined_schema, d);
        break;
      case EVENT_DATA_DESCRIPTOR_TYPE_PROVIDER_METADATA:
        if (!traits_set) add_part(out.traits, out.joined_traits, d);
        break;
      case EVENT_DATA_DESCRIPTOR_TYPE_TIMESTAMP_OVERRIDE:
        if (d.Size != sizeof(std::uint64_t)) return ERROR_INVALID_PARAMETER;
        std::memcpy(&out.timestamp,
                    reinterpret_cast<const void*>(static_cast<std::uintptr_t>(d.Ptr)),
                    sizeof out.timestamp);
        out.has_timestamp = true;
        break;
      default: return ERROR_INVALID_PARAMETER;
    }
  }
  return ERROR_SUCCESS;
}

TlParseResult parse_event_metadata(std::span<const std::byte> metadata) {
  TlParseResult result;
  MetadataReader r(metadata);
  const std::uint16_t size = r.u16("the size");
  if (!r.failed() && size != metadata.size()) {
    r.fail(0, "size " + std::to_string(size) + " differs from the metadata length " +
                  std::to_string(metadata.size()));
  }
  if (!r.failed()) result.schema.tags = r.tags();
  if (!r.failed()) result.schema.name = r.sz("event name");
  if (!r.failed() && result.schema.name.empty()) r.fail(r.pos() - 1, "event name is empty");
  while (!r.failed() && !r.at_end()) {
    TlField f;
    read_field(r, f);
    result.schema.fields.push_back(std::move(f));
  }
  if (!r.failed()) link_structs(r, result.schema);
  if (r.failed()) {
    result.error = r.error();
    result.schema = {};
    return result;
  }
  result.ok = true;
  return result;
}

bool locate_values(const TlEventSchema& schema, std::span<const std::byte> payload,
                   std::vector<TlValue>& out, std::string& error) {
  out.assign(schema.fields.size(), TlValue{});
  std::size_t at = 0;
  for (std::size_t i = 0; i < schema.fields.size(); ++i) {
    const TlField& f = schema.fields[i];
    TlValue& v = out[i];
    v.offset = at;
    if (f.in_type == kTlStruct) {
      if (f.count_kind != 0) {
        error = "field \"" + f.name + "\": arrays of structs are not decoded";
        return false;
      }
      continue;
    }
    if (f.count_kind == kTlCustom) {
      const std::size_t n =
          at + 2 <= payload.size() ? 2 + std::size_t{read_u16(payload, at)} : SIZE_MAX;
      if (n == SIZE_MAX || n > payload.size() - at) {
        error = "field \"" + f.name + "\": the payload ends inside its custom value";
        return false;
      }
      v.size = n;
      v.count_size = 2;
      at += n;
      continue;
    }
    if (f.count_kind == kTlVariableCount) {
      if (payload.size() - at < 2) {
        error = "field \"" + f.name + "\": the payload ends before its array count";
        return false;
      }
      v.count = read_u16(payload, at);
      v.count_size = 2;
      at += 2;
    } else if (f.count_kind == kTlConstantCount) {
      v.count = f.constant_count;
    }
    for (std::uint32_t e = 0; e < v.count; ++e) {
      const std::size_t n = tl_value_size(f.in_type, payload, at);
      if (n == SIZE_MAX) {
        error = "field \"" + f.name + "\": the payload ends inside its value";
        return false;
      }
      at += n;
    }
    v.size = at - v.offset;
  }
  return true;
}

}  // namespace etwrt
