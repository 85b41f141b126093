// Typed access to the fields of one protocol request (providers/PROTOCOL.md). Every accessor
// names the field in its BadRequest, so a malformed request is reported precisely, and the
// reader remembers which fields it consumed so that a misspelt or unexpected field is an error
// rather than silently ignored.
#pragma once

#include "win32_ops.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace etwh {

class RequestFields {
 public:
  // `where` prefixes field names in errors ("parameters.", "descriptor."); empty at top level.
  // Throws BadRequest if `object` is not a JSON object.
  explicit RequestFields(const nlohmann::json& object, std::string where = "");

  bool has(const std::string& key) const;

  std::string string(const std::string& key) const;
  std::optional<std::string> optional_string(const std::string& key) const;

  // A JSON integer within [0, max].
  std::uint64_t unsigned_int(const std::string& key, std::uint64_t max) const;
  std::optional<std::uint64_t> optional_unsigned_int(const std::string& key,
                                                     std::uint64_t max) const;

  // A "0x..." string (64-bit values never travel as JSON numbers).
  std::uint64_t hex(const std::string& key) const;
  std::optional<std::uint64_t> optional_hex(const std::string& key) const;

  GUID guid(const std::string& key) const;
  std::optional<GUID> optional_guid(const std::string& key) const;

  // Plain hex bytes.
  std::vector<std::uint8_t> bytes(const std::string& key) const;
  std::optional<std::vector<std::uint8_t>> optional_bytes(const std::string& key) const;

  bool optional_bool(const std::string& key, bool fallback) const;

  // The raw value of an object or array field (the caller validates it further).
  const nlohmann::json* optional_object(const std::string& key) const;
  const nlohmann::json* optional_array(const std::string& key) const;

  // The name of a field for messages, with its prefix.
  std::string path(const std::string& key) const { return where_ + key; }

  // Throws BadRequest naming the first field of the object that no accessor asked for.
  void reject_unknown() const;

  // Throws BadRequest("<field>: <reason>").
  [[noreturn]] void fail(const std::string& key, const std::string& reason) const;

 private:
  const nlohmann::json* find(const std::string& key) const;

  const nlohmann::json& object_;
  std::string where_;
  mutable std::set<std::string> seen_;
};

}  // namespace etwh
