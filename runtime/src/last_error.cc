// etwrt: GetLastError / SetLastError (errhandlingapi.h): the thread's last-error code.
#include <windows.h>

namespace {

// Per thread, as kernel32's: a thread starts with ERROR_SUCCESS.
thread_local DWORD t_last_error = ERROR_SUCCESS;

}  // namespace

extern "C" {

DWORD WINAPI GetLastError(void) { return t_last_error; }

void WINAPI SetLastError(DWORD dwErrCode) { t_last_error = dwErrCode; }

}  // extern "C"
