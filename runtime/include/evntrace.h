/*
 * etwrt: the ETW controller and consumer API (evntrace.h) as documented by Microsoft,
 * implemented on Linux by libetwrt and its broker. Names, values and layouts are the
 * documented ones (x64). WNODE_HEADER, which Windows keeps in wmistr.h, is defined here.
 */
#ifndef ETWRT_EVNTRACE_H
#define ETWRT_EVNTRACE_H

#include "etwrt/win32_base.h"
#include "evntprov.h"

#include <stdarg.h>

typedef ULONG64 TRACEHANDLE, *PTRACEHANDLE;

#define INVALID_PROCESSTRACE_HANDLE ((TRACEHANDLE)INVALID_HANDLE_VALUE)

/* WNODE_HEADER (wmistr.h) */
typedef struct _WNODE_HEADER {
  ULONG BufferSize;
  ULONG ProviderId;
  union {
    ULONG64 HistoricalContext;
    struct {
      ULONG Version;
      ULONG Linkage;
    };
  };
  union {
    ULONG CountLost;
    HANDLE KernelHandle;
    LARGE_INTEGER TimeStamp;
  };
  GUID Guid;
  ULONG ClientContext;
  ULONG Flags;
} WNODE_HEADER, *PWNODE_HEADER;

#define WNODE_FLAG_ALL_DATA 0x00000001
#define WNODE_FLAG_SINGLE_INSTANCE 0x00000002
#define WNODE_FLAG_SINGLE_ITEM 0x00000004
#define WNODE_FLAG_EVENT_ITEM 0x00000008
#define WNODE_FLAG_FIXED_INSTANCE_SIZE 0x00000010
#define WNODE_FLAG_TOO_SMALL 0x00000020
#define WNODE_FLAG_INSTANCES_SAME 0x00000040
#define WNODE_FLAG_STATIC_INSTANCE_NAMES 0x00000080
#define WNODE_FLAG_INTERNAL 0x00000100
#define WNODE_FLAG_USE_TIMESTAMP 0x00000200
#define WNODE_FLAG_PERSIST_EVENT 0x00000400
#define WNODE_FLAG_EVENT_REFERENCE 0x00002000
#define WNODE_FLAG_ANSI_INSTANCENAMES 0x00004000
#define WNODE_FLAG_METHOD_ITEM 0x00008000
#define WNODE_FLAG_PDO_INSTANCE_NAMES 0x00010000
#define WNODE_FLAG_TRACED_GUID 0x00020000
#define WNODE_FLAG_LOG_WNODE 0x00040000
#define WNODE_FLAG_USE_GUID_PTR 0x00080000
#define WNODE_FLAG_USE_MOF_PTR 0x00100000
#define WNODE_FLAG_NO_HEADER 0x00200000
#define WNODE_FLAG_SEND_DATA_BLOCK 0x00400000
#define WNODE_FLAG_VERSIONED_PROPERTIES 0x00800000

#define KERNEL_LOGGER_NAMEA "NT Kernel Logger"
#define GLOBAL_LOGGER_NAMEA "GlobalLogger"
#define EVENT_LOGGER_NAMEA "EventLog"
#define KERNEL_LOGGER_NAMEW ETWRT_WIDE("NT Kernel Logger")
#define GLOBAL_LOGGER_NAMEW ETWRT_WIDE("GlobalLogger")
#define EVENT_LOGGER_NAMEW ETWRT_WIDE("EventLog")

/* {68fdd900-4a3e-11d1-84f4-0000f80464e3}: the class of the synthetic header events. */
DEFINE_GUID(EventTraceGuid, 0x68fdd900, 0x4a3e, 0x11d1, 0x84, 0xf4, 0x00, 0x00, 0xf8, 0x04, 0x64,
            0xe3);
/* {9e814aad-3204-11d2-9a82-006008a86939} */
DEFINE_GUID(SystemTraceControlGuid, 0x9e814aad, 0x3204, 0x11d2, 0x9a, 0x82, 0x00, 0x60, 0x08, 0xa8,
            0x69, 0x39);
/* {6a399ae0-4bc6-4de9-870b-3657f8947e7e}: RT_LostEvent, announces realtime loss. */
DEFINE_GUID(RTLostEventGuid, 0x6a399ae0, 0x4bc6, 0x4de9, 0x87, 0x0b, 0x36, 0x57, 0xf8, 0x94, 0x7e,
            0x7e);

