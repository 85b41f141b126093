#include "wire.h"

#include "etwrt_os.h"

#include <etwh/json_parse_failure.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace etwrt {

bool send_frame(int fd, const nlohmann::json& message, int pass_fd) {
  return send_frame_body(fd, message.dump(), pass_fd);
}

bool send_frame_body(int fd, const std::string& body, int pass_fd) {
  if (body.size() > kMaxFrameBytes) return false;
  std::string frame(4, '\0');
  const auto n = static_cast<std::uint32_t>(body.size());
  for (int i = 0; i < 4; ++i) frame[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  frame += body;
  std::size_t done = 0;
  while (done < frame.size()) {
    // The descriptor rides on the frame's first bytes, so the receiver holds it before it has
    // the whole frame.
    const ssize_t w = os::send_with_fd(fd, frame.data() + done, frame.size() - done, pass_fd);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (w > 0) pass_fd = -1;
    done += static_cast<std::size_t>(w);
  }
  return true;
}

void FrameReader::append(const char* data, std::size_t size) {
  if (start_ > 0 && start_ == buffer_.size()) {
    buffer_.clear();
    start_ = 0;
  }
  buffer_.insert(buffer_.end(), data, data + size);
}

namespace {

// nlohmann's error 406: a number that overflows a double, in a text that is JSON up to that
// number.
constexpr int kNumberOverflow = 406;

}  // namespace

std::optional<nlohmann::json> FrameReader::next(bool& corrupt, bool* out_of_range) {
  corrupt = false;
  if (out_of_range != nullptr) *out_of_range = false;
  const std::size_t available = buffer_.size() - start_;
  if (available < 4) return std::nullopt;
  std::uint32_t n = 0;
  for (int i = 0; i < 4; ++i) {
    n |= static_cast<std::uint32_t>(static_cast<unsigned char>(buffer_[start_ + i])) << (8 * i);
  }
  if (n > kMaxFrameBytes) {
    corrupt = true;
    return std::nullopt;
  }
  if (available < 4 + static_cast<std::size_t>(n)) return std::nullopt;
  const char* body = buffer_.data() + start_ + 4;
  start_ += 4 + n;
  auto parsed = nlohmann::json::parse(body, body + n, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    etwh::JsonParseFailure failure;
    if (out_of_range != nullptr) nlohmann::json::sax_parse(body, body + n, &failure);
    if (failure.id == kNumberOverflow) {
      *out_of_range = true;
    } else {
      corrupt = true;
    }
    return std::nullopt;
  }
  if (start_ == buffer_.size()) {
    buffer_.clear();
    start_ = 0;
  }
  return parsed;
}

}  // namespace etwrt

namespace etwrt {

std::string bytes_to_hex(const void* data, std::size_t size) {
  static const char digits[] = "0123456789abcdef";
  const auto* p = static_cast<const std::uint8_t*>(data);
  std::string out;
  out.reserve(size * 2);
  for (std::size_t i = 0; i < size; ++i) {
    out += digits[p[i] >> 4];
    out += digits[p[i] & 15];
  }
  return out;
}

bool hex_to_bytes(const std::string& text, std::vector<std::uint8_t>& out) {
  if (text.size() % 2 != 0) return false;
  auto value = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  out.clear();
  out.reserve(text.size() / 2);
  for (std::size_t i = 0; i < text.size(); i += 2) {
    const int hi = value(text[i]);
    const int lo = value(text[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out.push_back(static_cast<std::uint8_t>(hi * 16 + lo));
  }
  return true;
}

std::string guid_to_wire(const GUID& guid) { return bytes_to_hex(&guid, sizeof guid); }

bool guid_from_wire(const std::string& text, GUID& out) {
  std::vector<std::uint8_t> bytes;
  if (!hex_to_bytes(text, bytes) || bytes.size() != sizeof(GUID)) return false;
  std::memcpy(&out, bytes.data(), sizeof out);
  return true;
}

}  // namespace etwrt
