// The second translation unit of selectany_test: it defines the same selectany objects.
#include "selectany_shape.h"

ULONG* other_unit_enable_bits() { return SelectanyEnableBits; }
const ULONGLONG* other_unit_keywords() { return SelectanyKeywords; }
const UINT32* other_unit_namespace() { return SelectanyNamespace; }