#define EVENT_TRACE_TYPE_RT_LOST_EVENT 32
#define EVENT_TRACE_TYPE_RT_LOST_BUFFER 33
#define EVENT_TRACE_TYPE_RT_LOST_FILE 34

#define MAX_MOF_FIELDS 16

/* TraceMessage's MessageFlags: which items precede the message arguments. */
#define TRACE_MESSAGE_SEQUENCE 1
#define TRACE_MESSAGE_GUID 2
#define TRACE_MESSAGE_COMPONENTID 4
#define TRACE_MESSAGE_TIMESTAMP 8
#define TRACE_MESSAGE_PERFORMANCE_TIMESTAMP 16
#define TRACE_MESSAGE_SYSTEMINFO 32
#define TRACE_MESSAGE_POINTER32 0x0040
#define TRACE_MESSAGE_POINTER64 0x0080
#define TRACE_MESSAGE_FLAG_MASK 0xffff
#define TRACE_MESSAGE_MAXIMUM_SIZE (64 * 1024)

/* Classic event types (EVENT_TRACE_HEADER.Class.Type). Custom types start at 10. */
#define EVENT_TRACE_TYPE_INFO 0x00
#define EVENT_TRACE_TYPE_START 0x01
#define EVENT_TRACE_TYPE_END 0x02
#define EVENT_TRACE_TYPE_STOP 0x02
#define EVENT_TRACE_TYPE_DC_START 0x03
#define EVENT_TRACE_TYPE_DC_END 0x04
#define EVENT_TRACE_TYPE_EXTENSION 0x05
#define EVENT_TRACE_TYPE_REPLY 0x06
#define EVENT_TRACE_TYPE_DEQUEUE 0x07
#define EVENT_TRACE_TYPE_RESUME 0x07
#define EVENT_TRACE_TYPE_CHECKPOINT 0x08
#define EVENT_TRACE_TYPE_SUSPEND 0x08
#define EVENT_TRACE_TYPE_WINEVT_SEND 0x09
#define EVENT_TRACE_TYPE_WINEVT_RECEIVE 0xF0

#define TRACE_LEVEL_NONE 0
#define TRACE_LEVEL_CRITICAL 1
#define TRACE_LEVEL_FATAL 1
#define TRACE_LEVEL_ERROR 2
#define TRACE_LEVEL_WARNING 3
#define TRACE_LEVEL_INFORMATION 4
#define TRACE_LEVEL_VERBOSE 5
#define TRACE_LEVEL_RESERVED6 6
#define TRACE_LEVEL_RESERVED7 7
#define TRACE_LEVEL_RESERVED8 8
#define TRACE_LEVEL_RESERVED9 9

/* Session log file modes (EVENT_TRACE_PROPERTIES.LogFileMode). */
#define EVENT_TRACE_FILE_MODE_NONE 0x00000000
#define EVENT_TRACE_FILE_MODE_SEQUENTIAL 0x00000001
#define EVENT_TRACE_FILE_MODE_CIRCULAR 0x00000002
#define EVENT_TRACE_FILE_MODE_APPEND 0x00000004
#define EVENT_TRACE_FILE_MODE_NEWFILE 0x00000008
#define EVENT_TRACE_FILE_MODE_PREALLOCATE 0x00000020
#define EVENT_TRACE_NONSTOPPABLE_MODE 0x00000040
#define EVENT_TRACE_SECURE_MODE 0x00000080
#define EVENT_TRACE_REAL_TIME_MODE 0x00000100
#define EVENT_TRACE_DELAY_OPEN_FILE_MODE 0x00000200
#define EVENT_TRACE_BUFFERING_MODE 0x00000400
#define EVENT_TRACE_PRIVATE_LOGGER_MODE 0x00000800
#define EVENT_TRACE_ADD_HEADER_MODE 0x00001000
#define EVENT_TRACE_USE_KBYTES_FOR_SIZE 0x00002000
#define EVENT_TRACE_USE_GLOBAL_SEQUENCE 0x00004000
#define EVENT_TRACE_USE_LOCAL_SEQUENCE 0x00008000
#define EVENT_TRACE_RELOG_MODE 0x00010000
#define EVENT_TRACE_PRIVATE_IN_PROC 0x00020000
#define EVENT_TRACE_MODE_RESERVED 0x00100000
#define EVENT_TRACE_STOP_ON_HYBRID_SHUTDOWN 0x00400000
#define EVENT_TRACE_PERSIST_ON_HYBRID_SHUTDOWN 0x00800000
#define EVENT_TRACE_USE_PAGED_MEMORY 0x01000000
#define EVENT_TRACE_SYSTEM_LOGGER_MODE 0x02000000
#define EVENT_TRACE_COMPRESSED_MODE 0x04000000
#define EVENT_TRACE_INDEPENDENT_SESSION_MODE 0x08000000
#define EVENT_TRACE_NO_PER_PROCESSOR_BUFFERING 0x10000000
#define EVENT_TRACE_ADDTO_TRIAGE_DUMP 0x80000000

