// etwrt: what a pool's hub hands to the ProcessTrace calls consuming its session (consumer.cc).
#pragma once

#include <etwrt/dataplane.h>

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

namespace etwrt {

// Records copied out of the pool (a view is valid only inside the reader's callback), in
// one arena per poll, shared read-only by every subscriber: no allocation per record.
struct Batch {
  struct Entry {
    bool is_loss = false;
    dataplane::LossReport loss;
    dataplane::RecordView head;  // Spans empty here; rebuilt from the offsets below.
    std::size_t traits_at = 0, traits_size = 0, data_at = 0, data_size = 0;
    std::size_t schema_at = 0, schema_size = 0;
  };
  std::vector<Entry> entries;
  std::vector<std::byte> arena;
  std::size_t records = 0;

  void add(const dataplane::RecordView& v) {
    Entry e;
    e.head = v;
    e.head.provider_traits = {};
    e.head.user_data = {};
    e.traits_at = arena.size();
    e.traits_size = v.provider_traits.size();
    arena.insert(arena.end(), v.provider_traits.begin(), v.provider_traits.end());
    e.head.event_schema = {};
    e.schema_at = arena.size();
    e.schema_size = v.event_schema.size();
    arena.insert(arena.end(), v.event_schema.begin(), v.event_schema.end());
    e.data_at = arena.size();
    e.data_size = v.user_data.size();
    arena.insert(arena.end(), v.user_data.begin(), v.user_data.end());
    entries.push_back(e);
    ++records;
  }
  void add(const dataplane::LossReport& loss) {
    Entry e;
    e.is_loss = true;
    e.loss = loss;
    entries.push_back(e);
  }
  dataplane::RecordView view(const Entry& e) const {
    dataplane::RecordView v = e.head;
    v.provider_traits = std::span<const std::byte>(arena.data() + e.traits_at, e.traits_size);
    v.event_schema = std::span<const std::byte>(arena.data() + e.schema_at, e.schema_size);
    v.user_data = std::span<const std::byte>(arena.data() + e.data_at, e.data_size);
    return v;
  }
};
using BatchPtr = std::shared_ptr<const Batch>;

}  // namespace etwrt
