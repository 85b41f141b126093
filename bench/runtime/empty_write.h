// The floor for any EventWrite that lives in a shared library: a function of a shared library
// of its own with EventWrite's signature that only returns ERROR_SUCCESS, called through the
// PLT as a program calls libetwrt's EventWrite (Linux only).
#pragma once

#include <windows.h>
#include <evntprov.h>

extern "C" ULONG etwh_bench_empty_write(REGHANDLE handle, PCEVENT_DESCRIPTOR descriptor,
                                        ULONG count, PEVENT_DATA_DESCRIPTOR data);
