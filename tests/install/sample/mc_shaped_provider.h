// A provider header in the shape mc.exe generates from a manifest (written for etwrt's tests,
// not generated): provider GUID, event descriptors and enable-bit tables as EXTERN_C
// __declspec(selectany) objects, the enable bits without an initializer, a context struct, a
// control callback that keeps the sessions' level and keywords and recomputes one enable bit
// per event, register/unregister wrappers and a write wrapper per event. It uses the Win32
// names such headers use (EXTERN_C, DECLSPEC_NOINLINE, DECLSPEC_CACHEALIGN, FORCEINLINE,
// __inline, __stdcall, SAL, UNREFERENCED_PARAMETER, RtlZeroMemory, MSVC pragmas) and is
// included by two translation units, as a generated header is.
#pragma once
#include <wmistr.h>
#include <evntrace.h>
#include <evntprov.h>

#ifndef SHAPE_INLINE
#define SHAPE_INLINE DECLSPEC_NOINLINE __inline
#endif

#if defined(__cplusplus)
extern "C" {
#endif

typedef struct _SHAPE_TRACE_CONTEXT {
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
} SHAPE_TRACE_CONTEXT, *PSHAPE_TRACE_CONTEXT;

// The documented rule (seed 000): an event passes when its level is 0 or at most the enabled
// level (enabled level 0 = all), and its keyword is 0, or shares a bit with MatchAnyKeyword
// and has every bit of MatchAllKeyword.
FORCEINLINE BOOLEAN ShapeLevelKeywordEnabled(_In_ PSHAPE_TRACE_CONTEXT Info, _In_ UCHAR Level,
                                             _In_ ULONGLONG Keyword) {
  if (Level <= Info->Level || Info->Level == 0) {
    if (Keyword == 0 || ((Keyword & Info->MatchAnyKeyword) != 0 &&
                         (Keyword & Info->MatchAllKeyword) == Info->MatchAllKeyword)) {
      return TRUE;
    }
  }
  return FALSE;
}

SHAPE_INLINE VOID __stdcall ShapeControlCallback(_In_ LPCGUID SourceId, _In_ ULONG ControlCode,
                                                 _In_ UCHAR Level, _In_ ULONGLONG MatchAnyKeyword,
                                                 _In_ ULONGLONG MatchAllKeyword,
                                                 _In_opt_ PEVENT_FILTER_DESCRIPTOR FilterData,
                                                 _Inout_opt_ PVOID CallbackContext) {
  PSHAPE_TRACE_CONTEXT Ctx = (PSHAPE_TRACE_CONTEXT)CallbackContext;
  ULONG Ix;
  UNREFERENCED_PARAMETER(SourceId);
  UNREFERENCED_PARAMETER(FilterData);
  if (Ctx == NULL) return;
  if (ControlCode == EVENT_CONTROL_CODE_ENABLE_PROVIDER) {
    Ctx->Level = Level;
    Ctx->MatchAnyKeyword = MatchAnyKeyword;
    Ctx->MatchAllKeyword = MatchAllKeyword;
    Ctx->IsEnabled = EVENT_CONTROL_CODE_ENABLE_PROVIDER;
    for (Ix = 0; Ix < Ctx->EnableBitsCount; Ix += 1) {
      if (ShapeLevelKeywordEnabled(Ctx, Ctx->EnableLevel[Ix], Ctx->EnableKeyWords[Ix])) {
        Ctx->EnableBitMask[Ix >> 5] |= (1u << (Ix % 32));
      } else {
        Ctx->EnableBitMask[Ix >> 5] &= ~(1u << (Ix % 32));
      }
    }
  } else if (ControlCode == EVENT_CONTROL_CODE_DISABLE_PROVIDER) {
    Ctx->IsEnabled = EVENT_CONTROL_CODE_DISABLE_PROVIDER;
    Ctx->Level = 0;
    Ctx->MatchAnyKeyword = 0;
    Ctx->MatchAllKeyword = 0;
    if (Ctx->EnableBitsCount > 0) {
      RtlZeroMemory(Ctx->EnableBitMask, (((Ctx->EnableBitsCount - 1) / 32) + 1) * sizeof(ULONG));
    }
  }
}

// {7c2f41d0-5e8a-4b3c-9a61-0d2e4f6a8b1c}
EXTERN_C __declspec(selectany) const GUID ShapeProvider = {
    0x7c2f41d0, 0x5e8a, 0x4b3c, {0x9a, 0x61, 0x0d, 0x2e, 0x4f, 0x6a, 0x8b, 0x1c}};
EXTERN_C __declspec(selectany) const EVENT_DESCRIPTOR ShapeInfo = {0x1, 0x0, 0x0, 0x4,
                                                                   0x0, 0x0, 0x1};
EXTERN_C __declspec(selectany) const EVENT_DESCRIPTOR ShapeVerbose = {0x2, 0x0, 0x0, 0x5,
                                                                      0x0, 0x0, 0x2};

EXTERN_C __declspec(selectany) DECLSPEC_CACHEALIGN ULONG ShapeEnableBits[1];
EXTERN_C __declspec(selectany) const ULONGLONG ShapeKeywords[2] = {0x1, 0x2};
EXTERN_C __declspec(selectany) const unsigned char ShapeLevels[2] = {4, 5};
EXTERN_C __declspec(selectany) SHAPE_TRACE_CONTEXT ShapeProvider_Context = {
    0, 0, 0, 0, 0, 0, 0, 0, 2, ShapeEnableBits, ShapeKeywords, ShapeLevels};
EXTERN_C __declspec(selectany) REGHANDLE ShapeHandle = (REGHANDLE)0;

#pragma warning(push)
#pragma warning(disable : 6103)
SHAPE_INLINE ULONG __stdcall ShapeEventRegister(_In_ LPCGUID ProviderId,
                                                _In_opt_ PENABLECALLBACK EnableCallback,
                                                _In_opt_ PVOID CallbackContext,
                                                _Inout_ PREGHANDLE RegHandle) {
  if (*RegHandle) return ERROR_SUCCESS;
  return EventRegister(ProviderId, EnableCallback, CallbackContext, RegHandle);
}
#pragma warning(pop)

SHAPE_INLINE ULONG __stdcall ShapeEventUnregister(_Inout_ PREGHANDLE RegHandle) {
  ULONG Error;
  if (!(*RegHandle)) return ERROR_SUCCESS;
  Error = EventUnregister(*RegHandle);
  *RegHandle = (REGHANDLE)0;
  return Error;
}

#define EventRegisterShape() \
  ShapeEventRegister(&ShapeProvider, ShapeControlCallback, &ShapeProvider_Context, &ShapeHandle)
#define EventUnregisterShape() ShapeEventUnregister(&ShapeHandle)

SHAPE_INLINE ULONG ShapeTemplate_q(_In_ REGHANDLE RegHandle, _In_ PCEVENT_DESCRIPTOR Descriptor,
                                   _In_ const unsigned int _Arg0) {
  EVENT_DATA_DESCRIPTOR EventData[1];
  EventDataDescCreate(&EventData[0], &_Arg0, sizeof(const unsigned int));
  return EventWrite(RegHandle, Descriptor, 1, EventData);
}

#define EventEnabledShapeInfo() ((ShapeEnableBits[0] & 0x00000001) != 0)
#define EventWriteShapeInfo(Value) \
  (EventEnabledShapeInfo() ? ShapeTemplate_q(ShapeHandle, &ShapeInfo, Value) : ERROR_SUCCESS)
#define EventEnabledShapeVerbose() ((ShapeEnableBits[0] & 0x00000002) != 0)
#define EventWriteShapeVerbose(Value) \
  (EventEnabledShapeVerbose() ? ShapeTemplate_q(ShapeHandle, &ShapeVerbose, Value) : ERROR_SUCCESS)

#if defined(__cplusplus)
};
#endif

// From the second translation unit: the objects it sees.
ULONG* second_unit_enable_bits(void);
PSHAPE_TRACE_CONTEXT second_unit_context(void);
