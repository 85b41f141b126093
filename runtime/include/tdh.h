/*
 * etwrt: a subset of the Win32 Trace Data Helper (tdh.h): TdhGetEventInformation,
 * TdhGetPropertySize, TdhGetProperty, TdhGetEventMapInformation and TdhFormatProperty for
 * TraceLogging events (decoded from their EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL item) and for
 * events of instrumentation manifests loaded with TdhLoadManifest. Layouts as in the Windows SDK.
 * Other events (MOF, WPP, a manifest not loaded) get ERROR_NOT_FOUND.
 */
#ifndef ETWRT_TDH_H
#define ETWRT_TDH_H

#include <evntprov.h>
#include <evntcons.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef ULONG TDHSTATUS;
#define TDHAPI TDHSTATUS EVNTAPI

typedef enum _DECODING_SOURCE {
  DecodingSourceXMLFile = 0,
  DecodingSourceWbem = 1,
  DecodingSourceWPP = 2,
  DecodingSourceTlg = 3,
  DecodingSourceMax = 4
} DECODING_SOURCE;

typedef enum _TEMPLATE_FLAGS {
  TEMPLATE_EVENT_DATA = 1,
  TEMPLATE_USER_DATA = 2,
  TEMPLATE_CONTROL_GUID = 4
} TEMPLATE_FLAGS;

typedef enum _PROPERTY_FLAGS {
  PropertyStruct = 0x1,
  PropertyParamLength = 0x2,
  PropertyParamCount = 0x4,
  PropertyWBEMXmlFragment = 0x8,
  PropertyParamFixedLength = 0x10,
  PropertyParamFixedCount = 0x20,
  PropertyHasTags = 0x40,
  PropertyHasCustomSchema = 0x80
} PROPERTY_FLAGS;

#include "etwrt/tdh_in_type.h"

enum _TDH_OUT_TYPE {
  TDH_OUTTYPE_NULL = 0,
  TDH_OUTTYPE_STRING = 1,
  TDH_OUTTYPE_DATETIME = 2,
  TDH_OUTTYPE_BYTE = 3,
  TDH_OUTTYPE_UNSIGNEDBYTE = 4,
  TDH_OUTTYPE_SHORT = 5,
  TDH_OUTTYPE_UNSIGNEDSHORT = 6,
  TDH_OUTTYPE_INT = 7,
  TDH_OUTTYPE_UNSIGNEDINT = 8,
  TDH_OUTTYPE_LONG = 9,
  TDH_OUTTYPE_UNSIGNEDLONG = 10,
  TDH_OUTTYPE_FLOAT = 11,
  TDH_OUTTYPE_DOUBLE = 12,
  TDH_OUTTYPE_BOOLEAN = 13,
  TDH_OUTTYPE_GUID = 14,
  TDH_OUTTYPE_HEXBINARY = 15,
  TDH_OUTTYPE_HEXINT8 = 16,
  TDH_OUTTYPE_HEXINT16 = 17,
  TDH_OUTTYPE_HEXINT32 = 18,
  TDH_OUTTYPE_HEXINT64 = 19,
  TDH_OUTTYPE_PID = 20,
  TDH_OUTTYPE_TID = 21,
  TDH_OUTTYPE_PORT = 22,
  TDH_OUTTYPE_IPV4 = 23,
  TDH_OUTTYPE_IPV6 = 24,
  TDH_OUTTYPE_SOCKETADDRESS = 25,
  TDH_OUTTYPE_CIMDATETIME = 26,
  TDH_OUTTYPE_ETWTIME = 27,
  TDH_OUTTYPE_XML = 28,
  TDH_OUTTYPE_ERRORCODE = 29,
  TDH_OUTTYPE_WIN32ERROR = 30,
  TDH_OUTTYPE_NTSTATUS = 31,
  TDH_OUTTYPE_HRESULT = 32,
  TDH_OUTTYPE_CULTURE_INSENSITIVE_DATETIME = 33,
  TDH_OUTTYPE_JSON = 34,
  TDH_OUTTYPE_UTF8 = 35,
  TDH_OUTTYPE_PKCS7_WITH_TYPE_INFO = 36,
  TDH_OUTTYPE_CODE_POINTER = 37,
  TDH_OUTTYPE_DATETIME_UTC = 38,
  TDH_OUTTYPE_REDUCEDSTRING = 300,
  TDH_OUTTYPE_NOPRINT = 301
};

typedef enum _MAP_FLAGS {
  EVENTMAP_INFO_FLAG_MANIFEST_VALUEMAP = 0x1,
  EVENTMAP_INFO_FLAG_MANIFEST_BITMAP = 0x2,
  EVENTMAP_INFO_FLAG_MANIFEST_PATTERNMAP = 0x4,
  EVENTMAP_INFO_FLAG_WBEM_VALUEMAP = 0x8,
  EVENTMAP_INFO_FLAG_WBEM_BITMAP = 0x10,
  EVENTMAP_INFO_FLAG_WBEM_FLAG = 0x20,
  EVENTMAP_INFO_FLAG_WBEM_NO_MAP = 0x40
} MAP_FLAGS;

