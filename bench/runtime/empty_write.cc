#include "empty_write.h"

extern "C" ULONG etwh_bench_empty_write(REGHANDLE, PCEVENT_DESCRIPTOR, ULONG,
                                        PEVENT_DATA_DESCRIPTOR) {
  return ERROR_SUCCESS;
}
