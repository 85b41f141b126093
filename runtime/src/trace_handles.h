// etwrt: the TRACEHANDLEs OpenTrace gives out of one kind (real-time consumers in consumer.cc,
// trace files in etl/file_consumer.cc). A handle is its T's address, known while it is in the
// table; one ProcessTrace at a time holds it (claim, release); CloseTrace during that ProcessTrace
// frees it when the ProcessTrace returns (ERROR_CTX_CLOSE_PENDING meanwhile), as Windows does.
#pragma once

#include <evntrace.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

namespace etwrt {

// What a T of a TraceHandles table carries (its other members are the T's own).
struct TraceHandleState {
  bool processing = false;  // Guarded by the table's lock: a ProcessTrace holds it.
  bool closed = false;      // Guarded by the table's lock: CloseTrace during ProcessTrace.
  std::atomic<bool> close_requested{false};  // Read by ProcessTrace's loop without the lock.
};

template <class T>
class TraceHandles {
 public:
  TRACEHANDLE add(std::unique_ptr<T> trace) {
    std::lock_guard lock(mu_);
    T* raw = trace.release();
    all_.insert(raw);
    return reinterpret_cast<TRACEHANDLE>(raw);
  }

  bool contains(TRACEHANDLE handle) {
    std::lock_guard lock(mu_);
    return find_locked(handle) != nullptr;
  }

  // Marks the handles' traces as processing: ERROR_INVALID_HANDLE for an unknown handle or one
  // already in a ProcessTrace. Nothing stays marked on failure.
  ULONG claim(const TRACEHANDLE* handles, ULONG count, std::vector<T*>& out) {
    std::lock_guard lock(mu_);
    for (ULONG i = 0; i < count; ++i) {
      T* t = find_locked(handles[i]);
      if (t == nullptr || t->processing) {
        for (T* taken : out) taken->processing = false;
        out.clear();
        return ERROR_INVALID_HANDLE;
      }
      t->processing = true;
      out.push_back(t);
    }
    return ERROR_SUCCESS;
  }

  // The handles are free for another ProcessTrace; those CloseTrace was called on go now.
  void release(const std::vector<T*>& traces) {
    std::lock_guard lock(mu_);
    for (T* t : traces) {
      t->processing = false;
      if (t->closed) {
        all_.erase(t);
        delete t;
      }
    }
  }

  ULONG close(TRACEHANDLE handle) {
    std::lock_guard lock(mu_);
    T* t = find_locked(handle);
    if (t == nullptr) return ERROR_INVALID_HANDLE;
    if (t->processing) {
      // ProcessTrace returns after the current buffer and frees the handle.
      t->closed = true;
      t->close_requested.store(true, std::memory_order_release);
      return ERROR_CTX_CLOSE_PENDING;
    }
    all_.erase(t);
    delete t;
    return ERROR_SUCCESS;
  }

 private:
  T* find_locked(TRACEHANDLE handle) {
    auto* t = reinterpret_cast<T*>(static_cast<std::uintptr_t>(handle));
    return all_.contains(t) ? t : nullptr;
  }

  std::mutex mu_;
  std::set<T*> all_;
};

}  // namespace etwrt
