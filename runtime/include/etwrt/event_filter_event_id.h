/*
 * etwrt: EVENT_FILTER_EVENT_ID (evntprov.h), the filter of an EVENT_FILTER_DESCRIPTOR of type
 * EVENT_FILTER_TYPE_EVENT_ID. Included by etwrt's evntprov.h, and by etwh's
 * providers/win32_compat.h on Windows where the toolchain's evntprov.h lacks it (mingw-w64 10),
 * so that the layout is written once.
 */
#ifndef ETWRT_EVENT_FILTER_EVENT_ID_H
#define ETWRT_EVENT_FILTER_EVENT_ID_H

typedef struct _EVENT_FILTER_EVENT_ID {
  BOOLEAN FilterIn;
  UCHAR Reserved;
  USHORT Count;
  USHORT Events[ANYSIZE_ARRAY];
} EVENT_FILTER_EVENT_ID, *PEVENT_FILTER_EVENT_ID;

#endif
