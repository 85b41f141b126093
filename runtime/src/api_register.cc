// The Win32 entry points of libetwrt that register providers and set their traits
// (EventRegister, EventUnregister, EventSetInformation): argument checks in the calling process,
// then the broker through the process's Client.
#include "api_shared.h"
#include "client.h"
#include "observe.h"
#include "replies.h"
#include "traits.h"
#include "wire.h"

#include <windows.h>
#include <evntprov.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

namespace {

using etwrt::Client;
using etwrt::kCallLimit;
using etwrt::Registration;
using etwrt::registration_of;
using json = nlohmann::json;

// EventRegister's work: the registration is routed before the request goes out (so no
// notification that follows the reply is lost) and undone on any failure, the broker's side too.
ULONG register_provider(const GUID& guid, PENABLECALLBACK callback, void* context, REGHANDLE& out) {
  auto owned = std::make_unique<Registration>();
  Registration* registration = owned.get();
  registration->guid = guid;
  registration->callback = callback;
  registration->context = context;
  Client& client = Client::instance();
  if (!client.add_registration(registration)) return ERROR_NOT_ENOUGH_MEMORY;
  const std::uint64_t token = registration->handle;
  struct Undo {
    Client& client;
    Registration* registration;
    bool armed = true;
    ~Undo() {
      if (armed) client.remove_registration(registration);
    }
  } undo{client, registration};
  json request = {{"op", "register"}, {"token", token}, {"guid", etwrt::guid_to_wire(guid)}};
  const etwrt::ClientReply reply =
      client.call(request, kCallLimit, [&client, registration](const json& body) {
        client.publish_sessions(*registration, body.value("sessions", json::array()));
      });
  ULONG status = etwrt::reply_status(reply, "EventRegister");
  etwrt::PreEnabled pre;
  if (status == ERROR_SUCCESS) {
    try {
      pre = etwrt::read_pre_enabled(reply.body);
    } catch (const json::exception& e) {
      std::fprintf(stderr, "etwrt: EventRegister: %s\n", e.what());
      status = ERROR_INVALID_DATA;
    }
  }
  // The broker answered, but not readably: it may hold the registration, so drop it there too.
  if (status == ERROR_INVALID_DATA) {
    client.call({{"op", "unregister"}, {"token", token}}, kCallLimit);
  }
  if (status != ERROR_SUCCESS) return status;
  undo.armed = false;
  out = token;
  owned.release();
  if (etwrt::observe::on()) etwrt::observe::registered(token, guid);
  // An already enabled provider learns it inside EventRegister, on the calling thread, with
  // SourceId GUID_NULL and no filter data (as Windows does).
  if (pre.enabled) {
    Client::invoke(*registration, pre.source, 1, pre.level, pre.any, pre.all, nullptr);
  }
  return ERROR_SUCCESS;
}

// EventSetInformation(EventProviderSetTraits): the broker learns the traits, then the events.
ULONG set_traits(Registration* registration, REGHANDLE RegHandle, PVOID EventInformation,
                 ULONG InformationLength) {
  const etwrt::TraitsParseResult parsed = etwrt::parse_traits(EventInformation, InformationLength);
  if (!parsed.ok) return ERROR_INVALID_PARAMETER;
  json request = {
      {"op", "set_traits"}, {"token", RegHandle}, {"name", parsed.traits.name}, {"group", nullptr}};
  if (parsed.traits.group) request["group"] = etwrt::guid_to_wire(*parsed.traits.group);
  const etwrt::ClientReply reply = Client::instance().call(request, kCallLimit);
  const ULONG status = etwrt::reply_status(reply, "EventSetInformation");
  if (status == ERROR_SUCCESS) {
    Client::instance().set_traits(*registration, request);
    const auto* bytes = static_cast<const std::byte*>(EventInformation);
    registration->traits_blob.store(new std::vector<std::byte>(bytes, bytes + InformationLength),
                                    std::memory_order_release);
    registration->use_descriptor_type.store(true, std::memory_order_relaxed);
  }
  return status;
}

}  // namespace

extern "C" {

ULONG EVNTAPI EventRegister(LPCGUID ProviderId, PENABLECALLBACK EnableCallback,
                            PVOID CallbackContext, PREGHANDLE RegHandle) {
  if (ProviderId == nullptr || RegHandle == nullptr) return ERROR_INVALID_PARAMETER;
  *RegHandle = 0;
  return etwrt::guarded("EventRegister", [&] {
    return register_provider(*ProviderId, EnableCallback, CallbackContext, *RegHandle);
  });
}

ULONG EVNTAPI EventUnregister(REGHANDLE RegHandle) {
  return etwrt::guarded("EventUnregister", [&]() -> ULONG {
    Registration* registration = registration_of(RegHandle);
    Client& client = Client::instance();
    // etwrt choice: an unknown handle gets ERROR_INVALID_HANDLE.
    if (registration == nullptr || !client.remove_registration(registration))
      return ERROR_INVALID_HANDLE;
    if (etwrt::observe::on()) etwrt::observe::unregistered(RegHandle);
    client.call({{"op", "unregister"}, {"token", RegHandle}}, kCallLimit);
    registration->table.publish(nullptr, 0);
    delete registration->traits_blob.load();
    delete registration;
    return ERROR_SUCCESS;
  });
}

ULONG EVNTAPI EventSetInformation(REGHANDLE RegHandle, EVENT_INFO_CLASS InformationClass,
                                  PVOID EventInformation, ULONG InformationLength) {
  return etwrt::guarded("EventSetInformation", [&]() -> ULONG {
    Registration* registration = registration_of(RegHandle);
    // The page: ERROR_INVALID_PARAMETER "if the RegHandle parameter is not a valid provider
    // registration handle".
    if (registration == nullptr) return ERROR_INVALID_PARAMETER;
    // A caller may pass any integer: read the parameter's bytes as one, never as the enum
    // (loading a value outside EVENT_INFO_CLASS's range is undefined behaviour).
    std::underlying_type_t<EVENT_INFO_CLASS> raw_class = 0;
    static_assert(sizeof raw_class == sizeof InformationClass);
    std::memcpy(&raw_class, &InformationClass, sizeof raw_class);
    switch (raw_class) {
      case EventProviderBinaryTrackInfo:
        return ERROR_SUCCESS;  // Only matters to Windows' binary tracking; nothing to keep.
      case EventProviderUseDescriptorType:
        if (EventInformation == nullptr || InformationLength != sizeof(BOOLEAN))
          return ERROR_INVALID_PARAMETER;
        // Traits keep the Type honoured whatever this says (EVENT_DATA_DESCRIPTOR page).
        registration->use_descriptor_type.store(
            *static_cast<const BOOLEAN*>(EventInformation) != 0 ||
                registration->traits_blob.load(std::memory_order_acquire) != nullptr,
            std::memory_order_relaxed);
        return ERROR_SUCCESS;
      case EventProviderSetTraits: break;
      default: return ERROR_NOT_SUPPORTED;
    }
    const ULONG status = set_traits(registration, RegHandle, EventInformation, InformationLength);
    if (etwrt::observe::on()) etwrt::observe::traits(RegHandle, InformationLength, status);
    return status;
  });
}

}  // extern "C"
