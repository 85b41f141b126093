// etwrt: the provider traits blob of EventSetInformation(EventProviderSetTraits), seed 001:
// UINT16 TraitsSize (total, itself included), a NUL-terminated UTF-8 provider name, then zero
// or more traits {UINT16 TraitSize (itself included), UINT8 Type, BYTE[] Data}.
#pragma once

#include <windows.h>
#include <evntprov.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace etwrt {

struct ProviderTrait {
  std::uint8_t type = 0;
  std::vector<std::uint8_t> data;
};

struct ProviderTraits {
  std::string name;
  std::vector<ProviderTrait> traits;
  // From a type-1 (EtwProviderTraitTypeGroup) trait whose data is exactly a GUID.
  std::optional<GUID> group;
};

struct TraitsParseResult {
  bool ok = false;
  std::string error;  // Why the blob was rejected (empty when ok).
  ProviderTraits traits;
};

// Parses and validates a traits blob of `length` bytes. The blob must be consumed exactly:
// TraitsSize == length, every trait at least 3 bytes and inside the blob, nothing left over.
TraitsParseResult parse_traits(const void* blob, std::size_t length);

}  // namespace etwrt