typedef enum _MAP_VALUETYPE {
  EVENTMAP_ENTRY_VALUETYPE_ULONG = 0,
  EVENTMAP_ENTRY_VALUETYPE_STRING = 1
} MAP_VALUETYPE;

typedef struct _EVENT_MAP_ENTRY {
  ULONG OutputOffset;
  union {
    ULONG Value;       /* value maps and bit maps */
    ULONG InputOffset; /* pattern maps and WBEM string value maps */
  };
} EVENT_MAP_ENTRY, *PEVENT_MAP_ENTRY;

typedef struct _EVENT_MAP_INFO {
  ULONG NameOffset;
  MAP_FLAGS Flag;
  ULONG EntryCount;
  union {
    MAP_VALUETYPE MapEntryValueType;
    ULONG FormatStringOffset;
  };
  EVENT_MAP_ENTRY MapEntryArray[ANYSIZE_ARRAY];
} EVENT_MAP_INFO, *PEVENT_MAP_INFO;

typedef struct _EVENT_PROPERTY_INFO {
  PROPERTY_FLAGS Flags;
  ULONG NameOffset;
  union {
    struct {
      USHORT InType;
      USHORT OutType;
      ULONG MapNameOffset;
    } nonStructType;
    struct {
      USHORT StructStartIndex;
      USHORT NumOfStructMembers;
      ULONG padding;
    } structType;
    struct {
      USHORT InType;
      USHORT OutType;
      ULONG CustomSchemaOffset;
    } customSchemaType;
  };
  union {
    USHORT count;
    USHORT countPropertyIndex;
  };
  union {
    USHORT length;
    USHORT lengthPropertyIndex;
  };
  union {
    ULONG Reserved;
    struct {
      ULONG Tags : 28;
    };
  };
} EVENT_PROPERTY_INFO, *PEVENT_PROPERTY_INFO;

typedef struct _TRACE_EVENT_INFO {
  GUID ProviderGuid;
  GUID EventGuid;
  EVENT_DESCRIPTOR EventDescriptor;
  DECODING_SOURCE DecodingSource;
  ULONG ProviderNameOffset;
  ULONG LevelNameOffset;
  ULONG ChannelNameOffset;
  ULONG KeywordsNameOffset;
  ULONG TaskNameOffset;
  ULONG OpcodeNameOffset;
  ULONG EventMessageOffset;
  ULONG ProviderMessageOffset;
  ULONG BinaryXMLOffset;
  ULONG BinaryXMLSize;
  union {
    ULONG EventNameOffset;
    ULONG ActivityIDNameOffset;
  };
  union {
    ULONG EventAttributesOffset;
    ULONG RelatedActivityIDNameOffset;
  };
  ULONG PropertyCount;
  ULONG TopLevelPropertyCount;
  union {
    TEMPLATE_FLAGS Flags;
    struct {
      ULONG Reserved : 4;
      ULONG Tags : 28;
    };
  };
  EVENT_PROPERTY_INFO EventPropertyInfoArray[ANYSIZE_ARRAY];
} TRACE_EVENT_INFO, *PTRACE_EVENT_INFO;

typedef struct _PROPERTY_DATA_DESCRIPTOR {
  ULONGLONG PropertyName; /* a PCWSTR, or (struct member) as TDH documents */
  ULONG ArrayIndex;       /* 0xFFFFFFFF (Windows' ULONG_MAX): the whole property */
  ULONG Reserved;
} PROPERTY_DATA_DESCRIPTOR, *PPROPERTY_DATA_DESCRIPTOR;

typedef enum _TDH_CONTEXT_TYPE {
  TDH_CONTEXT_WPP_TMFFILE = 0,
  TDH_CONTEXT_WPP_TMFSEARCHPATH = 1,
  TDH_CONTEXT_WPP_GMT = 2,
  TDH_CONTEXT_POINTERSIZE = 3,
  TDH_CONTEXT_PDB_PATH = 4,
  TDH_CONTEXT_MAXIMUM = 5
} TDH_CONTEXT_TYPE;

typedef struct _TDH_CONTEXT {
  ULONGLONG ParameterValue;
  TDH_CONTEXT_TYPE ParameterType;
  ULONG ParameterSize;
} TDH_CONTEXT, *PTDH_CONTEXT;

/* Loads an instrumentation manifest (the XML mc.exe compiles) for the calls below; loading
 * the same path again replaces it. ERROR_INVALID_PARAMETER for NULL or a path of MAX_PATH units
 * or more, ERROR_FILE_NOT_FOUND, ERROR_XML_PARSE_ERROR for a file that is not a manifest etwrt
 * can decode (TdhLoadManifest page). TdhUnloadManifest: ERROR_FILE_NOT_FOUND when that path
 * is not loaded. */
