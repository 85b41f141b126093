// The one place where the Windows build makes up for SDK headers older than the documented
// ETW API: mingw-w64 10 (Debian 12) lacks a few constants, enumerators and filter structures
// that etwh uses and that etwrt's headers and the current Windows SDK have.
//
// Force-included into every C++ source that links etw_api on Windows (cmake/EtwhWindows.cmake),
// so our code writes the documented names and never tests for the toolchain. Every definition
// here is guarded: by #ifndef for macros, by a configure check (ETWH_LACKS_*, set by
// cmake/EtwhWindows.cmake) for enumerators and types, so a newer SDK that has them wins. The
// larger types and enumerations are etwrt's own headers (runtime/include/etwrt/), which
// need nothing but the Win32 base types: one definition serves both platforms.
#pragma once

#ifndef NOMINMAX
#define NOMINMAX 1  // <windows.h> must not turn std::min / std::max into macros
#endif
#include <windows.h>
#include <evntprov.h>
#include <evntrace.h>
#include <evntcons.h>

// --- evntprov.h ---------------------------------------------------------------------------

#ifndef EVENT_DATA_DESCRIPTOR_TYPE_NONE
#define EVENT_DATA_DESCRIPTOR_TYPE_NONE 0
#endif
#ifndef EVENT_DATA_DESCRIPTOR_TYPE_EVENT_METADATA
#define EVENT_DATA_DESCRIPTOR_TYPE_EVENT_METADATA 1
#endif
#ifndef EVENT_DATA_DESCRIPTOR_TYPE_PROVIDER_METADATA
#define EVENT_DATA_DESCRIPTOR_TYPE_PROVIDER_METADATA 2
#endif
#ifndef EVENT_DATA_DESCRIPTOR_TYPE_TIMESTAMP_OVERRIDE
#define EVENT_DATA_DESCRIPTOR_TYPE_TIMESTAMP_OVERRIDE 3
#endif
#ifndef EVENT_WRITE_FLAG_NO_FAULTING
#define EVENT_WRITE_FLAG_NO_FAULTING 0x00000001
#endif
#ifndef EVENT_WRITE_FLAG_INPRIVATE
#define EVENT_WRITE_FLAG_INPRIVATE 0x00000002
#endif

#ifndef EVENT_FILTER_TYPE_NONE
#define EVENT_FILTER_TYPE_NONE 0x00000000
#endif
#ifndef EVENT_FILTER_TYPE_PID
#define EVENT_FILTER_TYPE_PID 0x80000004
#endif
#ifndef EVENT_FILTER_TYPE_EXECUTABLE_NAME
#define EVENT_FILTER_TYPE_EXECUTABLE_NAME 0x80000008
#endif
#ifndef EVENT_FILTER_TYPE_PACKAGE_ID
#define EVENT_FILTER_TYPE_PACKAGE_ID 0x80000010
#endif
#ifndef EVENT_FILTER_TYPE_PACKAGE_APP_ID
#define EVENT_FILTER_TYPE_PACKAGE_APP_ID 0x80000020
#endif
#ifndef EVENT_FILTER_TYPE_PAYLOAD
#define EVENT_FILTER_TYPE_PAYLOAD 0x80000100
#endif
#ifndef EVENT_FILTER_TYPE_EVENT_ID
#define EVENT_FILTER_TYPE_EVENT_ID 0x80000200
#endif
#ifndef EVENT_FILTER_TYPE_EVENT_NAME
#define EVENT_FILTER_TYPE_EVENT_NAME 0x80000400
#endif
#ifndef EVENT_FILTER_TYPE_STACKWALK
#define EVENT_FILTER_TYPE_STACKWALK 0x80001000
#endif
#ifndef EVENT_FILTER_TYPE_STACKWALK_NAME
#define EVENT_FILTER_TYPE_STACKWALK_NAME 0x80002000
#endif
#ifndef EVENT_FILTER_TYPE_STACKWALK_LEVEL_KW
#define EVENT_FILTER_TYPE_STACKWALK_LEVEL_KW 0x80004000
#endif
#ifndef EVENT_FILTER_TYPE_CONTAINER
#define EVENT_FILTER_TYPE_CONTAINER 0x80008000
#endif
#ifndef MAX_EVENT_FILTERS_COUNT
#define MAX_EVENT_FILTERS_COUNT 13
#endif
#ifndef MAX_EVENT_FILTER_PID_COUNT
#define MAX_EVENT_FILTER_PID_COUNT 8
#endif
#ifndef MAX_EVENT_FILTER_EVENT_ID_COUNT
#define MAX_EVENT_FILTER_EVENT_ID_COUNT 64
#endif
#ifndef MAX_EVENT_FILTER_EVENT_NAME_SIZE
#define MAX_EVENT_FILTER_EVENT_NAME_SIZE 4096
#endif
#ifndef MAX_EVENT_FILTER_PAYLOAD_SIZE
#define MAX_EVENT_FILTER_PAYLOAD_SIZE 4096
#endif

