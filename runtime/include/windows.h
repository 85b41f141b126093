/* etwrt: stands in for <windows.h> on Linux so that code written against the documented
 * Win32 ETW API, and provider code generated for it, compiles unchanged. It offers the base
 * types, names and macros the ETW headers need, the HRESULT family, and the few other Win32
 * functions generated provider code calls (heap, LCMapStringEx), and the thread's last error
 * that consumer and controller code reads (GetLastError), and FileTimeToSystemTime, with which
 * consumer code prints an event's time stamp. */
#ifndef ETWRT_WINDOWS_H
#define ETWRT_WINDOWS_H
#include "winapifamily.h"
#include "etwrt/win32_base.h"
#include "winerror.h"
#include "errhandlingapi.h"
#include "timezoneapi.h"
#include "heapapi.h"
#include "winnls.h"
#include "etwrt/wide_crt.h"
#endif
