// etwrt: the REGHANDLE values EventRegister and RegisterTraceGuids hand out, and their lookup.
// A handle is a slot number and a serial, never an address, so that a value EventRegister never
// returned (0x1, a handle already unregistered, any integer) is told apart without reading the
// memory it would point to: the provider calls answer ERROR_INVALID_HANDLE (or FALSE) for it as
// the reference pages say, instead of crashing their caller.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace etwrt {

struct Registration;

class RegistrationHandles {
 public:
  // Enough for any process: Windows caps a process at 1,024 provider GUIDs.
  static constexpr unsigned kIndexBits = 20;
  static constexpr unsigned kChunkBits = 10;
  static constexpr std::size_t kChunkSize = std::size_t{1} << kChunkBits;
  static constexpr std::size_t kChunks = std::size_t{1} << (kIndexBits - kChunkBits);
  static constexpr std::uint64_t kIndexMask = (std::uint64_t{1} << kIndexBits) - 1;

  // A new handle for `registration` (never 0, never one handed out before in this process);
  // 0 when every slot is taken.
  std::uint64_t add(Registration* registration);
  // Frees `handle`'s slot: the handle is unknown from now on.
  void remove(std::uint64_t handle);

  // The registration of `handle`, or nullptr when it names none. Lock-free: a few loads, on the
  // path of every EventWrite.
  Registration* find(std::uint64_t handle) const noexcept {
    const Slot* chunk =
        chunks_[(handle & kIndexMask) >> kChunkBits].load(std::memory_order_acquire);
    if (chunk == nullptr) [[unlikely]]
      return nullptr;
    const Slot& slot = chunk[handle & (kChunkSize - 1)];
    // Slot 0 of chunk 0 is never used, so handle 0 and an empty slot (handle 0) never match.
    if (slot.handle.load(std::memory_order_acquire) != handle) [[unlikely]]
      return nullptr;
    return slot.registration.load(std::memory_order_relaxed);
  }

 private:
  struct Slot {
    std::atomic<std::uint64_t> handle{0};  // 0: free
    std::atomic<Registration*> registration{nullptr};
  };
  std::atomic<Slot*> chunks_[kChunks] = {};
};

// The handles of this process (trivially destructible: EventWrite from a static destructor
// still finds the table; its chunks are never freed).
inline constinit RegistrationHandles g_registration_handles;

}  // namespace etwrt