/* EVENT_TRACE_PROPERTIES.EnableFlags of a system logger session (the SystemTraceProvider's
   kernel events), values as the EVENT_TRACE_PROPERTIES page lists them. etwrt has no kernel
   events: a session keeps and reports the flags, nothing writes such events. */
#define EVENT_TRACE_FLAG_PROCESS 0x00000001
#define EVENT_TRACE_FLAG_THREAD 0x00000002
#define EVENT_TRACE_FLAG_IMAGE_LOAD 0x00000004
#define EVENT_TRACE_FLAG_PROCESS_COUNTERS 0x00000008
#define EVENT_TRACE_FLAG_CSWITCH 0x00000010
#define EVENT_TRACE_FLAG_DPC 0x00000020
#define EVENT_TRACE_FLAG_INTERRUPT 0x00000040
#define EVENT_TRACE_FLAG_SYSTEMCALL 0x00000080
#define EVENT_TRACE_FLAG_DISK_IO 0x00000100
#define EVENT_TRACE_FLAG_DISK_FILE_IO 0x00000200
#define EVENT_TRACE_FLAG_DISK_IO_INIT 0x00000400
#define EVENT_TRACE_FLAG_DISPATCHER 0x00000800
#define EVENT_TRACE_FLAG_MEMORY_PAGE_FAULTS 0x00001000
#define EVENT_TRACE_FLAG_MEMORY_HARD_FAULTS 0x00002000
#define EVENT_TRACE_FLAG_VIRTUAL_ALLOC 0x00004000
#define EVENT_TRACE_FLAG_VAMAP 0x00008000
#define EVENT_TRACE_FLAG_NETWORK_TCPIP 0x00010000
#define EVENT_TRACE_FLAG_REGISTRY 0x00020000
#define EVENT_TRACE_FLAG_DBGPRINT 0x00040000
#define EVENT_TRACE_FLAG_JOB 0x00080000
#define EVENT_TRACE_FLAG_ALPC 0x00100000
#define EVENT_TRACE_FLAG_SPLIT_IO 0x00200000
#define EVENT_TRACE_FLAG_DRIVER 0x00800000
#define EVENT_TRACE_FLAG_PROFILE 0x01000000
#define EVENT_TRACE_FLAG_FILE_IO 0x02000000
#define EVENT_TRACE_FLAG_FILE_IO_INIT 0x04000000
#define EVENT_TRACE_FLAG_NO_SYSCONFIG 0x10000000

/* ControlTrace codes. */
#define EVENT_TRACE_CONTROL_QUERY 0
#define EVENT_TRACE_CONTROL_STOP 1
#define EVENT_TRACE_CONTROL_UPDATE 2
#define EVENT_TRACE_CONTROL_FLUSH 3
#define EVENT_TRACE_CONTROL_INCREMENT_FILE 4
#define EVENT_TRACE_CONTROL_CONVERT_TO_REALTIME 5

