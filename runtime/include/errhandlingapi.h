/*
 * etwrt: the thread's last-error code (errhandlingapi.h), as kernel32 keeps it: one value per
 * thread, 0 (ERROR_SUCCESS) in a new thread. Implemented by libetwrt (src/last_error.cc); the
 * entry points whose reference page says "call GetLastError" set it when they fail.
 */
#ifndef ETWRT_ERRHANDLINGAPI_H
#define ETWRT_ERRHANDLINGAPI_H

#include "etwrt/win32_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The calling thread's last-error code. */
DWORD WINAPI GetLastError(void);
/* Sets the calling thread's last-error code. */
void WINAPI SetLastError(DWORD dwErrCode);

#ifdef __cplusplus
}
#endif

#endif /* ETWRT_ERRHANDLINGAPI_H */
