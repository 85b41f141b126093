#include "requests.h"

#include "wire.h"

#include <limits>
#include <stdexcept>

namespace etwrt::broker {
namespace {

using json = nlohmann::json;

// Raised by Fields on the first field that is wrong; caught in decode_request, never beyond.
struct BadField : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Typed, checked reads of one request object's fields.
class Fields {
 public:
  explicit Fields(const json& body) : body_(body) {}

  std::uint64_t unsigned_field(const char* key, std::uint64_t max) const {
    return unsigned_value(required(key), key, max);
  }
  std::uint64_t unsigned_or(const char* key, std::uint64_t fallback, std::uint64_t max) const {
    const json* v = optional(key);
    return v == nullptr ? fallback : unsigned_value(*v, key, max);
  }
  std::uint64_t u64(const char* key) const {
    return unsigned_field(key, std::numeric_limits<std::uint64_t>::max());
  }
  ULONG u32(const char* key) const {
    return static_cast<ULONG>(unsigned_field(key, std::numeric_limits<ULONG>::max()));
  }
  ULONG u32_or(const char* key, ULONG fallback) const {
    return static_cast<ULONG>(unsigned_or(key, fallback, std::numeric_limits<ULONG>::max()));
  }
  UCHAR u8(const char* key) const { return static_cast<UCHAR>(unsigned_field(key, 255)); }

  bool boolean_or(const char* key, bool fallback) const {
    const json* v = optional(key);
    if (v == nullptr) return fallback;
    if (!v->is_boolean()) fail(key, "expected a boolean, got " + kind(*v));
    return v->get<bool>();
  }
  std::string string(const char* key) const { return string_value(required(key), key); }
  std::string string_or(const char* key, const std::string& fallback) const {
    const json* v = optional(key);
    return v == nullptr ? fallback : string_value(*v, key);
  }
  GUID guid(const char* key) const { return guid_value(required(key), key); }
  // Present, and either null or a GUID.
  std::optional<GUID> guid_or_null(const char* key) const {
    const json& v = required(key);
    if (v.is_null()) return std::nullopt;
    return guid_value(v, key);
  }
  // Absent or null: none.
  std::optional<GUID> optional_guid(const char* key) const {
    const json* v = optional(key);
    if (v == nullptr) return std::nullopt;
    return guid_value(*v, key);
  }
  std::optional<FilterBlob> optional_filter(const char* key) const {
    const json* v = optional(key);
    if (v == nullptr) return std::nullopt;
    return filter_value(*v, std::string("/") + key);
  }
  std::vector<FilterBlob> filter_list(const char* key) const {
    std::vector<FilterBlob> out;
    const json* v = optional(key);
    if (v == nullptr) return out;
    if (!v->is_array()) fail(key, "expected an array, got " + kind(*v));
    for (std::size_t i = 0; i < v->size(); ++i) {
      out.push_back(filter_value((*v)[i], "/" + std::string(key) + "/" + std::to_string(i)));
    }
    return out;
  }
  std::vector<GUID> guid_list(const char* key) const {
    const json& v = required(key);
    if (!v.is_array()) fail(key, "expected an array, got " + kind(v));
    std::vector<GUID> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
      out.push_back(guid_value(v[i], std::string(key) + "/" + std::to_string(i)));
    }
    return out;
  }

 private:
  [[noreturn]] static void fail(const std::string& pointer_tail, const std::string& what) {
    const bool absolute = !pointer_tail.empty() && pointer_tail.front() == '/';
    throw BadField((absolute ? "" : "/") + pointer_tail + ": " + what);
  }
  static std::string kind(const json& v) { return v.type_name(); }

  const json& required(const char* key) const {
    auto it = body_.find(key);
    if (it == body_.end()) fail(key, "missing");
    return *it;
  }
  // Absent and null both mean "not given".
  const json* optional(const char* key) const {
    auto it = body_.find(key);
    return it == body_.end() || it->is_null() ? nullptr : &*it;
  }
  static std::uint64_t unsigned_value(const json& v, const std::string& key, std::uint64_t max) {
    std::uint64_t n = 0;
    if (v.is_number_unsigned()) {
      n = v.get<std::uint64_t>();
    } else if (v.is_number_integer() && v.get<std::int64_t>() >= 0) {
      n = static_cast<std::uint64_t>(v.get<std::int64_t>());
    } else {
      fail(key, "expected an integer in 0.." + std::to_string(max) + ", got " +
                    (v.is_number() ? v.dump() : kind(v)));
    }
    if (n > max) {
      fail(key, "expected an integer in 0.." + std::to_string(max) + ", got " + v.dump());
    }
    return n;
  }
  static std::string string_value(const json& v, const std::string& key) {
    if (!v.is_string()) fail(key, "expected a string, got " + kind(v));
    return v.get<std::string>();
  }
  static GUID guid_value(const json& v, const std::string& key) {
    GUID g{};
    if (!guid_from_wire(string_value(v, key), g)) fail(key, "expected 32 hex digits (a GUID)");
    return g;
  }
  static FilterBlob filter_value(const json& v, const std::string& pointer) {
    if (!v.is_object()) fail(pointer, "expected an object {type, data}, got " + kind(v));
    const Fields inner(v);
    FilterBlob blob;
    try {
      blob.type = inner.u32("type");
      if (!hex_to_bytes(inner.string("data"), blob.data)) fail("data", "expected hex bytes");
    } catch (const BadField& e) {
      throw BadField(pointer + e.what());
    }
    return blob;
  }

