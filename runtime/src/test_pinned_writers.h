// Test support: one provider thread per processor, each pinned to its own, all writing at once
// through EventWrite, so that a test can check what each event says of its writer's processor.
#pragma once

#include "test_processors.h"

#include <windows.h>
#include <evntprov.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace etwrt::testing {

struct PinnedWrites {
  bool pinned = true;  // every thread ran on its processor
  ULONG written = 0;   // EventWrite calls that returned ERROR_SUCCESS
};

// `each` events of 32 bytes (Id 1, level 4) from each processor of `cpus`, their first two
// ULONGs the writer's processor and the event's index. The threads start together.
inline PinnedWrites write_pinned(REGHANDLE reg, const std::vector<int>& cpus, ULONG each) {
  std::atomic<bool> pinned{true};
  std::atomic<ULONG> written{0};
  std::atomic<std::size_t> ready{0};
  std::vector<std::thread> threads;
  for (const int cpu : cpus) {
    threads.emplace_back([&, cpu] {
      if (!pin_to(cpu)) pinned = false;
      ++ready;
      while (ready.load() < cpus.size()) std::this_thread::yield();
      EVENT_DESCRIPTOR d{};
      d.Id = 1;
      d.Level = 4;
      for (ULONG i = 0; i < each; ++i) {
        std::array<ULONG, 8> payload{};
        payload[0] = static_cast<ULONG>(cpu);
        payload[1] = i;
        EVENT_DATA_DESCRIPTOR data;
        EventDataDescCreate(&data, payload.data(), sizeof payload);
        if (EventWrite(reg, &d, 1, &data) == ERROR_SUCCESS) ++written;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return {pinned.load(), written.load()};
}

}  // namespace etwrt::testing
