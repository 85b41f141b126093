#include "traits.h"

#include <cstring>

namespace etwrt {
namespace {

TraitsParseResult reject(std::string why) {
  TraitsParseResult result;
  result.error = std::move(why);
  return result;
}

std::uint16_t read_u16(const std::uint8_t* p) {
  return static_cast<std::uint16_t>(p[0] | (p[1] << 8));
}

}  // namespace

TraitsParseResult parse_traits(const void* blob, std::size_t length) {
  if (blob == nullptr) return reject("traits blob is NULL");
  if (length < 3) return reject("traits blob is shorter than TraitsSize plus a NUL name");
  const auto* bytes = static_cast<const std::uint8_t*>(blob);
  const std::size_t total = read_u16(bytes);
  if (total != length) {
    return reject("TraitsSize " + std::to_string(total) + " differs from the buffer length " +
                  std::to_string(length));
  }
  const auto* name_begin = bytes + 2;
  const auto* nul = static_cast<const std::uint8_t*>(std::memchr(name_begin, 0, total - 2));
  if (nul == nullptr) return reject("provider name is not NUL-terminated within TraitsSize");

  TraitsParseResult result;
  result.traits.name.assign(reinterpret_cast<const char*>(name_begin),
                            static_cast<std::size_t>(nul - name_begin));
  std::size_t offset = static_cast<std::size_t>(nul - bytes) + 1;
  while (offset < total) {
    if (total - offset < 2) {
      return reject("trait at offset " + std::to_string(offset) + " has a truncated TraitSize");
    }
    const std::size_t size = read_u16(bytes + offset);
    if (size < 3) {
      return reject("trait at offset " + std::to_string(offset) + " has TraitSize " +
                    std::to_string(size) + " (< 3, its own header)");
    }
    if (size > total - offset) {
      return reject("trait at offset " + std::to_string(offset) + " (TraitSize " +
                    std::to_string(size) + ") overruns TraitsSize " + std::to_string(total));
    }
    ProviderTrait trait;
    trait.type = bytes[offset + 2];
    trait.data.assign(bytes + offset + 3, bytes + offset + size);
    if (trait.type == EtwProviderTraitTypeGroup && trait.data.size() == sizeof(GUID)) {
      GUID group;
      std::memcpy(&group, trait.data.data(), sizeof group);
      result.traits.group = group;
    }
    result.traits.traits.push_back(std::move(trait));
    offset += size;
  }
  result.ok = true;
  return result;
}

}  // namespace etwrt