#ifdef ETWH_LACKS_EVENT_FILTER_EVENT_ID
#include "../runtime/include/etwrt/event_filter_event_id.h"
#endif

#ifdef ETWH_LACKS_EVENT_FILTER_EVENT_NAME
#include "../runtime/include/etwrt/event_filter_event_name.h"
#endif

// The enumerators of EVENT_INFO_CLASS that mingw-w64 10 lacks (it has only
// EventProviderBinaryTrackInfo = 0). Constants of the enum's own type, so that
// EventSetInformation(handle, EventProviderSetTraits, ...) reads as with the SDK.
#ifdef ETWH_LACKS_EVENT_PROVIDER_SET_TRAITS
inline constexpr EVENT_INFO_CLASS EventProviderSetReserved1 = static_cast<EVENT_INFO_CLASS>(1);
inline constexpr EVENT_INFO_CLASS EventProviderSetTraits = static_cast<EVENT_INFO_CLASS>(2);
inline constexpr EVENT_INFO_CLASS EventProviderUseDescriptorType = static_cast<EVENT_INFO_CLASS>(3);
#endif

#ifdef ETWH_LACKS_ETW_PROVIDER_TRAIT_TYPE
typedef enum { EtwProviderTraitTypeGroup = 1, EtwProviderTraitTypeMax } ETW_PROVIDER_TRAIT_TYPE;
#endif

// --- tdh.h --------------------------------------------------------------------------------
// mingw-w64 10's tdh.h predates manifests loaded by hand, the in-type enumeration and the
// fixed-count flag (agent/decode.cc uses them). Values from the _TDH_IN_TYPE and
// EVENT_PROPERTY_INFO pages.
#include <tdh.h>

#ifdef ETWH_LACKS_TDH_LOAD_MANIFEST
extern "C" ULONG __stdcall TdhLoadManifest(PWSTR Manifest);
extern "C" ULONG __stdcall TdhUnloadManifest(PWSTR Manifest);
#endif

#ifdef ETWH_LACKS_TDH_IN_TYPE
#include "../runtime/include/etwrt/tdh_in_type.h"
#endif

#ifdef ETWH_LACKS_PROPERTY_PARAM_FIXED_COUNT
inline constexpr PROPERTY_FLAGS PropertyParamFixedCount = static_cast<PROPERTY_FLAGS>(0x20);
#endif

// --- evntrace.h ---------------------------------------------------------------------------

#ifndef EVENT_TRACE_CONTROL_CONVERT_TO_REALTIME
#define EVENT_TRACE_CONTROL_CONVERT_TO_REALTIME 5
#endif
#ifndef EVENT_TRACE_TYPE_RT_LOST_EVENT
#define EVENT_TRACE_TYPE_RT_LOST_EVENT 32
#endif
#ifndef EVENT_TRACE_TYPE_RT_LOST_BUFFER
#define EVENT_TRACE_TYPE_RT_LOST_BUFFER 33
#endif
#ifndef EVENT_TRACE_TYPE_RT_LOST_FILE
#define EVENT_TRACE_TYPE_RT_LOST_FILE 34
#endif