/* ENABLE_TRACE_PARAMETERS.EnableProperty */
#define EVENT_ENABLE_PROPERTY_SID 0x00000001
#define EVENT_ENABLE_PROPERTY_TS_ID 0x00000002
#define EVENT_ENABLE_PROPERTY_STACK_TRACE 0x00000004
#define EVENT_ENABLE_PROPERTY_PSM_KEY 0x00000008
#define EVENT_ENABLE_PROPERTY_IGNORE_KEYWORD_0 0x00000010
#define EVENT_ENABLE_PROPERTY_PROVIDER_GROUP 0x00000020
#define EVENT_ENABLE_PROPERTY_ENABLE_KEYWORD_0 0x00000040
#define EVENT_ENABLE_PROPERTY_PROCESS_START_KEY 0x00000080
#define EVENT_ENABLE_PROPERTY_EVENT_KEY 0x00000100
#define EVENT_ENABLE_PROPERTY_EXCLUDE_INPRIVATE 0x00000200
#define EVENT_ENABLE_PROPERTY_ENABLE_SILOS 0x00000400
#define EVENT_ENABLE_PROPERTY_SOURCE_CONTAINER_TRACKING 0x00000800

#define ENABLE_TRACE_PARAMETERS_VERSION 1
#define ENABLE_TRACE_PARAMETERS_VERSION_2 2

/* ProcessTraceMode of EVENT_TRACE_LOGFILE. */
#define PROCESS_TRACE_MODE_REAL_TIME 0x00000100
#define PROCESS_TRACE_MODE_RAW_TIMESTAMP 0x00001000
#define PROCESS_TRACE_MODE_EVENT_RECORD 0x10000000

typedef struct _EVENT_TRACE_PROPERTIES {
  WNODE_HEADER Wnode;
  ULONG BufferSize;
  ULONG MinimumBuffers;
  ULONG MaximumBuffers;
  ULONG MaximumFileSize;
  ULONG LogFileMode;
  ULONG FlushTimer;
  ULONG EnableFlags;
  union {
    LONG AgeLimit;
    LONG FlushThreshold;
  };
  ULONG NumberOfBuffers;
  ULONG FreeBuffers;
  ULONG EventsLost;
  ULONG BuffersWritten;
  ULONG LogBuffersLost;
  ULONG RealTimeBuffersLost;
  HANDLE LoggerThreadId;
  ULONG LogFileNameOffset;
  ULONG LoggerNameOffset;
} EVENT_TRACE_PROPERTIES, *PEVENT_TRACE_PROPERTIES;

typedef struct _ENABLE_TRACE_PARAMETERS {
  ULONG Version;
  ULONG EnableProperty;
  ULONG ControlFlags;
  GUID SourceId;
  PEVENT_FILTER_DESCRIPTOR EnableFilterDesc;
  ULONG FilterDescCount;
} ENABLE_TRACE_PARAMETERS, *PENABLE_TRACE_PARAMETERS;

/* Classic (MOF) event header, as TraceEvent takes it and EventCallback consumers see it. */
typedef struct _EVENT_TRACE_HEADER {
  USHORT Size;
  union {
    USHORT FieldTypeFlags;
    struct {
      UCHAR HeaderType;
      UCHAR MarkerFlags;
    };
  };
  union {
    ULONG Version;
    struct {
      UCHAR Type;
      UCHAR Level;
      USHORT Version;
    } Class;
  };
  ULONG ThreadId;
  ULONG ProcessId;
  LARGE_INTEGER TimeStamp;
  union {
    GUID Guid;
    ULONGLONG GuidPtr;
  };
  union {
    struct {
      ULONG KernelTime;
      ULONG UserTime;
    };
    ULONG64 ProcessorTime;
    struct {
      ULONG ClientContext;
      ULONG Flags;
    };
  };
} EVENT_TRACE_HEADER, *PEVENT_TRACE_HEADER;

typedef struct _MOF_FIELD {
  ULONG64 DataPtr;
  ULONG Length;
  ULONG DataType;
} MOF_FIELD, *PMOF_FIELD;

typedef struct _ETW_BUFFER_CONTEXT {
  union {
    struct {
      UCHAR ProcessorNumber;
      UCHAR Alignment;
    };
    USHORT ProcessorIndex;
  };
  USHORT LoggerId;
} ETW_BUFFER_CONTEXT, *PETW_BUFFER_CONTEXT;

typedef struct _EVENT_TRACE {
  EVENT_TRACE_HEADER Header;
  ULONG InstanceId;
  ULONG ParentInstanceId;
  GUID ParentGuid;
  PVOID MofData;
  ULONG MofLength;
  union {
    ULONG ClientContext;
    ETW_BUFFER_CONTEXT BufferContext;
  };
} EVENT_TRACE, *PEVENT_TRACE;

