// The tracepoint provider (probe) of lttng_tp.h, built as a module the benchmark dlopens once
// its private session daemon runs, so that liblttng-ust registers with that daemon at once.
#define TRACEPOINT_CREATE_PROBES
#include "lttng_tp.h"
