// Test support: objects declared as mc.exe output declares them (inside extern "C", with
// EXTERN_C __declspec(selectany), the enable bits without an initializer), included by two
// translation units of selectany_test.
#pragma once

#include <windows.h>

#ifdef __cplusplus
extern "C" {
#endif

EXTERN_C __declspec(selectany) DECLSPEC_CACHEALIGN ULONG SelectanyEnableBits[1];
EXTERN_C __declspec(selectany) const ULONGLONG SelectanyKeywords[2] = {0x1, 0x8000000000000000};
__declspec(selectany) extern UINT32 const SelectanyNamespace[] = {0x482C2DB2, 0xC39047C8};

#ifdef __cplusplus
}
#endif

// The addresses as the other translation unit sees them.
ULONG* other_unit_enable_bits();
const ULONGLONG* other_unit_keywords();
const UINT32* other_unit_namespace();
