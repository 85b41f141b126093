#include "request_fields.h"

#include "win32_text.h"

namespace etwh {

RequestFields::RequestFields(const nlohmann::json& object, std::string where)
    : object_(object), where_(std::move(where)) {
  if (!object_.is_object()) {
    std::string name = where_.empty() ? "request" : where_.substr(0, where_.size() - 1);
    throw BadRequest(name + ": must be a JSON object");
  }
}

const nlohmann::json* RequestFields::find(const std::string& key) const {
  seen_.insert(key);
  auto it = object_.find(key);
  return it == object_.end() ? nullptr : &*it;
}

bool RequestFields::has(const std::string& key) const { return object_.contains(key); }

void RequestFields::fail(const std::string& key, const std::string& reason) const {
  throw BadRequest(path(key) + ": " + reason);
}

std::optional<std::string> RequestFields::optional_string(const std::string& key) const {
  const auto* v = find(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) fail(key, "must be a string");
  return v->get<std::string>();
}

std::string RequestFields::string(const std::string& key) const {
  auto v = optional_string(key);
  if (!v) fail(key, "missing");
  return *v;
}

std::optional<std::uint64_t> RequestFields::optional_unsigned_int(const std::string& key,
                                                                  std::uint64_t max) const {
  const auto* v = find(key);
  if (v == nullptr) return std::nullopt;
  std::string range = "must be an integer in [0, " + std::to_string(max) + "]";
  // Parsed text gives non-negative integers as unsigned; values built in C++ may be signed.
  if (v->is_number_unsigned() || (v->is_number_integer() && v->get<std::int64_t>() >= 0)) {
    auto n = v->get<std::uint64_t>();
    if (n > max) fail(key, range);
    return n;
  }
  fail(key, range);
}

std::uint64_t RequestFields::unsigned_int(const std::string& key, std::uint64_t max) const {
  auto v = optional_unsigned_int(key, max);
  if (!v) fail(key, "missing");
  return *v;
}

std::optional<std::uint64_t> RequestFields::optional_hex(const std::string& key) const {
  const auto* v = find(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) fail(key, "must be a \"0x...\" hex string");
  auto n = parse_hex(v->get<std::string>());
  if (!n) {
    fail(key,
         "must be a \"0x...\" hex string of 1 to 16 digits, got \"" + v->get<std::string>() + "\"");
  }
  return n;
}

std::uint64_t RequestFields::hex(const std::string& key) const {
  auto v = optional_hex(key);
  if (!v) fail(key, "missing");
  return *v;
}

std::optional<GUID> RequestFields::optional_guid(const std::string& key) const {
  const auto* v = find(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) fail(key, "must be a GUID string");
  auto g = parse_guid(v->get<std::string>());
  if (!g) fail(key, "malformed GUID \"" + v->get<std::string>() + "\"");
  return g;
}

GUID RequestFields::guid(const std::string& key) const {
  auto v = optional_guid(key);
  if (!v) fail(key, "missing");
  return *v;
}

std::optional<std::vector<std::uint8_t>> RequestFields::optional_bytes(
    const std::string& key) const {
  const auto* v = find(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) fail(key, "must be a hex string");
  auto b = hex_to_bytes(v->get<std::string>());
  if (!b) fail(key, "must be an even number of hex digits");
  return b;
}

std::vector<std::uint8_t> RequestFields::bytes(const std::string& key) const {
  auto v = optional_bytes(key);
  if (!v) fail(key, "missing");
  return *v;
}

bool RequestFields::optional_bool(const std::string& key, bool fallback) const {
  const auto* v = find(key);
  if (v == nullptr) return fallback;
  if (!v->is_boolean()) fail(key, "must be true or false");
  return v->get<bool>();
}

const nlohmann::json* RequestFields::optional_object(const std::string& key) const {
  const auto* v = find(key);
  if (v != nullptr && !v->is_object()) fail(key, "must be a JSON object");
  return v;
}

const nlohmann::json* RequestFields::optional_array(const std::string& key) const {
  const auto* v = find(key);
  if (v != nullptr && !v->is_array()) fail(key, "must be a JSON array");
  return v;
}

void RequestFields::reject_unknown() const {
  for (const auto& [key, value] : object_.items()) {
    if (seen_.count(key) == 0) fail(key, "unknown field");
  }
}

}  // namespace etwh
