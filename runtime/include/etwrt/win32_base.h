/*
 * etwrt: the Win32 base types, names and macros that the ETW headers (evntprov.h,
 * evntrace.h, evntcons.h) and provider code written for Windows (mc.exe output, TraceLogging
 * headers) rely on, for code built on Linux against etwrt.
 *
 * Layouts follow the Windows x64 ABI (LLP64): ULONG and LONG are 32-bit, pointers 64-bit.
 * WCHAR is a UTF-16 code unit as on Windows: wchar_t when the compiler's wchar_t has 2 bytes
 * (-fshort-wchar, which makes L"..." UTF-16), char16_t otherwise; the W entry points take
 * 16-bit units whichever it is (docs/etwrt/use.md, "Wide strings").
 */
#ifndef ETWRT_WIN32_BASE_H
#define ETWRT_WIN32_BASE_H

#if defined(_WIN32)
#error "etwrt headers are for non-Windows builds; on Windows use the SDK headers"
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <wchar.h>

#ifdef __cplusplus
#define ETWRT_EXTERN_C extern "C"
#else
#define ETWRT_EXTERN_C extern
#endif

#include "msvc.h"
#include "../sal.h"

/* The Windows version the code targets (sdkddkver.h): Windows 10 unless the code says. */
#define _WIN32_WINNT_WIN7 0x0601
#define _WIN32_WINNT_WIN8 0x0602
#define _WIN32_WINNT_WINBLUE 0x0603
#define _WIN32_WINNT_WIN10 0x0A00
#define NTDDI_WIN7 0x06010000
#define NTDDI_WIN8 0x06020000
#define NTDDI_WINBLUE 0x06030000
#define NTDDI_WIN10 0x0A000000
#ifndef _WIN32_WINNT
#define _WIN32_WINNT _WIN32_WINNT_WIN10
#endif
#ifndef WINVER
#define WINVER _WIN32_WINNT
#endif
#ifndef NTDDI_VERSION
#define NTDDI_VERSION NTDDI_WIN10
#endif

#define WINAPI
#define NTAPI
#define EVNTAPI
#define WMIAPI
#define CALLBACK
#define APIENTRY
#define WINADVAPI
#define DECLSPEC_IMPORT
#define ANYSIZE_ARRAY 1
#define MAX_PATH 260

typedef void VOID;
typedef void *PVOID, *LPVOID, *HANDLE;
typedef PVOID PSID; /* winnt.h: a security identifier, opaque */
typedef const void *LPCVOID, *PCVOID;
typedef char CHAR;
typedef CHAR *PCHAR, *LPSTR, *PSTR;
typedef const CHAR *LPCSTR, *PCSTR;
#if defined(__SIZEOF_WCHAR_T__) && __SIZEOF_WCHAR_T__ == 2
typedef wchar_t WCHAR;
#define ETWRT_WIDE(quote) L##quote
#elif defined(__cplusplus)
typedef char16_t WCHAR;
#define ETWRT_WIDE(quote) u##quote
#else
typedef uint16_t WCHAR; /* <uchar.h>'s char16_t, the type of u"..." */
#define ETWRT_WIDE(quote) u##quote
#endif
typedef WCHAR *PWCHAR, *LPWSTR, *PWSTR;
typedef const WCHAR *LPCWSTR, *PCWSTR;
typedef unsigned char UCHAR, BYTE, BOOLEAN, UINT8;
typedef UCHAR *PUCHAR, *PBYTE, *LPBYTE;
typedef BOOLEAN* PBOOLEAN;
typedef signed char INT8;
typedef short SHORT, INT16;
typedef unsigned short USHORT, WORD, UINT16;
typedef USHORT* PUSHORT;
typedef int BOOL, INT;
typedef BOOL* PBOOL;
typedef unsigned int UINT;
typedef int32_t LONG, INT32;
typedef uint32_t ULONG, DWORD, UINT32, ULONG32, DWORD32;
typedef LONG* PLONG;
typedef ULONG* PULONG;
typedef DWORD *PDWORD, *LPDWORD;
typedef int64_t LONGLONG, LONG64, INT64;
typedef uint64_t ULONGLONG, ULONG64, DWORD64, UINT64;
typedef ULONGLONG* PULONGLONG;
typedef ULONG64* PULONG64;
typedef int64_t LONG_PTR, INT_PTR, SSIZE_T;
typedef uint64_t ULONG_PTR, UINT_PTR, SIZE_T, DWORD_PTR;
typedef SIZE_T* PSIZE_T;
typedef LONG HRESULT;

/* TEXT("...") and TCHAR follow UNICODE, as the UNICODE-neutral entry points do. */
#ifdef UNICODE
typedef WCHAR TCHAR;
#define __TEXT(quote) ETWRT_WIDE(quote)
#else
typedef CHAR TCHAR;
#define __TEXT(quote) quote
#endif
#define TEXT(quote) __TEXT(quote)
typedef TCHAR *PTCHAR, *LPTSTR, *PTSTR;
typedef const TCHAR *LPCTSTR, *PCTSTR;

