// etwrt: handing out and freeing REGHANDLE values (registration_handles.h).
#include "registration_handles.h"

#include <mutex>
#include <vector>

namespace etwrt {

namespace {

// add and remove take turns under this lock; find takes none. Never destroyed (a function-local
// static), like the table, for calls made while the process exits.
struct HandleBook {
  std::mutex mu;
  std::vector<std::uint64_t> free_indexes;
  std::uint64_t next_index = 1;  // Index 0 stays free: handle 0 names nothing.
  std::uint64_t next_serial = 1;
};

HandleBook& book() {
  static HandleBook* const book = new HandleBook;
  return *book;
}

}  // namespace

std::uint64_t RegistrationHandles::add(Registration* registration) {
  HandleBook& b = book();
  std::lock_guard lock(b.mu);
  std::uint64_t index = 0;
  if (!b.free_indexes.empty()) {
    index = b.free_indexes.back();
    b.free_indexes.pop_back();
  } else if (b.next_index <= kIndexMask) {
    index = b.next_index++;
  } else {
    return 0;
  }
  std::atomic<Slot*>& chunk_ref = chunks_[index >> kChunkBits];
  Slot* chunk = chunk_ref.load(std::memory_order_relaxed);
  if (chunk == nullptr) {
    chunk = new Slot[kChunkSize];
    chunk_ref.store(chunk, std::memory_order_release);
  }
  // The serial makes a handle freed and its slot reused later two different values.
  const std::uint64_t handle = (b.next_serial++ << kIndexBits) | index;
  Slot& slot = chunk[index & (kChunkSize - 1)];
  slot.registration.store(registration, std::memory_order_relaxed);
  slot.handle.store(handle, std::memory_order_release);
  return handle;
}

void RegistrationHandles::remove(std::uint64_t handle) {
  HandleBook& b = book();
  std::lock_guard lock(b.mu);
  if (find(handle) == nullptr) return;
  const std::uint64_t index = handle & kIndexMask;
  Slot& slot =
      chunks_[index >> kChunkBits].load(std::memory_order_relaxed)[index & (kChunkSize - 1)];
  slot.handle.store(0, std::memory_order_release);
  slot.registration.store(nullptr, std::memory_order_relaxed);
  b.free_indexes.push_back(index);
}

}  // namespace etwrt
