// The header mc.exe would generate from the manifest example's manifest, written by hand in that
// shape (not generated, not copied): the provider GUID, the event descriptors, the enable bits
// (one per distinct level and keyword, EXTERN_C __declspec(selectany) with no initializer) with
// their level and keyword tables, a trace context, the control callback that keeps the sessions'
// level and keywords and recomputes the bits, register/unregister wrappers, and per event an
// EventEnabled and an EventWrite macro. As generated code does, the callback ends by calling the
// provider's own MCGEN_PRIVATE_ENABLE_CALLBACK_V2 when one is defined. EXAMPLE_MUTANT_* defects
// here are those of a hand-edited or broken generated header (mutants/mutants.json).
#pragma once

#include <windows.h>
#include <evntprov.h>
#include <evntrace.h>  // EVENT_CONTROL_CODE_*

#if defined(__cplusplus)
extern "C" {
#endif

typedef struct _EXAMPLE_MC_TRACE_CONTEXT {
  TRACEHANDLE RegistrationHandle;
  TRACEHANDLE Logger;
  ULONGLONG MatchAnyKeyword;
  ULONGLONG MatchAllKeyword;
  ULONG Flags;
  ULONG IsEnabled;
  UCHAR Level;
  UCHAR Reserve;
  USHORT EnableBitsCount;
  PULONG EnableBitMask;
  const ULONGLONG* EnableKeyWords;
  const UCHAR* EnableLevel;
} EXAMPLE_MC_TRACE_CONTEXT, *PEXAMPLE_MC_TRACE_CONTEXT;

// The provider's own callback, when it has one: define MCGEN_PRIVATE_ENABLE_CALLBACK_V2 to its
// name (declared with PENABLECALLBACK's signature) before including this header.

// Whether a level and keyword pass what the sessions asked for, by seed 000's formula (an event
// of level L passes when L <= the enabled level). mc.exe's own check also lets every level pass
// when the enabled level is 0; no provider case enables at level 0.
FORCEINLINE BOOLEAN ExampleMcLevelKeywordEnabled(_In_ PEXAMPLE_MC_TRACE_CONTEXT Ctx,
                                                 _In_ UCHAR Level, _In_ ULONGLONG Keyword) {
#if defined(EXAMPLE_MUTANT_LEVEL_LT)  // Mutant: < instead of <=.
  const BOOLEAN level_ok = Level < Ctx->Level;
#else
  const BOOLEAN level_ok = Level <= Ctx->Level;
#endif
#if defined(EXAMPLE_MUTANT_MATCHALL_IGNORED)  // Mutant: MatchAllKeyword is not consulted.
  const BOOLEAN all_ok = TRUE;
#else
  const BOOLEAN all_ok = (Keyword & Ctx->MatchAllKeyword) == Ctx->MatchAllKeyword;
#endif
  return level_ok && (Keyword == 0 || ((Keyword & Ctx->MatchAnyKeyword) != 0 && all_ok));
}

DECLSPEC_NOINLINE __inline VOID __stdcall ExampleMcControlCallback(
    _In_ LPCGUID SourceId, _In_ ULONG ControlCode, _In_ UCHAR Level, _In_ ULONGLONG MatchAnyKeyword,
    _In_ ULONGLONG MatchAllKeyword, _In_opt_ PEVENT_FILTER_DESCRIPTOR FilterData,
    _Inout_opt_ PVOID CallbackContext) {
  PEXAMPLE_MC_TRACE_CONTEXT Ctx = (PEXAMPLE_MC_TRACE_CONTEXT)CallbackContext;
  ULONG Ix;
  UNREFERENCED_PARAMETER(SourceId);
  UNREFERENCED_PARAMETER(FilterData);
  if (Ctx == NULL) return;
  switch (ControlCode) {
    case EVENT_CONTROL_CODE_ENABLE_PROVIDER:
      Ctx->Level = Level;
      Ctx->MatchAnyKeyword = MatchAnyKeyword;
      Ctx->MatchAllKeyword = MatchAllKeyword;
      Ctx->IsEnabled = EVENT_CONTROL_CODE_ENABLE_PROVIDER;
      for (Ix = 0; Ix < Ctx->EnableBitsCount; Ix += 1) {
        if (ExampleMcLevelKeywordEnabled(Ctx, Ctx->EnableLevel[Ix], Ctx->EnableKeyWords[Ix])) {
          Ctx->EnableBitMask[Ix >> 5] |= (1u << (Ix % 32));
        } else {
          Ctx->EnableBitMask[Ix >> 5] &= ~(1u << (Ix % 32));
        }
      }
      break;
    case EVENT_CONTROL_CODE_DISABLE_PROVIDER:
#if !defined(EXAMPLE_MUTANT_DISABLE_IGNORED)  // Mutant: DISABLE leaves the bits set.
      Ctx->IsEnabled = EVENT_CONTROL_CODE_DISABLE_PROVIDER;
      Ctx->Level = 0;
      Ctx->MatchAnyKeyword = 0;
      Ctx->MatchAllKeyword = 0;
      if (Ctx->EnableBitsCount > 0) {
        RtlZeroMemory(Ctx->EnableBitMask, (((Ctx->EnableBitsCount - 1) / 32) + 1) * sizeof(ULONG));
      }
#endif
      break;
    default: break;
  }
#if defined(MCGEN_PRIVATE_ENABLE_CALLBACK_V2)
  MCGEN_PRIVATE_ENABLE_CALLBACK_V2(SourceId, ControlCode, Level, MatchAnyKeyword, MatchAllKeyword,
                                   FilterData, CallbackContext);
#endif
}

// Provider Etwh-Example-Manifest {6e1d3c2a-5b4f-4c8e-9a71-2f0d8b3e6c51}
EXTERN_C __declspec(selectany) const GUID ETWH_EXAMPLE_MANIFEST = {
    0x6e1d3c2a, 0x5b4f, 0x4c8e, {0x9a, 0x71, 0x2f, 0x0d, 0x8b, 0x3e, 0x6c, 0x51}};

#if defined(EXAMPLE_MUTANT_RESERVED_CHANNEL)  // Mutant: events in reserved channel 5.
#define EXAMPLE_MC_CHANNEL 0x5
#else
#define EXAMPLE_MC_CHANNEL 0x0  // events without a channel
#endif

// Event descriptors: Id, Version, Channel, Level, Opcode, Task, Keyword. Levels 0..5 and
// keywords chosen so that every term of the enable formula decides some event.
EXTERN_C __declspec(selectany) const EVENT_DESCRIPTOR Test1 = {
    0x1, 0x0, EXAMPLE_MC_CHANNEL, 0x1, 0x0, 0x0, 0x1};
EXTERN_C __declspec(selectany) const EVENT_DESCRIPTOR Test2 = {
    0x2, 0x0, EXAMPLE_MC_CHANNEL, 0x2, 0x0, 0x0, 0x2};
EXTERN_C __declspec(selectany) const EVENT_DESCRIPTOR Test3 = {
    0x3, 0x0, EXAMPLE_MC_CHANNEL, 0x3, 0x0, 0x0, 0x3};
EXTERN_C __declspec(selectany) const EVENT_DESCRIPTOR Test4 = {
    0x4, 0x0, EXAMPLE_MC_CHANNEL, 0x4, 0x0, 0x0, 0x0};
EXTERN_C __declspec(selectany) const EVENT_DESCRIPTOR Test5 = {
    0x5, 0x0, EXAMPLE_MC_CHANNEL, 0x5, 0x0, 0x0, 0xc};
EXTERN_C __declspec(selectany) const EVENT_DESCRIPTOR Test6 = {
    0x6, 0x0, EXAMPLE_MC_CHANNEL, 0x0, 0x0, 0x0, 0x10};
EXTERN_C __declspec(selectany) const EVENT_DESCRIPTOR Test7 = {
    0x7, 0x0, EXAMPLE_MC_CHANNEL, 0x4, 0x0, 0x0, 0x5};
EXTERN_C __declspec(selectany) const EVENT_DESCRIPTOR Test8 = {0x8, 0x0, EXAMPLE_MC_CHANNEL, 0x2,
                                                               0x0, 0x0, 0x8000000000000000};
EXTERN_C __declspec(selectany) const EVENT_DESCRIPTOR StateConfig = {
    0x64, 0x0, EXAMPLE_MC_CHANNEL, 0x0, 0x0, 0x0, 0x0};
EXTERN_C __declspec(selectany) const EVENT_DESCRIPTOR StateCounters = {
    0x65, 0x0, EXAMPLE_MC_CHANNEL, 0x0, 0x0, 0x0, 0x0};

// One enable bit per distinct level and keyword: Test1..Test8 one each, the state events share
// bit 8 (level 0, keyword 0).
#if defined(_WIN32) && defined(__GNUC__)
// GCC's selectany (mingw-w64) needs a definition: an initializer, in a linkage block (below).
#define ETWH_EXAMPLE_ENABLE_BITS_DEFINED_BELOW 1
#else
EXTERN_C __declspec(selectany) DECLSPEC_CACHEALIGN ULONG Etwh_Example_ManifestEnableBits[1];
#endif
EXTERN_C __declspec(selectany) const ULONGLONG Etwh_Example_ManifestKeywords[9] = {
    0x1, 0x2, 0x3, 0x0, 0xc, 0x10, 0x5, 0x8000000000000000, 0x0};
EXTERN_C __declspec(selectany) const
    unsigned char Etwh_Example_ManifestLevels[9] = {1, 2, 3, 4, 5, 0, 4, 2, 0};
// The non-const objects in a linkage block: GCC (mingw-w64 too) warns of
// `extern "C" T x = v;` for a non-const T, which MSVC takes as mc.exe writes it.
#ifdef __cplusplus
extern "C" {
#endif
#ifdef ETWH_EXAMPLE_ENABLE_BITS_DEFINED_BELOW
__declspec(selectany) DECLSPEC_CACHEALIGN ULONG Etwh_Example_ManifestEnableBits[1] = {0};
#endif
// clang-format off
__declspec(selectany) EXAMPLE_MC_TRACE_CONTEXT ETWH_EXAMPLE_MANIFEST_Context = {
    0, 0, 0, 0, 0, 0, 0, 0, 9, Etwh_Example_ManifestEnableBits, Etwh_Example_ManifestKeywords,
    Etwh_Example_ManifestLevels};
// clang-format on
__declspec(selectany) REGHANDLE Etwh_Example_ManifestHandle = (REGHANDLE)0;
#ifdef __cplusplus
}
#endif

DECLSPEC_NOINLINE __inline ULONG __stdcall ExampleMcEventRegister(
    _In_ LPCGUID ProviderId, _In_opt_ PENABLECALLBACK EnableCallback,
    _In_opt_ PVOID CallbackContext, _Inout_ PREGHANDLE RegHandle) {
  if (*RegHandle) return ERROR_SUCCESS;  // registered already
  return EventRegister(ProviderId, EnableCallback, CallbackContext, RegHandle);
}

DECLSPEC_NOINLINE __inline ULONG __stdcall ExampleMcEventUnregister(_Inout_ PREGHANDLE RegHandle) {
  ULONG Error;
  if (!(*RegHandle)) return ERROR_SUCCESS;
  Error = EventUnregister(*RegHandle);
  *RegHandle = (REGHANDLE)0;
  return Error;
}

#define EventRegisterEtwh_Example_Manifest()                               \
  ExampleMcEventRegister(&ETWH_EXAMPLE_MANIFEST, ExampleMcControlCallback, \
                         &ETWH_EXAMPLE_MANIFEST_Context, &Etwh_Example_ManifestHandle)
#define EventUnregisterEtwh_Example_Manifest() \
  ExampleMcEventUnregister(&Etwh_Example_ManifestHandle)

// The template of every event here: one UInt32 field.
DECLSPEC_NOINLINE __inline ULONG ExampleMcTemplate_d(_In_ REGHANDLE RegHandle,
                                                     _In_ PCEVENT_DESCRIPTOR Descriptor,
                                                     _In_ const unsigned int _Arg0) {
  EVENT_DATA_DESCRIPTOR EventData[1];
  EventDataDescCreate(&EventData[0], &_Arg0, sizeof(const unsigned int));
  return EventWrite(RegHandle, Descriptor, 1, EventData);
}

#define EXAMPLE_MC_BIT_SET(Bit) \
  ((Etwh_Example_ManifestEnableBits[(Bit) >> 5] & (1u << ((Bit) % 32))) != 0)
#define EXAMPLE_MC_WRITE(Bit, Descriptor, Value)                                                  \
  (EXAMPLE_MC_BIT_SET(Bit) ? ExampleMcTemplate_d(Etwh_Example_ManifestHandle, &Descriptor, Value) \
                           : ERROR_SUCCESS)

#define EventEnabledTest1() EXAMPLE_MC_BIT_SET(0)
#define EventWriteTest1(Value) EXAMPLE_MC_WRITE(0, Test1, Value)
#define EventEnabledTest2() EXAMPLE_MC_BIT_SET(1)
#define EventWriteTest2(Value) EXAMPLE_MC_WRITE(1, Test2, Value)
#define EventEnabledTest3() EXAMPLE_MC_BIT_SET(2)
#define EventWriteTest3(Value) EXAMPLE_MC_WRITE(2, Test3, Value)
#define EventEnabledTest4() EXAMPLE_MC_BIT_SET(3)
#define EventWriteTest4(Value) EXAMPLE_MC_WRITE(3, Test4, Value)
#define EventEnabledTest5() EXAMPLE_MC_BIT_SET(4)
#define EventWriteTest5(Value) EXAMPLE_MC_WRITE(4, Test5, Value)
#define EventEnabledTest6() EXAMPLE_MC_BIT_SET(5)
#define EventWriteTest6(Value) EXAMPLE_MC_WRITE(5, Test6, Value)
#define EventEnabledTest7() EXAMPLE_MC_BIT_SET(6)
#define EventWriteTest7(Value) EXAMPLE_MC_WRITE(6, Test7, Value)
#define EventEnabledTest8() EXAMPLE_MC_BIT_SET(7)
#define EventWriteTest8(Value) EXAMPLE_MC_WRITE(7, Test8, Value)
#define EventEnabledStateConfig() EXAMPLE_MC_BIT_SET(8)
#define EventWriteStateConfig(Value) EXAMPLE_MC_WRITE(8, StateConfig, Value)
#define EventEnabledStateCounters() EXAMPLE_MC_BIT_SET(8)
#define EventWriteStateCounters(Value) EXAMPLE_MC_WRITE(8, StateCounters, Value)

#if defined(__cplusplus)
}
#endif