#define RtlZeroMemory(Destination, Length) memset((Destination), 0, (Length))
#define RtlFillMemory(Destination, Length, Fill) memset((Destination), (Fill), (Length))
#define RtlCopyMemory(Destination, Source, Length) memcpy((Destination), (Source), (Length))
#define RtlMoveMemory(Destination, Source, Length) memmove((Destination), (Source), (Length))
#define RtlEqualMemory(Destination, Source, Length) (!memcmp((Destination), (Source), (Length)))
#define ZeroMemory RtlZeroMemory
#define FillMemory RtlFillMemory
#define CopyMemory RtlCopyMemory
#define MoveMemory RtlMoveMemory
#define EqualMemory RtlEqualMemory

/* In C++ a pointer argument is a compile error, as with the SDK's template. */
#ifdef __cplusplus
extern "C++" {
template <typename T, size_t N>
char (*etwrt_array_size_(T (&)[N]))[N];
}
#define RTL_NUMBER_OF(A) (sizeof(*etwrt_array_size_(A)))
#else
#define RTL_NUMBER_OF(A) (sizeof(A) / sizeof((A)[0]))
#endif
#define ARRAYSIZE(A) RTL_NUMBER_OF(A)
#define _ARRAYSIZE(A) RTL_NUMBER_OF(A)

#define UNREFERENCED_PARAMETER(P) ((void)(P))
#define DBG_UNREFERENCED_PARAMETER(P) ((void)(P))
#define DBG_UNREFERENCED_LOCAL_VARIABLE(V) ((void)(V))

#ifndef TRUE
#define TRUE 1
#endif
#ifndef FALSE
#define FALSE 0
#endif

#define INVALID_HANDLE_VALUE ((HANDLE)(LONG_PTR)-1)

typedef union _LARGE_INTEGER {
  struct {
    DWORD LowPart;
    LONG HighPart;
  };
  struct {
    DWORD LowPart;
    LONG HighPart;
  } u;
  LONGLONG QuadPart;
} LARGE_INTEGER, *PLARGE_INTEGER;

typedef union _ULARGE_INTEGER {
  struct {
    DWORD LowPart;
    DWORD HighPart;
  };
  struct {
    DWORD LowPart;
    DWORD HighPart;
  } u;
  ULONGLONG QuadPart;
} ULARGE_INTEGER, *PULARGE_INTEGER;

typedef struct _FILETIME {
  DWORD dwLowDateTime;
  DWORD dwHighDateTime;
} FILETIME, *PFILETIME, *LPFILETIME;

typedef struct _SYSTEMTIME {
  WORD wYear;
  WORD wMonth;
  WORD wDayOfWeek;
  WORD wDay;
  WORD wHour;
  WORD wMinute;
  WORD wSecond;
  WORD wMilliseconds;
} SYSTEMTIME, *PSYSTEMTIME, *LPSYSTEMTIME;

typedef struct _TIME_ZONE_INFORMATION {
  LONG Bias;
  WCHAR StandardName[32];
  SYSTEMTIME StandardDate;
  LONG StandardBias;
  WCHAR DaylightName[32];
  SYSTEMTIME DaylightDate;
  LONG DaylightBias;
} TIME_ZONE_INFORMATION, *PTIME_ZONE_INFORMATION, *LPTIME_ZONE_INFORMATION;

#ifndef GUID_DEFINED
#define GUID_DEFINED
typedef struct _GUID {
  uint32_t Data1;
  uint16_t Data2;
  uint16_t Data3;
  uint8_t Data4[8];
} GUID;
#endif
typedef GUID *LPGUID, *PGUID;
typedef const GUID *LPCGUID, *PCGUID;

#ifdef __cplusplus
typedef const GUID& REFGUID;
inline bool IsEqualGUID(REFGUID a, REFGUID b) { return memcmp(&a, &b, sizeof(GUID)) == 0; }
inline bool operator==(REFGUID a, REFGUID b) { return IsEqualGUID(a, b); }
inline bool operator!=(REFGUID a, REFGUID b) { return !IsEqualGUID(a, b); }
#else
typedef const GUID* REFGUID;
#define IsEqualGUID(a, b) (memcmp((a), (b), sizeof(GUID)) == 0)
#endif

#define DEFINE_GUID(name, l, w1, w2, b1, b2, b3, b4, b5, b6, b7, b8) \
  static const GUID name = {l, w1, w2, {b1, b2, b3, b4, b5, b6, b7, b8}}

static const GUID GUID_NULL = {0, 0, 0, {0, 0, 0, 0, 0, 0, 0, 0}};

#include "../winerror.h"

#endif /* ETWRT_WIN32_BASE_H */