typedef struct _TRACE_LOGFILE_HEADER {
  ULONG BufferSize;
  union {
    ULONG Version;
    struct {
      UCHAR MajorVersion;
      UCHAR MinorVersion;
      UCHAR SubVersion;
      UCHAR SubMinorVersion;
    } VersionDetail;
  };
  ULONG ProviderVersion;
  ULONG NumberOfProcessors;
  LARGE_INTEGER EndTime;
  ULONG TimerResolution;
  ULONG MaximumFileSize;
  ULONG LogFileMode;
  ULONG BuffersWritten;
  union {
    GUID LogInstanceGuid;
    struct {
      ULONG StartBuffers;
      ULONG PointerSize;
      ULONG EventsLost;
      ULONG CpuSpeedInMHz;
    };
  };
  LPWSTR LoggerName;
  LPWSTR LogFileName;
  TIME_ZONE_INFORMATION TimeZone;
  LARGE_INTEGER BootTime;
  LARGE_INTEGER PerfFreq;
  LARGE_INTEGER StartTime;
  ULONG ReservedFlags;
  ULONG BuffersLost;
} TRACE_LOGFILE_HEADER, *PTRACE_LOGFILE_HEADER;

struct _EVENT_RECORD;
struct _EVENT_TRACE_LOGFILEA;
struct _EVENT_TRACE_LOGFILEW;

typedef ULONG(WINAPI* PEVENT_TRACE_BUFFER_CALLBACKA)(struct _EVENT_TRACE_LOGFILEA* Logfile);
typedef ULONG(WINAPI* PEVENT_TRACE_BUFFER_CALLBACKW)(struct _EVENT_TRACE_LOGFILEW* Logfile);
typedef VOID(WINAPI* PEVENT_CALLBACK)(PEVENT_TRACE pEvent);
typedef VOID(WINAPI* PEVENT_RECORD_CALLBACK)(struct _EVENT_RECORD* EventRecord);

typedef struct _EVENT_TRACE_LOGFILEA {
  LPSTR LogFileName;
  LPSTR LoggerName;
  LONGLONG CurrentTime;
  ULONG BuffersRead;
  union {
    ULONG LogFileMode;
    ULONG ProcessTraceMode;
  };
  EVENT_TRACE CurrentEvent;
  TRACE_LOGFILE_HEADER LogfileHeader;
  PEVENT_TRACE_BUFFER_CALLBACKA BufferCallback;
  ULONG BufferSize;
  ULONG Filled;
  ULONG EventsLost;
  union {
    PEVENT_CALLBACK EventCallback;
    PEVENT_RECORD_CALLBACK EventRecordCallback;
  };
  ULONG IsKernelTrace;
  PVOID Context;
} EVENT_TRACE_LOGFILEA, *PEVENT_TRACE_LOGFILEA;

/* The same record with UTF-16 names (OpenTraceW). */
typedef struct _EVENT_TRACE_LOGFILEW {
  LPWSTR LogFileName;
  LPWSTR LoggerName;
  LONGLONG CurrentTime;
  ULONG BuffersRead;
  union {
    ULONG LogFileMode;
    ULONG ProcessTraceMode;
  };
  EVENT_TRACE CurrentEvent;
  TRACE_LOGFILE_HEADER LogfileHeader;
  PEVENT_TRACE_BUFFER_CALLBACKW BufferCallback;
  ULONG BufferSize;
  ULONG Filled;
  ULONG EventsLost;
  union {
    PEVENT_CALLBACK EventCallback;
    PEVENT_RECORD_CALLBACK EventRecordCallback;
  };
  ULONG IsKernelTrace;
  PVOID Context;
} EVENT_TRACE_LOGFILEW, *PEVENT_TRACE_LOGFILEW;

/* Classic provider registration (RegisterTraceGuids). */
typedef enum {
  WMI_GET_ALL_DATA = 0,
  WMI_GET_SINGLE_INSTANCE = 1,
  WMI_SET_SINGLE_INSTANCE = 2,
  WMI_SET_SINGLE_ITEM = 3,
  WMI_ENABLE_EVENTS = 4,
  WMI_DISABLE_EVENTS = 5,
  WMI_ENABLE_COLLECTION = 6,
  WMI_DISABLE_COLLECTION = 7,
  WMI_REGINFO = 8,
  WMI_EXECUTE_METHOD = 9,
  WMI_CAPTURE_STATE = 10
} WMIDPREQUESTCODE;

