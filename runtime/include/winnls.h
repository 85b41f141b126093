/*
 * etwrt: the one National Language Support function provider code needs: LCMapStringEx,
 * with which TraceLogging upper-cases a provider name before hashing it into the provider
 * GUID. Implemented by libetwrt (src/win32_nls.cc) for the invariant locale only.
 */
#ifndef ETWRT_WINNLS_H
#define ETWRT_WINNLS_H

#include "etwrt/win32_base.h"

#define LOCALE_NAME_INVARIANT ETWRT_WIDE("")
#define LCMAP_LOWERCASE 0x00000100
#define LCMAP_UPPERCASE 0x00000200
#define LCMAP_BYTEREV 0x00000800

typedef LONG_PTR LPARAM;
typedef struct _nlsversioninfoex NLSVERSIONINFO, *LPNLSVERSIONINFO;

#ifdef __cplusplus
extern "C" {
#endif

/* LCMAP_UPPERCASE or LCMAP_LOWERCASE (Unicode simple case mapping of each UTF-16 unit
   outside the surrogates), optionally with LCMAP_BYTEREV, in place or not. cchSrc -1: up to
   and with the NUL. cchDest 0: returns the length needed. Returns the units written, or 0
   (a NULL or unknown locale, unknown flags, a short destination). */
int WINAPI LCMapStringEx(LPCWSTR lpLocaleName, DWORD dwMapFlags, LPCWSTR lpSrcStr, int cchSrc,
                         LPWSTR lpDestStr, int cchDest, LPNLSVERSIONINFO lpVersionInformation,
                         LPVOID lpReserved, LPARAM sortHandle);

#ifdef __cplusplus
}
#endif

#endif /* ETWRT_WINNLS_H */
