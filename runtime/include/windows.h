/* etwrt: stands in for <windows.h> on Linux so that code written against the documented
 * Win32 ETW API compiles unchanged. It offers the base types the ETW headers need. */
#ifndef ETWRT_WINDOWS_H
#define ETWRT_WINDOWS_H
#include "etwrt/win32_base.h"
#endif
