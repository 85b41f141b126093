/* etwrt: WNODE_HEADER lives in evntrace.h here; this header exists so includes resolve. */
#ifndef ETWRT_WMISTR_H
#define ETWRT_WMISTR_H
#include "evntrace.h"
#endif