typedef ULONG(WINAPI* WMIDPREQUEST)(WMIDPREQUESTCODE RequestCode, PVOID RequestContext,
                                    ULONG* BufferSize, PVOID Buffer);

typedef struct _TRACE_GUID_REGISTRATION {
  LPCGUID Guid;
  HANDLE RegHandle;
} TRACE_GUID_REGISTRATION, *PTRACE_GUID_REGISTRATION;

/* TraceSetInformation / TraceQueryInformation classes (values as documented; etwrt
   implements TraceSetDisallowList). */
typedef enum _TRACE_QUERY_INFO_CLASS {
  TraceGuidQueryList = 0,
  TraceGuidQueryInfo = 1,
  TraceGuidQueryProcess = 2,
  TraceStackTracingInfo = 3,
  TraceSystemTraceEnableFlagsInfo = 4,
  TraceSampledProfileIntervalInfo = 5,
  TraceProfileSourceConfigInfo = 6,
  TraceProfileSourceListInfo = 7,
  TracePmcEventListInfo = 8,
  TracePmcCounterListInfo = 9,
  TraceSetDisallowList = 10,
  TraceVersionInfo = 11,
  TraceGroupQueryList = 12,
  TraceGroupQueryInfo = 13,
  TraceDisallowListQuery = 14,
  TraceCompressionInfo = 15,
  TracePeriodicCaptureStateListInfo = 16,
  TracePeriodicCaptureStateInfo = 17,
  TraceProviderBinaryTracking = 18,
  TraceMaxLoggersQuery = 19,
  MaxTraceSetInfoClass = 20
} TRACE_QUERY_INFO_CLASS,
    TRACE_INFO_CLASS;

/* EnumerateTraceGuidsEx(TraceGuidQueryInfo): a TRACE_GUID_INFO, then InstanceCount blocks of a
   TRACE_PROVIDER_INSTANCE_INFO followed by its EnableCount TRACE_ENABLE_INFOs (NextOffset: from
   this block to the next). */
#define TRACE_PROVIDER_FLAG_LEGACY 0x00000001
#define TRACE_PROVIDER_FLAG_PRE_ENABLE 0x00000002

typedef struct _TRACE_ENABLE_INFO {
  ULONG IsEnabled;
  UCHAR Level;
  UCHAR Reserved1;
  USHORT LoggerId;
  ULONG EnableProperty;
  ULONG Reserved2;
  ULONGLONG MatchAnyKeyword;
  ULONGLONG MatchAllKeyword;
} TRACE_ENABLE_INFO, *PTRACE_ENABLE_INFO;

typedef struct _TRACE_PROVIDER_INSTANCE_INFO {
  ULONG NextOffset;
  ULONG EnableCount;
  ULONG Pid;
  ULONG Flags;
} TRACE_PROVIDER_INSTANCE_INFO, *PTRACE_PROVIDER_INSTANCE_INFO;

typedef struct _TRACE_GUID_INFO {
  ULONG InstanceCount;
  ULONG Reserved;
} TRACE_GUID_INFO, *PTRACE_GUID_INFO;

