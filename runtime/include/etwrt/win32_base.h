/*
 * etwrt: the Win32 base types, SAL annotations and error codes that the ETW headers
 * (evntprov.h, evntrace.h, evntcons.h) rely on, for code built on Linux against etwrt.
 *
 * Layouts follow the Windows x64 ABI (LLP64): ULONG and LONG are 32-bit, pointers 64-bit.
 * WCHAR is wchar_t so that L"..." literals keep compiling; only the ANSI (A) entry points
 * are implemented by etwrt.
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

#define WINAPI
#define NTAPI
#define EVNTAPI
#define WMIAPI
#define CALLBACK
#define WINADVAPI
#define DECLSPEC_IMPORT
#define FORCEINLINE static inline
#define ANYSIZE_ARRAY 1

/* SAL annotations used by the documented prototypes and samples: no meaning here. */
#define _In_
#define _In_opt_
#define _Out_
#define _Out_opt_
#define _Inout_
#define _Inout_opt_
#define _In_z_
#define _In_opt_z_
#define _Reserved_
#define _In_range_(lo, hi)
#define _In_reads_(n)
#define _In_reads_opt_(n)
#define _In_reads_bytes_(n)
#define _In_reads_bytes_opt_(n)
#define _Out_writes_(n)
#define _Out_writes_bytes_(n)
#define _Out_writes_bytes_opt_(n)
#define _Inout_updates_(n)
#define _Inout_updates_bytes_(n)
#define _Inout_updates_bytes_opt_(n)
#define _Success_(expr)
#define _Must_inspect_result_
#define _Check_return_
#define _When_(cond, annotation)
#define _Field_size_(n)
#define _Field_size_bytes_(n)

typedef void VOID;
typedef void *PVOID, *LPVOID, *HANDLE;
typedef const void *LPCVOID, *PCVOID;
typedef char CHAR;
typedef CHAR *PCHAR, *LPSTR, *PSTR;
typedef const CHAR *LPCSTR, *PCSTR;
typedef wchar_t WCHAR;
typedef WCHAR *PWCHAR, *LPWSTR, *PWSTR;
typedef const WCHAR *LPCWSTR, *PCWSTR;
typedef unsigned char UCHAR, BYTE, BOOLEAN, UINT8;
typedef UCHAR *PUCHAR, *PBYTE, *LPBYTE;
typedef BOOLEAN *PBOOLEAN;
typedef signed char INT8;
typedef short SHORT, INT16;
typedef unsigned short USHORT, WORD, UINT16;
typedef USHORT *PUSHORT;
typedef int BOOL, INT;
typedef BOOL *PBOOL;
typedef unsigned int UINT;
typedef int32_t LONG, INT32;
typedef uint32_t ULONG, DWORD, UINT32, ULONG32, DWORD32;
typedef LONG *PLONG;
typedef ULONG *PULONG;
typedef DWORD *PDWORD, *LPDWORD;
typedef int64_t LONGLONG, LONG64, INT64;
typedef uint64_t ULONGLONG, ULONG64, DWORD64, UINT64;
typedef ULONGLONG *PULONGLONG;
typedef ULONG64 *PULONG64;
typedef int64_t LONG_PTR, INT_PTR, SSIZE_T;
typedef uint64_t ULONG_PTR, UINT_PTR, SIZE_T, DWORD_PTR;

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

/* The names are UTF-16 code units as on Windows (WCHAR is wider here), to keep the
 * layout of TRACE_LOGFILE_HEADER identical to Windows'. */
typedef struct _TIME_ZONE_INFORMATION {
  LONG Bias;
  uint16_t StandardName[32];
  SYSTEMTIME StandardDate;
  LONG StandardBias;
  uint16_t DaylightName[32];
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
typedef const GUID &REFGUID;
inline bool IsEqualGUID(REFGUID a, REFGUID b) { return memcmp(&a, &b, sizeof(GUID)) == 0; }
inline bool operator==(REFGUID a, REFGUID b) { return IsEqualGUID(a, b); }
inline bool operator!=(REFGUID a, REFGUID b) { return !IsEqualGUID(a, b); }
#else
typedef const GUID *REFGUID;
#define IsEqualGUID(a, b) (memcmp((a), (b), sizeof(GUID)) == 0)
#endif

#define DEFINE_GUID(name, l, w1, w2, b1, b2, b3, b4, b5, b6, b7, b8) \
  static const GUID name = {l, w1, w2, {b1, b2, b3, b4, b5, b6, b7, b8}}

static const GUID GUID_NULL = {0, 0, 0, {0, 0, 0, 0, 0, 0, 0, 0}};

/* Win32 error codes (winerror.h) that the ETW functions return. */
#define ERROR_SUCCESS 0L
#define NO_ERROR 0L
#define ERROR_INVALID_FUNCTION 1L
#define ERROR_FILE_NOT_FOUND 2L
#define ERROR_PATH_NOT_FOUND 3L
#define ERROR_ACCESS_DENIED 5L
#define ERROR_INVALID_HANDLE 6L
#define ERROR_NOT_ENOUGH_MEMORY 8L
#define ERROR_OUTOFMEMORY 14L
#define ERROR_INVALID_DATA 13L
#define ERROR_BAD_LENGTH 24L
#define ERROR_NOT_SUPPORTED 50L
#define ERROR_INVALID_PARAMETER 87L
#define ERROR_DISK_FULL 112L
#define ERROR_CALL_NOT_IMPLEMENTED 120L
#define ERROR_INSUFFICIENT_BUFFER 122L
#define ERROR_BAD_PATHNAME 161L
#define ERROR_BUSY 170L
#define ERROR_INVALID_FLAG_NUMBER 186L
#define ERROR_ALREADY_EXISTS 183L
#define ERROR_MORE_DATA 234L
#define ERROR_NO_MORE_ITEMS 259L
#define ERROR_ARITHMETIC_OVERFLOW 534L
#define ERROR_NOACCESS 998L
#define ERROR_CANCELLED 1223L
#define ERROR_NO_SYSTEM_RESOURCES 1450L
#define ERROR_TIMEOUT 1460L
#define ERROR_WMI_GUID_NOT_FOUND 4200L
#define ERROR_WMI_INSTANCE_NOT_FOUND 4201L
#define ERROR_WMI_ALREADY_ENABLED 4206L
#define ERROR_CTX_CLOSE_PENDING 7007L

#endif /* ETWRT_WIN32_BASE_H */
