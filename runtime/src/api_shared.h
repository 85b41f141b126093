// What the files of libetwrt's Win32 entry points share: api.cc (the write path),
// api_register.cc (registration and traits), api_controller.cc (sessions and enables) and
// api_activity.cc (activity IDs).
#pragma once

#include "client.h"
#include "registration_handles.h"

#include <windows.h>

#include <chrono>

// Thread-locals of this library use the initial-exec model: one %fs-relative access instead
// of a __tls_get_addr call (general-dynamic), which showed in EventWrite profiles. They are
// small; a process that dlopens libetwrt needs that much static TLS surplus (glibc keeps some).
#define ETWRT_FAST_TLS __attribute__((tls_model("initial-exec"))) thread_local

namespace etwrt {

// An upper bound for calls that have no timeout of their own, so that nothing hangs.
inline constexpr std::chrono::seconds kCallLimit{30};

// The registration `handle` names, nullptr for a value EventRegister never returned (or one
// unregistered since): such a handle is never dereferenced (registration_handles.h).
inline Registration* registration_of(REGHANDLE handle) {
  return g_registration_handles.find(handle);
}

// The calling thread's activity ID (EventActivityIdControl); events carry it by default.
// Defined in api.cc, whose write path reads it.
extern constinit ETWRT_FAST_TLS GUID t_activity_id;

}  // namespace etwrt
