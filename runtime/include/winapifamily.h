/* winapifamily.h for etwrt: the API family is always the desktop one (the SDK's default).
   Code that checks _WIN32_WINNT >= 0x0603 includes this header to tell desktop from store apps
   (Boost.Asio does): with the desktop family it takes the desktop path. */
#pragma once

#define WINAPI_FAMILY_PC_APP 2
#define WINAPI_FAMILY_PHONE_APP 3
#define WINAPI_FAMILY_SYSTEM 4
#define WINAPI_FAMILY_SERVER 5
#define WINAPI_FAMILY_GAMES 6
#define WINAPI_FAMILY_DESKTOP_APP 100
#define WINAPI_FAMILY_APP WINAPI_FAMILY_PC_APP

#ifndef WINAPI_FAMILY
#define WINAPI_FAMILY WINAPI_FAMILY_DESKTOP_APP
#endif

/* Each partition is 1 when the family includes it; the desktop family includes the app ones. */
#define WINAPI_PARTITION_DESKTOP (WINAPI_FAMILY == WINAPI_FAMILY_DESKTOP_APP)
#define WINAPI_PARTITION_APP                                                              \
  (WINAPI_FAMILY == WINAPI_FAMILY_DESKTOP_APP || WINAPI_FAMILY == WINAPI_FAMILY_PC_APP || \
   WINAPI_FAMILY == WINAPI_FAMILY_PHONE_APP)
#define WINAPI_PARTITION_PC_APP \
  (WINAPI_FAMILY == WINAPI_FAMILY_DESKTOP_APP || WINAPI_FAMILY == WINAPI_FAMILY_PC_APP)
#define WINAPI_PARTITION_PHONE_APP (WINAPI_FAMILY == WINAPI_FAMILY_PHONE_APP)
#define WINAPI_PARTITION_GAMES \
  (WINAPI_FAMILY == WINAPI_FAMILY_GAMES || WINAPI_FAMILY == WINAPI_FAMILY_DESKTOP_APP)
#define WINAPI_PARTITION_SYSTEM \
  (WINAPI_FAMILY == WINAPI_FAMILY_SYSTEM || WINAPI_FAMILY == WINAPI_FAMILY_SERVER)
#define WINAPI_PARTITION_PHONE WINAPI_PARTITION_PHONE_APP
#define WINAPI_PARTITION_TV_APP 0
#define WINAPI_PARTITION_TV_TITLE 0

#define WINAPI_FAMILY_PARTITION(Partitions) (Partitions)
#define WINAPI_FAMILY_ONE_PARTITION(PartitionSet, Partition) \
  ((WINAPI_FAMILY & PartitionSet) == Partition)
