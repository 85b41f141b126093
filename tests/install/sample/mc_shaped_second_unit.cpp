// The second translation unit that includes the mc-shaped header: its selectany objects must
// be the first unit's.
#include "mc_shaped_provider.h"

ULONG* second_unit_enable_bits(void) { return ShapeEnableBits; }
PSHAPE_TRACE_CONTEXT second_unit_context(void) { return &ShapeProvider_Context; }
