// EVENT_TRACE_COMPRESSED_MODE (etl_file.h): a stage of full buffers compressed and written by
// the background writer's thread, while the logger fills the other stage.
#include "etl_file.h"

#include <cerrno>
#include <cstring>

namespace etwrt::broker {
namespace {

constexpr std::uint16_t kBufferFlagCompressed = 0x0040;  // ETW_BUFFER_FLAG_COMPRESSED

}  // namespace

// Compresses fill_'s records (MS-XCA plain LZ77) to the stage's end, after room for the buffer's
// header, and returns the bytes the buffer takes in the file: its header and its records
// compressed, or BufferSize when they would not shrink (it is then written as it is).
std::uint32_t EtlFile::pack() {
  const std::uint32_t bs = settings_.buffer_bytes;
  std::byte* out = stages_[cur_].get() + packed_used_ + kBufferHeaderBytes;
  const std::size_t n = encoder_.compress(
      std::span<const std::byte>(buffer() + kBufferHeaderBytes, fill_->used - kBufferHeaderBytes),
      std::span<std::byte>(out, stage_bytes_ - packed_used_ - kBufferHeaderBytes));
  return n != 0 && kBufferHeaderBytes + n < bs ? static_cast<std::uint32_t>(kBufferHeaderBytes + n)
                                               : bs;
}

// Puts fill_'s header (put_buffer_header's) ahead of what pack() made, with BufferSize its bytes
// in the file and the compressed flag; a buffer that did not shrink is copied whole (0xFF to its
// end, no flag).
void EtlFile::stage_packed(std::uint32_t size) {
  const std::uint32_t bs = settings_.buffer_bytes;
  std::byte* out = stages_[cur_].get() + packed_used_;
  if (size < bs) {
    std::memcpy(out, buffer(), kBufferHeaderBytes);
    std::memcpy(out, &size, 4);
    std::uint16_t flags;
    std::memcpy(&flags, out + 0x34, 2);
    flags |= kBufferFlagCompressed;
    std::memcpy(out + 0x34, &flags, 2);
  } else {
    std::memcpy(out, buffer(), fill_->used);
    std::memset(out + fill_->used, 0xFF, bs - fill_->used);
  }
  packed_used_ += size;
}

// Whether the stage has no room left for one more buffer: BufferSize each, or for a compressed
// file the most a buffer's header and records compressed may take.
bool EtlFile::stage_full() const {
  if (!compressed_) return staged_ == stage_capacity_;
  const std::size_t most = kBufferHeaderBytes + etl::xpress_lz77_bound(settings_.buffer_bytes);
  return packed_used_ + most > stage_bytes_;
}

// Whether the file has no room for one more buffer: MaximumFileSize in buffers, or for a
// compressed file in bytes, the buffer's own (`packed`, pack()'s) and those written, being
// written and staged counted.
bool EtlFile::file_full(std::uint64_t capacity, std::uint32_t packed) const {
  if (capacity == 0) return false;
  if (!compressed_) return file_buffers_ >= capacity;
  const std::uint64_t pending = in_flight_.active ? in_flight_.bytes : 0;
  return write_at_ + pending + packed_used_ + packed > capacity * settings_.buffer_bytes;
}

}  // namespace etwrt::broker
