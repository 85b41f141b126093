/*
 * etwrt: the ETW provider API (evntprov.h) as documented by Microsoft, implemented on Linux
 * by libetwrt. Names, values and layouts are the documented ones.
 */
#ifndef ETWRT_EVNTPROV_H
#define ETWRT_EVNTPROV_H

#include "etwrt/win32_base.h"

#define EVENT_MIN_LEVEL 0
#define EVENT_MAX_LEVEL 0xff

#define EVENT_ACTIVITY_CTRL_GET_ID 1
#define EVENT_ACTIVITY_CTRL_SET_ID 2
#define EVENT_ACTIVITY_CTRL_CREATE_ID 3
#define EVENT_ACTIVITY_CTRL_GET_SET_ID 4
#define EVENT_ACTIVITY_CTRL_CREATE_SET_ID 5

#define MAX_EVENT_DATA_DESCRIPTORS 128
#define MAX_EVENT_FILTER_DATA_SIZE 1024
#define MAX_EVENT_FILTER_PAYLOAD_SIZE 4096
#define MAX_EVENT_FILTER_EVENT_NAME_SIZE 4096
#define MAX_EVENT_FILTERS_COUNT 13
#define MAX_EVENT_FILTER_PID_COUNT 8
#define MAX_EVENT_FILTER_EVENT_ID_COUNT 64

#define EVENT_FILTER_TYPE_NONE 0x00000000
#define EVENT_FILTER_TYPE_SCHEMATIZED 0x80000000
#define EVENT_FILTER_TYPE_SYSTEM_FLAGS 0x80000001
#define EVENT_FILTER_TYPE_TRACEHANDLE 0x80000002
#define EVENT_FILTER_TYPE_PID 0x80000004
#define EVENT_FILTER_TYPE_EXECUTABLE_NAME 0x80000008
#define EVENT_FILTER_TYPE_PACKAGE_ID 0x80000010
#define EVENT_FILTER_TYPE_PACKAGE_APP_ID 0x80000020
#define EVENT_FILTER_TYPE_PAYLOAD 0x80000100
#define EVENT_FILTER_TYPE_EVENT_ID 0x80000200
#define EVENT_FILTER_TYPE_EVENT_NAME 0x80000400
#define EVENT_FILTER_TYPE_STACKWALK 0x80001000
#define EVENT_FILTER_TYPE_STACKWALK_NAME 0x80002000
#define EVENT_FILTER_TYPE_STACKWALK_LEVEL_KW 0x80004000
#define EVENT_FILTER_TYPE_CONTAINER 0x80008000

#define EVENT_DATA_DESCRIPTOR_TYPE_NONE 0
#define EVENT_DATA_DESCRIPTOR_TYPE_EVENT_METADATA 1
#define EVENT_DATA_DESCRIPTOR_TYPE_PROVIDER_METADATA 2
#define EVENT_DATA_DESCRIPTOR_TYPE_TIMESTAMP_OVERRIDE 3

#define EVENT_WRITE_FLAG_NO_FAULTING 0x00000001
#define EVENT_WRITE_FLAG_INPRIVATE 0x00000002

#ifndef EVENT_CONTROL_CODE_DISABLE_PROVIDER
#define EVENT_CONTROL_CODE_DISABLE_PROVIDER 0
#define EVENT_CONTROL_CODE_ENABLE_PROVIDER 1
#define EVENT_CONTROL_CODE_CAPTURE_STATE 2
#endif

typedef ULONGLONG REGHANDLE, *PREGHANDLE;

typedef struct _EVENT_DATA_DESCRIPTOR {
  ULONGLONG Ptr;
  ULONG Size;
  union {
    ULONG Reserved;
    struct {
      UCHAR Type;
      UCHAR Reserved1;
      USHORT Reserved2;
    };
  };
} EVENT_DATA_DESCRIPTOR, *PEVENT_DATA_DESCRIPTOR;

typedef struct _EVENT_DESCRIPTOR {
  USHORT Id;
  UCHAR Version;
  UCHAR Channel;
  UCHAR Level;
  UCHAR Opcode;
  USHORT Task;
  ULONGLONG Keyword;
} EVENT_DESCRIPTOR, *PEVENT_DESCRIPTOR;
typedef const EVENT_DESCRIPTOR* PCEVENT_DESCRIPTOR;

typedef struct _EVENT_FILTER_DESCRIPTOR {
  ULONGLONG Ptr;
  ULONG Size;
  ULONG Type;
} EVENT_FILTER_DESCRIPTOR, *PEVENT_FILTER_DESCRIPTOR;

/* One provider-defined filter per session, chained through NextOffset, as the enable
 * callback's FilterData carries them. */
