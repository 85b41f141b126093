/*
 * etwrt: the wide-string functions of Microsoft's CRT that glibc lacks (wcscpy_s, wcscat_s,
 * wcsncpy_s, wcsnlen_s), for code built with a 2-byte wchar_t (-fshort-wchar,
 * etwrt::win32_abi); windows.h includes this header then. Implemented by libetwrt on 16-bit
 * units (src/wchar16.cc), where glibc's own wide functions (wcslen, wcscpy, wmemcpy, ...) are
 * redirected for such code too (docs/etwrt/use.md, "Wide strings").
 * On an error the destination (when there is one) becomes the empty string and the code is
 * returned: EINVAL (a NULL pointer, a size of 0, a destination with no NUL within its size),
 * ERANGE (the result does not fit). _TRUNCATE is not supported.
 *   wchar_t name[8];
 *   wcscpy_s(name, L"session");   // 0; the array form takes the size from the array
 */
#ifndef ETWRT_WIDE_CRT_H
#define ETWRT_WIDE_CRT_H

#include <stddef.h>

#if defined(__SIZEOF_WCHAR_T__) && __SIZEOF_WCHAR_T__ == 2

#ifndef _ERRNO_T_DEFINED
#define _ERRNO_T_DEFINED
typedef int errno_t;
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* libetwrt exports them under its own names, so that it never takes the C library's names
   from another library of the process (one built for a 4-byte wchar_t, C11 Annex K's). */
errno_t etwrt_wcscpy_s(wchar_t* dest, size_t size, const wchar_t* src);
errno_t etwrt_wcscat_s(wchar_t* dest, size_t size, const wchar_t* src);
errno_t etwrt_wcsncpy_s(wchar_t* dest, size_t size, const wchar_t* src, size_t count);
size_t etwrt_wcsnlen_s(const wchar_t* s, size_t most);

static inline errno_t wcscpy_s(wchar_t* dest, size_t size, const wchar_t* src) {
  return etwrt_wcscpy_s(dest, size, src);
}
static inline errno_t wcscat_s(wchar_t* dest, size_t size, const wchar_t* src) {
  return etwrt_wcscat_s(dest, size, src);
}
static inline errno_t wcsncpy_s(wchar_t* dest, size_t size, const wchar_t* src, size_t count) {
  return etwrt_wcsncpy_s(dest, size, src, count);
}
static inline size_t wcsnlen_s(const wchar_t* s, size_t most) { return etwrt_wcsnlen_s(s, most); }

#ifdef __cplusplus
}

/* The CRT's C++ forms that take the destination's size from its array type. */
template <size_t N>
inline errno_t wcscpy_s(wchar_t (&dest)[N], const wchar_t* src) {
  return wcscpy_s(dest, N, src);
}
template <size_t N>
inline errno_t wcscat_s(wchar_t (&dest)[N], const wchar_t* src) {
  return wcscat_s(dest, N, src);
}
template <size_t N>
inline errno_t wcsncpy_s(wchar_t (&dest)[N], const wchar_t* src, size_t count) {
  return wcsncpy_s(dest, N, src, count);
}
#endif

#endif /* a 2-byte wchar_t */

#endif /* ETWRT_WIDE_CRT_H */
