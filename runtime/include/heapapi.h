/*
 * etwrt: the process heap functions (heapapi.h) that TraceLogging headers allocate metadata
 * with, on the C library's allocator. One heap: GetProcessHeap's handle is a token.
 */
#ifndef ETWRT_HEAPAPI_H
#define ETWRT_HEAPAPI_H

#include "etwrt/win32_base.h"

#include <stdlib.h>

#define HEAP_NO_SERIALIZE 0x00000001
#define HEAP_GENERATE_EXCEPTIONS 0x00000004
#define HEAP_ZERO_MEMORY 0x00000008

static inline HANDLE GetProcessHeap(void) { return (HANDLE)(ULONG_PTR)1; }

static inline LPVOID HeapAlloc(HANDLE hHeap, DWORD dwFlags, SIZE_T dwBytes) {
  (void)hHeap;
  return (dwFlags & HEAP_ZERO_MEMORY) != 0 ? calloc(1, dwBytes ? dwBytes : 1)
                                           : malloc(dwBytes ? dwBytes : 1);
}

static inline BOOL HeapFree(HANDLE hHeap, DWORD dwFlags, LPVOID lpMem) {
  (void)hHeap;
  (void)dwFlags;
  free(lpMem);
  return TRUE;
}

#endif /* ETWRT_HEAPAPI_H */