#ifdef __cplusplus
extern "C" {
#endif

/* Controllers. */
ULONG WMIAPI StartTraceA(PTRACEHANDLE TraceHandle, LPCSTR InstanceName,
                         PEVENT_TRACE_PROPERTIES Properties);
ULONG WMIAPI ControlTraceA(TRACEHANDLE TraceHandle, LPCSTR InstanceName,
                           PEVENT_TRACE_PROPERTIES Properties, ULONG ControlCode);
ULONG WMIAPI StopTraceA(TRACEHANDLE TraceHandle, LPCSTR InstanceName,
                        PEVENT_TRACE_PROPERTIES Properties);
ULONG WMIAPI QueryTraceA(TRACEHANDLE TraceHandle, LPCSTR InstanceName,
                         PEVENT_TRACE_PROPERTIES Properties);
ULONG WMIAPI FlushTraceA(TRACEHANDLE TraceHandle, LPCSTR InstanceName,
                         PEVENT_TRACE_PROPERTIES Properties);
ULONG WMIAPI UpdateTraceA(TRACEHANDLE TraceHandle, LPCSTR InstanceName,
                          PEVENT_TRACE_PROPERTIES Properties);
/* Every running session but private ones: PropertyArrayCount structures, each with its
   Wnode.BufferSize and LoggerNameOffset set; ERROR_MORE_DATA when there are more sessions
   (the array is filled, LoggerCount says how many). */
ULONG WMIAPI QueryAllTracesA(PEVENT_TRACE_PROPERTIES* PropertyArray, ULONG PropertyArrayCount,
                             PULONG LoggerCount);
/* The W entry points (api_wide.cc): names are NUL-terminated UTF-16; the session name is
   written back at LoggerNameOffset in UTF-16, as Windows does. */
ULONG WMIAPI StartTraceW(PTRACEHANDLE TraceHandle, LPCWSTR InstanceName,
                         PEVENT_TRACE_PROPERTIES Properties);
ULONG WMIAPI ControlTraceW(TRACEHANDLE TraceHandle, LPCWSTR InstanceName,
                           PEVENT_TRACE_PROPERTIES Properties, ULONG ControlCode);
ULONG WMIAPI StopTraceW(TRACEHANDLE TraceHandle, LPCWSTR InstanceName,
                        PEVENT_TRACE_PROPERTIES Properties);
ULONG WMIAPI QueryTraceW(TRACEHANDLE TraceHandle, LPCWSTR InstanceName,
                         PEVENT_TRACE_PROPERTIES Properties);
ULONG WMIAPI FlushTraceW(TRACEHANDLE TraceHandle, LPCWSTR InstanceName,
                         PEVENT_TRACE_PROPERTIES Properties);
ULONG WMIAPI UpdateTraceW(TRACEHANDLE TraceHandle, LPCWSTR InstanceName,
                          PEVENT_TRACE_PROPERTIES Properties);
ULONG WMIAPI QueryAllTracesW(PEVENT_TRACE_PROPERTIES* PropertyArray, ULONG PropertyArrayCount,
                             PULONG LoggerCount);
ULONG WMIAPI EnableTraceEx2(TRACEHANDLE TraceHandle, LPCGUID ProviderId, ULONG ControlCode,
                            UCHAR Level, ULONGLONG MatchAnyKeyword, ULONGLONG MatchAllKeyword,
                            ULONG Timeout, PENABLE_TRACE_PARAMETERS EnableParameters);
ULONG WMIAPI EnableTraceEx(LPCGUID ProviderId, LPCGUID SourceId, TRACEHANDLE TraceHandle,
                           ULONG IsEnabled, UCHAR Level, ULONGLONG MatchAnyKeyword,
                           ULONGLONG MatchAllKeyword, ULONG EnableProperty,
                           PEVENT_FILTER_DESCRIPTOR EnableFilterDesc);
ULONG WMIAPI EnableTrace(ULONG Enable, ULONG EnableFlag, ULONG EnableLevel, LPCGUID ControlGuid,
                         TRACEHANDLE TraceHandle);
ULONG WMIAPI TraceSetInformation(TRACEHANDLE SessionHandle, TRACE_INFO_CLASS InformationClass,
                                 PVOID TraceInformation, ULONG InformationLength);
/* TraceGuidQueryList (the GUIDs of the providers registered or enabled), TraceGuidQueryProcess
   (those registered in the calling process) and TraceGuidQueryInfo
   (InBuffer: one GUID; its instances and the sessions enabling each). OutBufferSize too small
   (0 included): ERROR_INSUFFICIENT_BUFFER with *ReturnLength the size needed. */
/* TraceDisallowListQuery and TraceMaxLoggersQuery; other classes ERROR_NOT_SUPPORTED. */
ULONG WMIAPI TraceQueryInformation(TRACEHANDLE SessionHandle, TRACE_INFO_CLASS InformationClass,
                                   PVOID TraceInformation, ULONG InformationLength,
                                   PULONG ReturnLength);
ULONG WMIAPI EnumerateTraceGuidsEx(TRACE_QUERY_INFO_CLASS TraceQueryInfoClass, PVOID InBuffer,
                                   ULONG InBufferSize, PVOID OutBuffer, ULONG OutBufferSize,
                                   PULONG ReturnLength);

/* Realtime consumers. */
TRACEHANDLE WMIAPI OpenTraceA(PEVENT_TRACE_LOGFILEA Logfile);
TRACEHANDLE WMIAPI OpenTraceW(PEVENT_TRACE_LOGFILEW Logfile);
ULONG WMIAPI ProcessTrace(PTRACEHANDLE HandleArray, ULONG HandleCount, LPFILETIME StartTime,
                          LPFILETIME EndTime);
ULONG WMIAPI CloseTrace(TRACEHANDLE TraceHandle);

/* Classic providers. */
ULONG WMIAPI RegisterTraceGuidsA(WMIDPREQUEST RequestAddress, PVOID RequestContext,
                                 LPCGUID ControlGuid, ULONG GuidCount,
                                 PTRACE_GUID_REGISTRATION TraceGuidReg, LPCSTR MofImagePath,
                                 LPCSTR MofResourceName, PTRACEHANDLE RegistrationHandle);
ULONG WMIAPI RegisterTraceGuidsW(WMIDPREQUEST RequestAddress, PVOID RequestContext,
                                 LPCGUID ControlGuid, ULONG GuidCount,
                                 PTRACE_GUID_REGISTRATION TraceGuidReg, LPCWSTR MofImagePath,
                                 LPCWSTR MofResourceName, PTRACEHANDLE RegistrationHandle);
ULONG WMIAPI UnregisterTraceGuids(TRACEHANDLE RegistrationHandle);
TRACEHANDLE WMIAPI GetTraceLoggerHandle(PVOID Buffer);
UCHAR WMIAPI GetTraceEnableLevel(TRACEHANDLE TraceHandle);
ULONG WMIAPI GetTraceEnableFlags(TRACEHANDLE TraceHandle);
ULONG WMIAPI TraceEvent(TRACEHANDLE TraceHandle, PEVENT_TRACE_HEADER EventTrace);
/* WPP-style message: (PVOID, size_t) argument pairs, ended by a NULL pointer. */
ULONG TraceMessage(TRACEHANDLE LoggerHandle, ULONG MessageFlags, LPCGUID MessageGuid,
                   USHORT MessageNumber, ...);
ULONG TraceMessageVa(TRACEHANDLE LoggerHandle, ULONG MessageFlags, LPCGUID MessageGuid,
                     USHORT MessageNumber, va_list MessageArgList);

#ifdef __cplusplus
}
#endif

