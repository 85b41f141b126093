// etwrt wire format between libetwrt and etwrt-broker: each message is a 4-byte little-endian
// length followed by that many bytes of JSON. Where the broker lives (ETWRT_HOME): home.h.
#pragma once

#include "home.h"

#include <nlohmann/json.hpp>

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace etwrt {

// Larger frames mean a corrupt or hostile peer: the connection is dropped.
inline constexpr std::uint32_t kMaxFrameBytes = 16u << 20;

// Sends one frame, retrying on EINTR and partial writes. False when the peer is gone.
// `pass_fd` >= 0 travels with the frame (SCM_RIGHTS); the receiver owns its copy.
bool send_frame(int fd, const nlohmann::json& message, int pass_fd = -1);
// The same for a body serialized already (send_frame throws nlohmann's type_error when a
// string of `message` is not UTF-8; callers that must not throw dump first, then send this).
bool send_frame_body(int fd, const std::string& body, int pass_fd = -1);

// Accumulates bytes read from a stream socket and yields whole frames.
class FrameReader {
 public:
  void append(const char* data, std::size_t size);
  // The next complete message; nullopt when more bytes are needed. Sets `corrupt` on an
  // oversized frame or bad JSON (the caller drops the connection). With `out_of_range`: a
  // frame that is JSON but holds a number no double holds (1e999, which the parser cannot
  // represent) sets it instead of `corrupt` and is consumed, for the caller to answer.
  std::optional<nlohmann::json> next(bool& corrupt, bool* out_of_range = nullptr);

 private:
  std::vector<char> buffer_;
  std::size_t start_ = 0;
};

}  // namespace etwrt

#include <windows.h>

namespace etwrt {

// GUIDs and byte blobs travel as lowercase hex of their raw bytes (a GUID as its 16 bytes in
// memory order), so both ends need no parsing of the textual GUID form.
std::string bytes_to_hex(const void* data, std::size_t size);
// False on odd length or a non-hex digit.
bool hex_to_bytes(const std::string& text, std::vector<std::uint8_t>& out);
std::string guid_to_wire(const GUID& guid);
// False when `text` is not 32 hex digits.
bool guid_from_wire(const std::string& text, GUID& out);

}  // namespace etwrt