#ifndef EVENT_ENABLE_PROPERTY_PSM_KEY
#define EVENT_ENABLE_PROPERTY_PSM_KEY 0x00000008
#endif
#ifndef EVENT_ENABLE_PROPERTY_IGNORE_KEYWORD_0
#define EVENT_ENABLE_PROPERTY_IGNORE_KEYWORD_0 0x00000010
#endif
#ifndef EVENT_ENABLE_PROPERTY_PROVIDER_GROUP
#define EVENT_ENABLE_PROPERTY_PROVIDER_GROUP 0x00000020
#endif
#ifndef EVENT_ENABLE_PROPERTY_ENABLE_KEYWORD_0
#define EVENT_ENABLE_PROPERTY_ENABLE_KEYWORD_0 0x00000040
#endif
#ifndef EVENT_ENABLE_PROPERTY_PROCESS_START_KEY
#define EVENT_ENABLE_PROPERTY_PROCESS_START_KEY 0x00000080
#endif
#ifndef EVENT_ENABLE_PROPERTY_EVENT_KEY
#define EVENT_ENABLE_PROPERTY_EVENT_KEY 0x00000100
#endif
#ifndef EVENT_ENABLE_PROPERTY_EXCLUDE_INPRIVATE
#define EVENT_ENABLE_PROPERTY_EXCLUDE_INPRIVATE 0x00000200
#endif
#ifndef EVENT_ENABLE_PROPERTY_ENABLE_SILOS
#define EVENT_ENABLE_PROPERTY_ENABLE_SILOS 0x00000400
#endif
#ifndef EVENT_ENABLE_PROPERTY_SOURCE_CONTAINER_TRACKING
#define EVENT_ENABLE_PROPERTY_SOURCE_CONTAINER_TRACKING 0x00000800
#endif

// --- evntcons.h ---------------------------------------------------------------------------

#ifndef EVENT_HEADER_FLAG_DECODE_GUID
#define EVENT_HEADER_FLAG_DECODE_GUID 0x0080
#endif
#ifndef EVENT_HEADER_PROPERTY_RELOGGABLE
#define EVENT_HEADER_PROPERTY_RELOGGABLE 0x0008
#endif
#ifndef EVENT_HEADER_EXT_TYPE_PSM_KEY
#define EVENT_HEADER_EXT_TYPE_PSM_KEY 0x0009
#endif
#ifndef EVENT_HEADER_EXT_TYPE_EVENT_KEY
#define EVENT_HEADER_EXT_TYPE_EVENT_KEY 0x000A
#endif
#ifndef EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL
#define EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL 0x000B
#endif
#ifndef EVENT_HEADER_EXT_TYPE_PROV_TRAITS
#define EVENT_HEADER_EXT_TYPE_PROV_TRAITS 0x000C
#endif
#ifndef EVENT_HEADER_EXT_TYPE_PROCESS_START_KEY
#define EVENT_HEADER_EXT_TYPE_PROCESS_START_KEY 0x000D
#endif
#ifndef EVENT_HEADER_EXT_TYPE_CONTROL_GUID
#define EVENT_HEADER_EXT_TYPE_CONTROL_GUID 0x000E
#endif
#ifndef EVENT_HEADER_EXT_TYPE_QPC_DELTA
#define EVENT_HEADER_EXT_TYPE_QPC_DELTA 0x000F
#endif
#ifndef EVENT_HEADER_EXT_TYPE_CONTAINER_ID
#define EVENT_HEADER_EXT_TYPE_CONTAINER_ID 0x0010
#endif
#ifndef EVENT_HEADER_EXT_TYPE_STACK_KEY32
#define EVENT_HEADER_EXT_TYPE_STACK_KEY32 0x0011
#endif
#ifndef EVENT_HEADER_EXT_TYPE_STACK_KEY64
#define EVENT_HEADER_EXT_TYPE_STACK_KEY64 0x0012
#endif
