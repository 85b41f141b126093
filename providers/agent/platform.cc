#include "platform.h"

#include <cstdio>
#include <cstdlib>

#ifdef _WIN32
#include <fcntl.h>
#include <io.h>
#include <windows.h>
#else
#include <unistd.h>
#endif

namespace etwh::agent {

std::uint64_t current_pid() {
#ifdef _WIN32
  return GetCurrentProcessId();
#else
  return static_cast<std::uint64_t>(getpid());
#endif
}

std::uint64_t current_tid() {
#ifdef _WIN32
  return GetCurrentThreadId();
#else
  return static_cast<std::uint64_t>(gettid());
#endif
}

void prepare_stdio() {
#ifdef _WIN32
  _setmode(_fileno(stdin), _O_BINARY);
  _setmode(_fileno(stdout), _O_BINARY);
  // abort() would otherwise ask Windows Error Reporting to show a dialog. The old msvcrt.dll
  // that mingw-w64 links by default does not export _set_abort_behavior (only the UCRT does).
#if defined(_MSC_VER) || defined(_UCRT)
  _set_abort_behavior(0, _WRITE_ABORT_MSG | _CALL_REPORTFAULT);
#endif
  SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX);
#endif
}

void crash_now() {
  std::fflush(stdout);
  std::abort();
}

void exit_now(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(code);
}

}  // namespace etwh::agent
