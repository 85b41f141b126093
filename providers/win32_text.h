// Text forms of Win32 ETW values, shared by the driver, the agent and the reports:
// GUIDs as "{xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}" and 64-bit values as "0x..." hex strings
// (JSON numbers past 2^53 are not portable, keywords often are).
#pragma once

#include <windows.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace etwh {

// Lower-case, braced. Round-trips with parse_guid.
std::string format_guid(const GUID& guid);

// Accepts the braced or bare 8-4-4-4-12 form, either case. nullopt for anything else.
std::optional<GUID> parse_guid(std::string_view text);

// "0x" followed by lower-case hex digits, no leading zeros ("0x0" for zero).
std::string format_hex(std::uint64_t value);

// Accepts "0x"-prefixed hex (1 to 16 digits). nullopt for anything else, including overflow.
std::optional<std::uint64_t> parse_hex(std::string_view text);

// Bytes as a plain lower-case hex string ("" for none), and back (nullopt on odd length or a
// non-hex digit).
std::string bytes_to_hex(const void* data, std::size_t size);
std::optional<std::vector<std::uint8_t>> hex_to_bytes(std::string_view text);

}  // namespace etwh
