// EVENT_TRACE_COMPRESSED_MODE (etl_file.h): a stage of full buffers compressed and written by
// the background writer's thread, while the logger fills the other stage.
#include "etl_file.h"

#include <cerrno>
#include <cstring>

namespace etwrt::broker {
namespace {

constexpr std::uint16_t kBufferFlagCompressed = 0x0040;  // ETW_BUFFER_FLAG_COMPRESSED

}  // namespace

// Each of the stage's `buffers` (their headers filled, SavedOffset their bytes used) becomes
// its header, with BufferSize its bytes in the file and the compressed flag, then its records
// compressed (MS-XCA plain LZ77); a buffer that would not shrink stays as it is (0xFF to its
// end, no flag). All of them go to the file at `at` in one write.
BackgroundWriter::Outcome EtlFile::compress_stage(const std::byte* stage, std::uint32_t buffers,
                                                  std::uint64_t at) {
  const std::uint32_t bs = settings_.buffer_bytes;
  std::size_t size = 0;
  for (std::uint32_t k = 0; k < buffers; ++k) {
    const std::byte* buf = stage + std::size_t{k} * bs;
    std::uint32_t used;
    std::memcpy(&used, buf + 0x04, 4);
    std::byte* out = packed_.data() + size;
    const std::size_t n = encoder_.compress(
        std::span<const std::byte>(buf + kBufferHeaderBytes, used - kBufferHeaderBytes),
        std::span<std::byte>(out + kBufferHeaderBytes, packed_.size() - size - kBufferHeaderBytes));
    if (n != 0 && kBufferHeaderBytes + n < bs) {
      std::memcpy(out, buf, kBufferHeaderBytes);
      const auto packed = static_cast<std::uint32_t>(kBufferHeaderBytes + n);
      std::memcpy(out, &packed, 4);  // BufferSize: its bytes in the file
      std::uint16_t flags;
      std::memcpy(&flags, out + 0x34, 2);
      flags |= kBufferFlagCompressed;
      std::memcpy(out + 0x34, &flags, 2);
      size += packed;
    } else {
      std::memcpy(out, buf, used);
      std::memset(out + used, 0xFF, bs - used);
      size += bs;
    }
  }
  BackgroundWriter::Outcome outcome;
  bool direct = false;  // compressed buffers are not whole pages: never O_DIRECT
  outcome.ok = write_fully(fd_, direct, packed_.data(), size, at);
  outcome.error = outcome.ok ? 0 : errno;
  outcome.bytes = outcome.ok ? size : 0;
  return outcome;
}

// Whether the file has no room left for one more buffer: MaximumFileSize in buffers, or for a
// compressed file in bytes, each buffer not yet written counted as BufferSize (at most what it
// takes) until, near the end, waiting for them says what they took.
bool EtlFile::file_full(std::uint64_t capacity) {
  if (capacity == 0) return false;
  if (!compressed_) return file_buffers_ >= capacity;
  const std::uint64_t bs = settings_.buffer_bytes;
  const auto with_next = [&] {
    const std::uint64_t pending =
        std::uint64_t{staged_} + (in_flight_.active ? in_flight_.buffers : 0);
    return write_at_ + (pending + 1) * bs;
  };
  if (with_next() <= capacity * bs) return false;
  write_staged();
  return with_next() > capacity * bs;
}

}  // namespace etwrt::broker
