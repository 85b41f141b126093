/*
 * etwrt only, no Windows counterpart: the observation of this process (docs/etwrt/use.md,
 * "Observation") switched on and off while it runs, for an observer inside the same process
 * (etwh::testing's provider check). ETWRT_OBSERVE_SOCKET does the same before main for an
 * observer outside it.
 */
#ifndef ETWRT_OBSERVATION_H
#define ETWRT_OBSERVATION_H

#include <windows.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Reports into the SOCK_SEQPACKET socket listening at `path` from now on, starting with a
 * "hello" record (seq and dropped start again from 0); registrations made before are not
 * reported. The path may lie at any depth (a path longer than a socket address holds is
 * reached through its folder). ERROR_SUCCESS; ERROR_INVALID_PARAMETER for a NULL or empty path;
 * ERROR_BUSY when observing already; ERROR_FILE_NOT_FOUND when nobody listens there. */
ULONG EtwrtObserveStart(const char* path);

/* Sends the "end" record and closes the channel (the observer sees it close). A record a
 * thread was sending at that moment is dropped. ERROR_SUCCESS; ERROR_NOT_FOUND when not
 * observing. */
ULONG EtwrtObserveStop(void);

#ifdef __cplusplus
}
#endif

#endif
