// The size of one value of a TDH InType that the type alone fixes, for code that reads event
// payloads: etwrt's TDH and manifest reader, and etwh::testing's in-place decoder (which builds
// against Windows' tdh.h too). Header-only, over the platform's tdh.h (etwrt's or Windows').
#pragma once

#include <windows.h>
#include <tdh.h>

#include <cstddef>

namespace etwh {

// The integers, HEXINT32/64, FLOAT, DOUBLE, BOOLEAN, FILETIME and GUID; 0 for any other InType,
// whose size its caller decides (POINTER and SIZET by the record's pointer size, the strings,
// the characters, SYSTEMTIME, the counted types), or which it does not read.
constexpr std::size_t tdh_fixed_size(unsigned in_type) {
  switch (in_type) {
    case TDH_INTYPE_INT8:
    case TDH_INTYPE_UINT8: return 1;
    case TDH_INTYPE_INT16:
    case TDH_INTYPE_UINT16: return 2;
    case TDH_INTYPE_INT32:
    case TDH_INTYPE_UINT32:
    case TDH_INTYPE_HEXINT32:
    case TDH_INTYPE_FLOAT:
    case TDH_INTYPE_BOOLEAN: return 4;
    case TDH_INTYPE_INT64:
    case TDH_INTYPE_UINT64:
    case TDH_INTYPE_HEXINT64:
    case TDH_INTYPE_DOUBLE:
    case TDH_INTYPE_FILETIME: return 8;
    case TDH_INTYPE_GUID: return 16;
    default: return 0;
  }
}

}  // namespace etwh
