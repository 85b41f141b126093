/*
 * etwrt: FileTimeToSystemTime (timezoneapi.h, included by windows.h), what consumer code calls
 * to print an event's TimeStamp. Implemented by libetwrt (src/win32_time.cc). As its page says:
 * a FILETIME of 0x8000000000000000 or more fails (FALSE, the thread's last error
 * ERROR_INVALID_PARAMETER); the SYSTEMTIME is UTC, with the day of the week.
 */
#ifndef ETWRT_TIMEZONEAPI_H
#define ETWRT_TIMEZONEAPI_H

#include "etwrt/win32_base.h"

#ifdef __cplusplus
extern "C" {
#endif

BOOL WINAPI FileTimeToSystemTime(const FILETIME* lpFileTime, LPSYSTEMTIME lpSystemTime);

#ifdef __cplusplus
}
#endif

#endif /* ETWRT_TIMEZONEAPI_H */
