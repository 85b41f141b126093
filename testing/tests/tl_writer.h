// A TraceLogging-shaped writer for the tests: each event's metadata built in TraceLogging's
// encoding (runtime/src/tracelogging.h) with two fields, "Port" (UINT32) and "Host" (an 8-bit
// string), passed as typed data descriptors after the provider's traits were set.
#pragma once

#include <windows.h>
#include <evntprov.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace etwh::testing::test {

inline std::vector<std::uint8_t> tl_metadata(const std::string& event_name) {
  std::vector<std::uint8_t> m(3, 0);  // size (filled below), tags
  const auto add = [&m](const std::string& text) {
    for (char c : text) m.push_back(static_cast<std::uint8_t>(c));
    m.push_back(0);
  };
  add(event_name);
  add("Port");
  m.push_back(8);  // UINT32
  add("Host");
  m.push_back(2);  // ANSISTRING
  m[0] = static_cast<std::uint8_t>(m.size());
  m[1] = static_cast<std::uint8_t>(m.size() >> 8);
  return m;
}

// TraceLogging's provider traits: UINT16 size, the provider name.
inline std::vector<std::uint8_t> tl_traits(const std::string& provider_name) {
  std::vector<std::uint8_t> t(2, 0);
  for (char c : provider_name) t.push_back(static_cast<std::uint8_t>(c));
  t.push_back(0);
  t[0] = static_cast<std::uint8_t>(t.size());
  return t;
}

class TlProvider {
 public:
  TlProvider(const GUID& id, const std::string& name) : traits_(tl_traits(name)) {
    registered_ = EventRegister(&id, nullptr, nullptr, &handle_) == ERROR_SUCCESS;
    if (registered_) {
      EventSetInformation(handle_, EventProviderSetTraits, traits_.data(),
                          static_cast<ULONG>(traits_.size()));
    }
  }
  ~TlProvider() {
    if (registered_) EventUnregister(handle_);
  }
  bool registered() const { return registered_; }
  REGHANDLE handle() const { return handle_; }

  ULONG write(const std::string& event, UCHAR level, ULONGLONG keyword, std::uint32_t port,
              const std::string& host, const GUID* activity = nullptr,
              const GUID* related = nullptr) {
    const std::vector<std::uint8_t> metadata = tl_metadata(event);
    EVENT_DATA_DESCRIPTOR data[4];
    EventDataDescCreate(&data[0], traits_.data(), static_cast<ULONG>(traits_.size()));
    // Type is the low byte of Reserved (a union in the Windows SDK; mingw-w64 10 names only
    // Reserved), so this sets Type on either header.
    data[0].Reserved = EVENT_DATA_DESCRIPTOR_TYPE_PROVIDER_METADATA;
    EventDataDescCreate(&data[1], metadata.data(), static_cast<ULONG>(metadata.size()));
    data[1].Reserved = EVENT_DATA_DESCRIPTOR_TYPE_EVENT_METADATA;
    EventDataDescCreate(&data[2], &port, sizeof port);
    EventDataDescCreate(&data[3], host.c_str(), static_cast<ULONG>(host.size() + 1));
    const EVENT_DESCRIPTOR d = {0, 0, 11, level, 0, 0, keyword};
    return EventWriteTransfer(handle_, &d, activity, related, 4, data);
  }

 private:
  std::vector<std::uint8_t> traits_;
  REGHANDLE handle_ = 0;
  bool registered_ = false;
};

}  // namespace etwh::testing::test