TDHAPI TdhLoadManifest(PWSTR Manifest);
TDHAPI TdhUnloadManifest(PWSTR Manifest);
typedef struct _TRACE_PROVIDER_INFO {
  GUID ProviderGuid;
  ULONG SchemaSource; /* 0: an instrumentation manifest, 1: a MOF class */
  ULONG ProviderNameOffset;
} TRACE_PROVIDER_INFO;

typedef struct _PROVIDER_ENUMERATION_INFO {
  ULONG NumberOfProviders;
  ULONG Reserved;
  TRACE_PROVIDER_INFO TraceProviderInfoArray[ANYSIZE_ARRAY];
} PROVIDER_ENUMERATION_INFO, *PPROVIDER_ENUMERATION_INFO;

/* The providers of the manifests loaded with TdhLoadManifest (etwrt's stand-in for the
 * manifests installed on the computer; no registry, no MOF), each once, SchemaSource 0, their
 * names after the array. As the page says: *pBufferSize receives the size used, or
 * ERROR_INSUFFICIENT_BUFFER with the size needed (a size of 0 asks for it); a NULL pBufferSize
 * is ERROR_INVALID_PARAMETER. */
TDHAPI TdhEnumerateProviders(PPROVIDER_ENUMERATION_INFO pBuffer, ULONG* pBufferSize);
/* etwrt reads no PE resources: ERROR_INVALID_PARAMETER (NULL, empty, MAX_PATH or longer),
 * ERROR_FILE_NOT_FOUND, else ERROR_RESOURCE_NOT_FOUND (TdhLoadManifestFromBinary page: "The
 * file does not contain any eventing metadata resources"). */
TDHAPI TdhLoadManifestFromBinary(PWSTR BinaryPath);

/* ERROR_INSUFFICIENT_BUFFER with *BufferSize set when the buffer is too small (or NULL);
 * ERROR_NOT_FOUND when the event has no TraceLogging schema and no loaded manifest has it;
 * ERROR_INVALID_DATA when the schema is malformed. Contexts are accepted and ignored. */
TDHAPI TdhGetEventInformation(PEVENT_RECORD Event, ULONG TdhContextCount, PTDH_CONTEXT TdhContext,
                              PTRACE_EVENT_INFO Buffer, PULONG BufferSize);

/* PropertyDataCount 1 names a top-level property, 2 a struct then one of its members.
 * ERROR_NOT_FOUND for an unknown name, ERROR_INVALID_PARAMETER for an index past an array,
 * ERROR_EVT_INVALID_EVENT_DATA when the payload does not hold what the schema says. */
TDHAPI TdhGetPropertySize(PEVENT_RECORD pEvent, ULONG TdhContextCount, PTDH_CONTEXT pTdhContext,
                          ULONG PropertyDataCount, PPROPERTY_DATA_DESCRIPTOR pPropertyData,
                          ULONG* pPropertySize);
TDHAPI TdhGetProperty(PEVENT_RECORD pEvent, ULONG TdhContextCount, PTDH_CONTEXT pTdhContext,
                      ULONG PropertyDataCount, PPROPERTY_DATA_DESCRIPTOR pPropertyData,
                      ULONG BufferSize, PBYTE pBuffer);

/* The map named pMapName (a manifest's valueMap or bitMap, named by the property's
 * MapNameOffset). Each entry's text ends with a space, as the page says of manifest maps.
 * ERROR_NOT_FOUND when the event has no loaded manifest or the manifest no such map,
 * ERROR_INSUFFICIENT_BUFFER with *pBufferSize set when the buffer is too small (or NULL). */
TDHAPI TdhGetEventMapInformation(PEVENT_RECORD pEvent, PWSTR pMapName, PEVENT_MAP_INFO pBuffer,
                                 ULONG* pBufferSize);

/* One value of a property as text (docs/etwrt/conformance.md, "TDH formatting", gives each format).
 * *BufferSize in bytes, the terminating NUL included; ERROR_INSUFFICIENT_BUFFER with the size
 * when it is too small (or Buffer NULL); ERROR_EVT_INVALID_EVENT_DATA when UserData is too short
 * for the value; ERROR_INVALID_PARAMETER for a NULL pointer or an in-type (or in-type and
 * out-type pair) etwrt does not format. *UserDataConsumed: the bytes of the value. */
TDHAPI TdhFormatProperty(PTRACE_EVENT_INFO EventInfo, PEVENT_MAP_INFO MapInfo, ULONG PointerSize,
                         USHORT PropertyInType, USHORT PropertyOutType, USHORT PropertyLength,
                         USHORT UserDataLength, PBYTE UserData, PULONG BufferSize, PWCHAR Buffer,
                         PUSHORT UserDataConsumed);

#ifdef __cplusplus
}
#endif

#endif /* ETWRT_TDH_H */