  const json& body_;
};

RequestBody decode_start(const Fields& f) {
  StartRequest r;
  r.name = f.string("name");
  r.guid = f.guid("guid");
  r.log_file = f.string_or("log_file", "");
  r.buffer_size_kb = f.u32("buffer_size");
  r.minimum_buffers = f.u32("minimum_buffers");
  r.maximum_buffers = f.u32("maximum_buffers");
  r.maximum_file_size = f.u32("maximum_file_size");
  r.log_file_mode = f.u32("log_file_mode");
  r.flush_timer = f.u32("flush_timer");
  r.enable_flags = f.u32_or("enable_flags", 0);
  r.client_context = f.u32_or("client_context", 0);
  return r;
}

RequestBody decode_control(const Fields& f) {
  ControlRequest r;
  r.handle = f.u64("handle");
  r.name = f.string_or("name", "");
  r.code = f.u32("code");
  r.flush_timer = f.u32_or("flush_timer", 0);
  r.maximum_buffers = f.u32_or("maximum_buffers", 0);
  r.enable_flags = f.u32_or("enable_flags", 0);
  r.log_file_mode = f.u32_or("log_file_mode", 0);
  r.log_file = f.string_or("log_file", "");
  return r;
}

RequestBody decode_enable(const Fields& f) {
  EnableRequest r;
  r.handle = f.u64("handle");
  r.provider = f.guid("guid");
  r.source = f.guid_or_null("source");
  r.code = f.u32("code");
  r.level = f.u8("level");
  r.any = f.u64("any");
  r.all = f.u64("all");
  r.wait = f.boolean_or("wait", false);
  r.property = f.u32_or("property", 0);
  r.provider_filter = f.optional_filter("provider_filter");
  // A schematized filter brings its own EVENT_FILTER_HEADER, which the broker reads to chain
  // it with other sessions' filters (broker_aggregate.cc): it must hold one.
  if (r.provider_filter && r.provider_filter->type == EVENT_FILTER_TYPE_SCHEMATIZED &&
      r.provider_filter->data.size() < sizeof(EVENT_FILTER_HEADER)) {
    throw BadField("/provider_filter/data: a schematized filter of " +
                   std::to_string(r.provider_filter->data.size()) +
                   " bytes, shorter than its EVENT_FILTER_HEADER (" +
                   std::to_string(sizeof(EVENT_FILTER_HEADER)) + " bytes)");
  }
  r.system_filters = f.filter_list("system_filters");
  return r;
}

// Throws BadField; nullopt for an op the broker does not know.
std::optional<RequestBody> decode_body(const std::string& op, const Fields& f) {
  if (op == "hello") return HelloRequest{};
  if (op == "register")
    return RegisterRequest{f.u64("token"), f.guid("guid"), f.boolean_or("classic", false)};
  if (op == "unregister") return UnregisterRequest{f.u64("token")};
  if (op == "set_traits") {
    return SetTraitsRequest{f.u64("token"), f.string("name"), f.optional_guid("group")};
  }
  if (op == "start") return decode_start(f);
  if (op == "control") return decode_control(f);
  if (op == "enable") return decode_enable(f);
  if (op == "disallow") return DisallowRequest{f.u64("handle"), f.guid_list("guids")};
  if (op == "enumerate") return EnumerateRequest{};
  if (op == "open") return OpenRequest{f.string("name")};
  if (op == "session_info") return SessionInfoRequest{f.u64("handle")};
  if (op == "providers") {
    return ProvidersRequest{f.optional_guid("guid"), f.boolean_or("process", false)};
  }
  if (op == "ack") return AckRequest{f.u64("wait")};
  return std::nullopt;
}

}  // namespace

Decoded decode_request(const json& frame) {
  if (!frame.is_object()) {
    return DecodeError{
        nullptr, ERROR_INVALID_PARAMETER,
        std::string("the frame is a JSON ") + frame.type_name() + ", not a request object"};
  }
  json id = nullptr;
  if (auto it = frame.find("id"); it != frame.end()) id = *it;
  auto op = frame.find("op");
  if (op == frame.end() || !op->is_string()) {
    return DecodeError{id, ERROR_INVALID_PARAMETER,
                       std::string("/op: expected a string, got ") +
                           (op == frame.end() ? "nothing" : op->type_name())};
  }
  const std::string name = op->get<std::string>();
  try {
    std::optional<RequestBody> body = decode_body(name, Fields(frame));
    if (!body) return DecodeError{id, ERROR_NOT_SUPPORTED, name + ": unknown op"};
    return Request{id, std::move(*body)};
  } catch (const BadField& e) {
    return DecodeError{id, ERROR_INVALID_PARAMETER, name + ": " + e.what()};
  } catch (const std::exception& e) {  // bad_alloc of a huge list: still a refusal, not a crash.
    return DecodeError{id, ERROR_INVALID_PARAMETER, name + ": " + e.what()};
  }
}

}  // namespace etwrt::broker