typedef struct _EVENT_FILTER_HEADER {
  USHORT Id;
  UCHAR Version;
  UCHAR Reserved[5];
  ULONGLONG InstanceId;
  ULONG Size;
  ULONG NextOffset;
} EVENT_FILTER_HEADER, *PEVENT_FILTER_HEADER;

#include "etwrt/event_filter_event_id.h"

#include "etwrt/event_filter_event_name.h"

typedef enum _EVENT_INFO_CLASS {
  EventProviderBinaryTrackInfo = 0,
  EventProviderSetReserved1 = 1,
  EventProviderSetTraits = 2,
  EventProviderUseDescriptorType = 3,
  MaxEventInfo = 4
} EVENT_INFO_CLASS;

typedef enum { EtwProviderTraitTypeGroup = 1, EtwProviderTraitTypeMax } ETW_PROVIDER_TRAIT_TYPE;

typedef VOID(NTAPI* PENABLECALLBACK)(LPCGUID SourceId, ULONG IsEnabled, UCHAR Level,
                                     ULONGLONG MatchAnyKeyword, ULONGLONG MatchAllKeyword,
                                     PEVENT_FILTER_DESCRIPTOR FilterData, PVOID CallbackContext);

#ifdef __cplusplus
extern "C" {
#endif

ULONG EVNTAPI EventRegister(LPCGUID ProviderId, PENABLECALLBACK EnableCallback,
                            PVOID CallbackContext, PREGHANDLE RegHandle);
ULONG EVNTAPI EventUnregister(REGHANDLE RegHandle);
ULONG EVNTAPI EventSetInformation(REGHANDLE RegHandle, EVENT_INFO_CLASS InformationClass,
                                  PVOID EventInformation, ULONG InformationLength);
BOOLEAN EVNTAPI EventEnabled(REGHANDLE RegHandle, PCEVENT_DESCRIPTOR EventDescriptor);
BOOLEAN EVNTAPI EventProviderEnabled(REGHANDLE RegHandle, UCHAR Level, ULONGLONG Keyword);
ULONG EVNTAPI EventWrite(REGHANDLE RegHandle, PCEVENT_DESCRIPTOR EventDescriptor,
                         ULONG UserDataCount, PEVENT_DATA_DESCRIPTOR UserData);
ULONG EVNTAPI EventWriteTransfer(REGHANDLE RegHandle, PCEVENT_DESCRIPTOR EventDescriptor,
                                 LPCGUID ActivityId, LPCGUID RelatedActivityId, ULONG UserDataCount,
                                 PEVENT_DATA_DESCRIPTOR UserData);
ULONG EVNTAPI EventWriteEx(REGHANDLE RegHandle, PCEVENT_DESCRIPTOR EventDescriptor, ULONG64 Filter,
                           ULONG Flags, LPCGUID ActivityId, LPCGUID RelatedActivityId,
                           ULONG UserDataCount, PEVENT_DATA_DESCRIPTOR UserData);
ULONG EVNTAPI EventWriteString(REGHANDLE RegHandle, UCHAR Level, ULONGLONG Keyword, PCWSTR String);
ULONG EVNTAPI EventActivityIdControl(ULONG ControlCode, LPGUID ActivityId);

#ifdef __cplusplus
}
#endif

FORCEINLINE VOID EventDataDescCreate(PEVENT_DATA_DESCRIPTOR EventDataDescriptor,
                                     const VOID* DataPtr, ULONG DataSize) {
  EventDataDescriptor->Ptr = (ULONGLONG)(ULONG_PTR)DataPtr;
  EventDataDescriptor->Size = DataSize;
  EventDataDescriptor->Reserved = 0;
}

FORCEINLINE VOID EventDescCreate(PEVENT_DESCRIPTOR EventDescriptor, USHORT Id, UCHAR Version,
                                 UCHAR Channel, UCHAR Level, USHORT Task, UCHAR Opcode,
                                 ULONGLONG Keyword) {
  EventDescriptor->Id = Id;
  EventDescriptor->Version = Version;
  EventDescriptor->Channel = Channel;
  EventDescriptor->Level = Level;
  EventDescriptor->Task = Task;
  EventDescriptor->Opcode = Opcode;
  EventDescriptor->Keyword = Keyword;
}

FORCEINLINE VOID EventDescZero(PEVENT_DESCRIPTOR EventDescriptor) {
  memset(EventDescriptor, 0, sizeof(EVENT_DESCRIPTOR));
}

FORCEINLINE UCHAR EventDescGetLevel(PCEVENT_DESCRIPTOR EventDescriptor) {
  return EventDescriptor->Level;
}

FORCEINLINE ULONGLONG EventDescGetKeyword(PCEVENT_DESCRIPTOR EventDescriptor) {
  return EventDescriptor->Keyword;
}

#endif /* ETWRT_EVNTPROV_H */
