// The LTTng-UST tracepoint the event-path benchmark compares EventWrite with: one event whose
// payload is the same 32 bytes (four 64-bit words, copied as one array). Read twice by
// lttng/tracepoint.h (TRACEPOINT_HEADER_MULTI_READ), hence the unusual guard.
#undef TRACEPOINT_PROVIDER
#define TRACEPOINT_PROVIDER etwh_bench

#undef TRACEPOINT_INCLUDE
#define TRACEPOINT_INCLUDE "lttng_tp.h"

#if !defined(ETWH_BENCH_LTTNG_TP_H) || defined(TRACEPOINT_HEADER_MULTI_READ)
#define ETWH_BENCH_LTTNG_TP_H

#include <lttng/tracepoint.h>

#include <stdint.h>

TRACEPOINT_EVENT(etwh_bench, event32, TP_ARGS(const uint64_t*, words),
                 TP_FIELDS(ctf_array(uint64_t, words, words, 4)))

#endif

#include <lttng/tracepoint-event.h>
