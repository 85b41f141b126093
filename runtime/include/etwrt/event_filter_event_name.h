/*
 * etwrt: EVENT_FILTER_EVENT_NAME (evntprov.h), the filter of an EVENT_FILTER_DESCRIPTOR of type
 * EVENT_FILTER_TYPE_EVENT_NAME. Included by etwrt's evntprov.h, and by etwh's
 * providers/win32_compat.h on Windows where the toolchain's evntprov.h lacks it (mingw-w64 10),
 * so that the layout is written once.
 */
#ifndef ETWRT_EVENT_FILTER_EVENT_NAME_H
#define ETWRT_EVENT_FILTER_EVENT_NAME_H

typedef struct _EVENT_FILTER_EVENT_NAME {
  ULONGLONG MatchAnyKeyword;
  ULONGLONG MatchAllKeyword;
  UCHAR Level;
  BOOLEAN FilterIn;
  USHORT NameCount;
  UCHAR Names[ANYSIZE_ARRAY];
} EVENT_FILTER_EVENT_NAME, *PEVENT_FILTER_EVENT_NAME;

#endif