/* The UNICODE-neutral names: W with UNICODE defined, else A. */
#ifdef UNICODE
#define StartTrace StartTraceW
#define ControlTrace ControlTraceW
#define StopTrace StopTraceW
#define QueryTrace QueryTraceW
#define FlushTrace FlushTraceW
#define UpdateTrace UpdateTraceW
#define QueryAllTraces QueryAllTracesW
#define OpenTrace OpenTraceW
#define RegisterTraceGuids RegisterTraceGuidsW
#define KERNEL_LOGGER_NAME KERNEL_LOGGER_NAMEW
#define GLOBAL_LOGGER_NAME GLOBAL_LOGGER_NAMEW
#define EVENT_LOGGER_NAME EVENT_LOGGER_NAMEW
typedef EVENT_TRACE_LOGFILEW EVENT_TRACE_LOGFILE, *PEVENT_TRACE_LOGFILE;
typedef PEVENT_TRACE_BUFFER_CALLBACKW PEVENT_TRACE_BUFFER_CALLBACK;
#else
#define StartTrace StartTraceA
#define ControlTrace ControlTraceA
#define StopTrace StopTraceA
#define QueryTrace QueryTraceA
#define FlushTrace FlushTraceA
#define UpdateTrace UpdateTraceA
#define QueryAllTraces QueryAllTracesA
#define OpenTrace OpenTraceA
#define RegisterTraceGuids RegisterTraceGuidsA
#define KERNEL_LOGGER_NAME KERNEL_LOGGER_NAMEA
#define GLOBAL_LOGGER_NAME GLOBAL_LOGGER_NAMEA
#define EVENT_LOGGER_NAME EVENT_LOGGER_NAMEA
typedef EVENT_TRACE_LOGFILEA EVENT_TRACE_LOGFILE, *PEVENT_TRACE_LOGFILE;
typedef PEVENT_TRACE_BUFFER_CALLBACKA PEVENT_TRACE_BUFFER_CALLBACK;
#endif

#endif /* ETWRT_EVNTRACE_H */
