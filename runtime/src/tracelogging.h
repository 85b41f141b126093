// etwrt: TraceLogging as documented.
// - EVENT_DATA_DESCRIPTOR.Type (EVENT_DATA_DESCRIPTOR page): once a provider asked for it
//   (EventSetInformation with EventProviderSetTraits or EventProviderUseDescriptorType), Type 1
//   is TraceLogging event metadata (the consumer's EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL item),
//   Type 2 provider traits attached by hand (ignored when traits were set with
//   EventSetInformation), Type 3 a 64-bit timestamp override; Type 0 is payload.
// - The event metadata encoding (TraceLoggingProvider.h's wire format): UINT16 size (itself
//   included), the event tags (1 to 4 bytes, 7 bits each, most significant first, bit 7 = another
//   byte follows), a NUL-terminated UTF-8 event name, then per field: a NUL-terminated name,
//   UINT8 InType (bits 0-4 the type, bits 5-6 the count kind, bit 7 = OutType follows), UINT8
//   OutType (bit 7 = field tags follow), the field tags, UINT16 count for a constant-count array,
//   UINT16 size + bytes of a custom schema.
#pragma once

#include <windows.h>
#include <evntprov.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace etwrt {

// One event's descriptors sorted by Type.
struct TypedEvent {
  std::array<EVENT_DATA_DESCRIPTOR, MAX_EVENT_DATA_DESCRIPTORS> payload{};
  std::size_t payload_count = 0;
  std::span<const std::byte> schema;  // Type 1, concatenated
  std::span<const std::byte> traits;  // Type 2 (none when traits were set), concatenated
  bool has_timestamp = false;         // Type 3
  std::uint64_t timestamp = 0;
  std::vector<std::byte> joined_schema, joined_traits;  // storage when several descriptors
};

// Sorts `data` by Type. ERROR_INVALID_PARAMETER for a Type 3 of another size than 8 bytes or a
// Type outside 0..3 (etwrt choice: the page lists no other value).
ULONG split_by_type(std::span<const EVENT_DATA_DESCRIPTOR> data, bool traits_set, TypedEvent& out);

// TraceLogging's InType values (bits 0-4) and count kinds (bits 5-6).
enum TlInType : std::uint8_t {
  kTlNull = 0,
  kTlUnicodeString = 1,
  kTlAnsiString = 2,
  kTlInt8 = 3,
  kTlUInt8 = 4,
  kTlInt16 = 5,
  kTlUInt16 = 6,
  kTlInt32 = 7,
  kTlUInt32 = 8,
  kTlInt64 = 9,
  kTlUInt64 = 10,
  kTlFloat = 11,
  kTlDouble = 12,
  kTlBool32 = 13,
  kTlBinary = 14,
  kTlGuid = 15,
  kTlPointerUnsupported = 16,
  kTlFileTime = 17,
  kTlSystemTime = 18,
  kTlSid = 19,
  kTlHexInt32 = 20,
  kTlHexInt64 = 21,
  kTlCountedString = 22,
  kTlCountedAnsiString = 23,
  kTlStruct = 24,
  kTlCountedBinary = 25,
};
inline constexpr std::uint8_t kTlTypeMask = 0x1f;
inline constexpr std::uint8_t kTlCountMask = 0x60;
inline constexpr std::uint8_t kTlConstantCount = 0x20;
inline constexpr std::uint8_t kTlVariableCount = 0x40;
inline constexpr std::uint8_t kTlCustom = 0x60;
inline constexpr std::uint8_t kTlChain = 0x80;

struct TlField {
  std::string name;
  std::uint8_t in_type = 0;     // bits 0-4 only
  std::uint8_t count_kind = 0;  // 0, kTlConstantCount, kTlVariableCount or kTlCustom
  std::uint8_t out_type = 0;    // 0 when absent; for a struct, its member count
  std::uint32_t tags = 0;
  std::uint16_t constant_count = 0;
  std::size_t parent = SIZE_MAX;  // index of the struct field it belongs to, SIZE_MAX: top level
};

struct TlEventSchema {
  std::string name;
  std::uint32_t tags = 0;
  std::vector<TlField> fields;  // in metadata order; struct members follow their struct
};

struct TlParseResult {
  bool ok = false;
  std::string error;  // "offset N: reason" when not ok
  TlEventSchema schema;
};

// Parses and checks event metadata: the size matches, names are NUL-terminated, every InType
// is known (not NULL, not _TlgInPOINTER_unsupported), struct member counts fit, nothing is left.
TlParseResult parse_event_metadata(std::span<const std::byte> metadata);

// Where each field's value lies in an event's payload (byte offset and size within it; for an
// array, the whole array; a struct has no bytes of its own). Fails with a reason when the
// payload is too short or a struct is an array (not decoded by etwrt).
struct TlValue {
  std::size_t offset = 0;
  std::size_t size = 0;
  std::uint32_t count = 1;     // array elements (1 for a scalar)
  std::size_t count_size = 0;  // bytes of a leading UINT16 count/length inside `size`
};
bool locate_values(const TlEventSchema& schema, std::span<const std::byte> payload,
                   std::vector<TlValue>& out, std::string& error);

// Bytes of one value of `in_type` at `at` in `payload` (a leading UINT16 count included),
// SIZE_MAX when the payload ends inside it.
std::size_t tl_value_size(std::uint8_t in_type, std::span<const std::byte> payload, std::size_t at);

}  // namespace etwrt
