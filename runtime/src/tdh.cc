// etwrt's tdh.h subset: TraceLogging events decoded from their EVENT_SCHEMA_TL item; events
// without one are looked up in the loaded manifests (tdh_manifest.cc).
// TDH's conventions kept: top-level properties first, then each struct's members contiguous;
// a TlgInBINARY field is two properties, "<name>.Length" (UINT16) and the bytes, which points
// at it with PropertyParamLength. etwrt choices (docs/etwrt/conformance.md, "TraceLogging"): a
// variable-count array likewise gets a "<name>.Count" property (PropertyParamCount); counted
// strings and binaries are returned without their UINT16 count; the event name is at
// EventNameOffset and at TaskNameOffset.
#include "manifest.h"
#include "tdh_manifest.h"
#include "tracelogging.h"
#include "traits.h"

#include <windows.h>
#include <tdh.h>

#include <etwh/utf16.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstring>
#include <deque>
#include <new>
#include <span>
#include <string>
#include <vector>

namespace etwrt::tdh {

std::u16string utf16(const std::string& text) {
  std::u16string out;
  for (std::size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const int extra = lead < 0x80 ? 0 : lead < 0xE0 ? 1 : lead < 0xF0 ? 2 : 3;
    char32_t c = extra == 0 ? lead : lead & (0x3F >> extra);
    for (int k = 1; k <= extra && i + k < text.size(); ++k)
      c = (c << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    i += static_cast<std::size_t>(extra) + 1;
    etwh::utf16::append_utf16(out, c);
  }
  return out;
}

ULONG copy_out(std::span<const std::byte> fixed, std::span<const char16_t> strings, void* buffer,
               ULONG* size) {
  const std::size_t total = fixed.size() + strings.size_bytes();
  if (buffer == nullptr || *size < total) {
    *size = static_cast<ULONG>(total);
    return ERROR_INSUFFICIENT_BUFFER;
  }
  auto* bytes = static_cast<std::byte*>(buffer);
  std::memcpy(bytes, fixed.data(), fixed.size());
  if (!strings.empty()) std::memcpy(bytes + fixed.size(), strings.data(), strings.size_bytes());
  *size = static_cast<ULONG>(total);
  return ERROR_SUCCESS;
}

}  // namespace etwrt::tdh

namespace {

using etwrt::TlEventSchema;
using etwrt::TlField;
using etwrt::TlValue;
using etwrt::tdh::utf16;

enum class Synth { none, length, count };

struct Property {
  std::u16string name;
  std::size_t field = 0;  // the TraceLogging field it shows (or whose length/count it is)
  Synth synth = Synth::none;
  std::size_t parent = SIZE_MAX;  // the struct property it belongs to (model index)
  std::vector<std::size_t> members;
  std::size_t index = 0;  // in EventPropertyInfoArray
};

// An event's schema as TDH shows it.
struct Model {
  TlEventSchema schema;
  std::vector<Property> props;
  std::vector<std::size_t> order;  // model indices by EventPropertyInfoArray index
  std::size_t top_level = 0;
};

const std::byte* schema_item(const EVENT_RECORD* e, std::size_t& size) {
  for (USHORT i = 0; i < e->ExtendedDataCount; ++i) {
    const EVENT_HEADER_EXTENDED_DATA_ITEM& item = e->ExtendedData[i];
    if (item.ExtType == EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL) {
      size = item.DataSize;
      return reinterpret_cast<const std::byte*>(static_cast<std::uintptr_t>(item.DataPtr));
    }
  }
  return nullptr;
}

std::string provider_name(const EVENT_RECORD* e) {
  for (USHORT i = 0; i < e->ExtendedDataCount; ++i) {
    const EVENT_HEADER_EXTENDED_DATA_ITEM& item = e->ExtendedData[i];
    if (item.ExtType != EVENT_HEADER_EXT_TYPE_PROV_TRAITS) continue;
    const etwrt::TraitsParseResult t = etwrt::parse_traits(
        reinterpret_cast<const void*>(static_cast<std::uintptr_t>(item.DataPtr)), item.DataSize);
    if (t.ok) return t.traits.name;
  }
  return {};
}

// Lays properties out as TDH does: the top level first, then each struct's members.
void lay_out(Model& m) {
  std::deque<std::vector<std::size_t>> levels;
  std::vector<std::size_t> top;
  for (std::size_t i = 0; i < m.props.size(); ++i) {
    if (m.props[i].parent == SIZE_MAX) top.push_back(i);
  }
  m.top_level = top.size();
  levels.push_back(top);
  while (!levels.empty()) {
    for (std::size_t i : levels.front()) {
      m.props[i].index = m.order.size();
      m.order.push_back(i);
    }
    for (std::size_t i : levels.front()) {
      if (!m.props[i].members.empty()) levels.push_back(m.props[i].members);
    }
    levels.pop_front();
  }
}

// ERROR_NOT_FOUND without a schema item, ERROR_INVALID_DATA when it is malformed.
ULONG build_model(const EVENT_RECORD* e, Model& m) {
  std::size_t size = 0;
  const std::byte* item = schema_item(e, size);
  if (item == nullptr) return ERROR_NOT_FOUND;
  etwrt::TlParseResult parsed = etwrt::parse_event_metadata(std::span(item, size));
  if (!parsed.ok) return ERROR_INVALID_DATA;
  m.schema = std::move(parsed.schema);
  std::vector<std::size_t> prop_of_field(m.schema.fields.size());
  for (std::size_t f = 0; f < m.schema.fields.size(); ++f) {
    const TlField& field = m.schema.fields[f];
    const std::size_t parent = field.parent == SIZE_MAX ? SIZE_MAX : prop_of_field[field.parent];
    auto add = [&](std::u16string name, Synth synth) {
      Property p;
      p.name = std::move(name);
      p.field = f;
      p.synth = synth;
      p.parent = parent;
      m.props.push_back(std::move(p));
      if (parent != SIZE_MAX) m.props[parent].members.push_back(m.props.size() - 1);
    };
    if (field.in_type == etwrt::kTlBinary && field.count_kind == 0)
      add(utf16(field.name + ".Length"), Synth::length);
    if (field.count_kind == etwrt::kTlVariableCount)
      add(utf16(field.name + ".Count"), Synth::count);
    add(utf16(field.name), Synth::none);
    prop_of_field[f] = m.props.size() - 1;
  }
  lay_out(m);
  return ERROR_SUCCESS;
}

void fill_property(const Model& m, const Property& p, EVENT_PROPERTY_INFO& out) {
  const TlField& f = m.schema.fields[p.field];
  int flags = 0;
  if (p.synth != Synth::none) {
    out.nonStructType.InType = TDH_INTYPE_UINT16;
    out.count = 1;
    out.length = 2;
  } else if (f.in_type == etwrt::kTlStruct) {
    flags |= PropertyStruct;
    out.structType.StructStartIndex =
        static_cast<USHORT>(p.members.empty() ? 0 : m.props[p.members.front()].index);
    out.structType.NumOfStructMembers = static_cast<USHORT>(p.members.size());
    out.count = 1;
  } else {
    out.nonStructType.InType = f.in_type;
    out.nonStructType.OutType = f.out_type;
    out.count = 1;
    // EVENT_PROPERTY_INFO page: the size in bytes, 0 for variable-sized types.
    out.length = static_cast<USHORT>(etwrt::manifest_fixed_size(f.in_type, false));
    if (f.count_kind == etwrt::kTlConstantCount) {
      flags |= PropertyParamFixedCount;
      out.count = f.constant_count;
    } else if (f.count_kind == etwrt::kTlVariableCount) {
      flags |= PropertyParamCount;
      out.countPropertyIndex = static_cast<USHORT>(p.index - 1);
    } else if (f.count_kind == etwrt::kTlCustom) {
      flags |= PropertyHasCustomSchema;
    }
    if (f.in_type == etwrt::kTlBinary && f.count_kind == 0) {
      flags |= PropertyParamLength;
      out.lengthPropertyIndex = static_cast<USHORT>(p.index - 1);
    }
  }
  if (p.synth == Synth::none && f.tags != 0) {
    flags |= PropertyHasTags;
    out.Tags = f.tags & 0x0FFFFFFF;
  }
  out.Flags = static_cast<PROPERTY_FLAGS>(flags);
}

// Appends a NUL-terminated UTF-16 string to `strings`; its offset from the structure's start.
ULONG add_string(std::vector<char16_t>& strings, std::size_t base, const std::u16string& s) {
  const ULONG offset = static_cast<ULONG>(base + strings.size() * sizeof(char16_t));
  strings.insert(strings.end(), s.begin(), s.end());
  strings.push_back(0);
  return offset;
}

ULONG event_information(const EVENT_RECORD* e, TRACE_EVENT_INFO* buffer, ULONG* size) {
  Model m;
  if (const ULONG s = build_model(e, m); s != ERROR_SUCCESS) {
    return s == ERROR_NOT_FOUND ? etwrt::tdh::manifest_event_information(e, buffer, size) : s;
  }
  const std::size_t base =
      std::max(sizeof(TRACE_EVENT_INFO), offsetof(TRACE_EVENT_INFO, EventPropertyInfoArray) +
                                             m.props.size() * sizeof(EVENT_PROPERTY_INFO));
  std::vector<std::byte> out(base);
  auto* info = reinterpret_cast<TRACE_EVENT_INFO*>(out.data());
  std::vector<char16_t> strings;
  info->ProviderGuid = e->EventHeader.ProviderId;
  info->EventDescriptor = e->EventHeader.EventDescriptor;
  info->DecodingSource = DecodingSourceTlg;
  const std::string provider = provider_name(e);
  if (!provider.empty()) info->ProviderNameOffset = add_string(strings, base, utf16(provider));
  info->EventNameOffset = add_string(strings, base, utf16(m.schema.name));
  info->TaskNameOffset = info->EventNameOffset;
  info->PropertyCount = static_cast<ULONG>(m.props.size());
  info->TopLevelPropertyCount = static_cast<ULONG>(m.top_level);
  info->Tags = m.schema.tags & 0x0FFFFFFF;
  for (std::size_t i = 0; i < m.order.size(); ++i) {
    const Property& p = m.props[m.order[i]];
    EVENT_PROPERTY_INFO& epi = info->EventPropertyInfoArray[i];
    fill_property(m, p, epi);
    epi.NameOffset = add_string(strings, base, p.name);
  }
  return etwrt::tdh::copy_out(out, strings, buffer, size);
}

std::u16string name_at(ULONGLONG pointer) {
  const auto* p = reinterpret_cast<const WCHAR*>(static_cast<std::uintptr_t>(pointer));
  std::u16string s;
  if (p == nullptr) return s;
  for (; *p != 0; ++p) s.push_back(static_cast<char16_t>(*p));
  return s;
}

// The property a descriptor list names: a top-level one, or a struct's member.
const Property* find_property(const Model& m, ULONG count, const PROPERTY_DATA_DESCRIPTOR* d) {
  const Property* found = nullptr;
  std::size_t parent = SIZE_MAX;
  for (ULONG level = 0; level < count; ++level) {
    const std::u16string name = name_at(d[level].PropertyName);
    found = nullptr;
    for (std::size_t i = 0; i < m.props.size(); ++i) {
      if (m.props[i].parent == parent && m.props[i].name == name) {
        found = &m.props[i];
        parent = i;
        break;
      }
    }
    if (found == nullptr) return nullptr;
  }
  return found;
}

// The bytes of `p` (element `index` of an array, or all of it) within the payload.
ULONG property_bytes(const Model& m, const Property& p, ULONG index,
                     std::span<const std::byte> payload, std::span<const std::byte>& out) {
  std::vector<TlValue> values;
  std::string error;
  if (!etwrt::locate_values(m.schema, payload, values, error)) return ERROR_EVT_INVALID_EVENT_DATA;
  const TlField& f = m.schema.fields[p.field];
  const TlValue& v = values[p.field];
  if (p.synth != Synth::none) {
    out = payload.subspan(v.offset, 2);
    return ERROR_SUCCESS;
  }
  if (f.in_type == etwrt::kTlStruct) return ERROR_NOT_SUPPORTED;
  const bool counted = f.in_type == etwrt::kTlBinary || f.in_type == etwrt::kTlCountedString ||
                       f.in_type == etwrt::kTlCountedAnsiString ||
                       f.in_type == etwrt::kTlCountedBinary;
  std::size_t at = v.offset + v.count_size;
  if (f.count_kind == etwrt::kTlCustom || index == ~ULONG{0}) {
    out = payload.subspan(at, v.size - v.count_size);
    if (f.count_kind == 0 && counted) out = out.subspan(2);
    return ERROR_SUCCESS;
  }
  if (index >= v.count) return ERROR_INVALID_PARAMETER;
  for (ULONG i = 0; i < index; ++i) at += etwrt::tl_value_size(f.in_type, payload, at);
  out = payload.subspan(at, etwrt::tl_value_size(f.in_type, payload, at));
  if (counted) out = out.subspan(2);
  return ERROR_SUCCESS;
}

ULONG property(const EVENT_RECORD* e, ULONG count, const PROPERTY_DATA_DESCRIPTOR* d,
               std::span<const std::byte>& out) {
  if (e == nullptr || count == 0 || d == nullptr) return ERROR_INVALID_PARAMETER;
  Model m;
  if (const ULONG s = build_model(e, m); s != ERROR_SUCCESS) {
    return s == ERROR_NOT_FOUND ? etwrt::tdh::manifest_property(e, count, d, out) : s;
  }
  const Property* p = find_property(m, count, d);
  if (p == nullptr) return ERROR_NOT_FOUND;
  const auto* data = static_cast<const std::byte*>(e->UserData);
  return property_bytes(m, *p, d[count - 1].ArrayIndex,
                        std::span<const std::byte>(data, e->UserDataLength), out);
}

template <typename F>
ULONG guarded(F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return ERROR_NOT_ENOUGH_MEMORY;
  }
}

}  // namespace

extern "C" {

TDHAPI TdhGetEventInformation(PEVENT_RECORD Event, ULONG, PTDH_CONTEXT, PTRACE_EVENT_INFO Buffer,
                              PULONG BufferSize) {
  if (Event == nullptr || BufferSize == nullptr) return ERROR_INVALID_PARAMETER;
  return guarded([&]() -> ULONG { return event_information(Event, Buffer, BufferSize); });
}

TDHAPI TdhGetPropertySize(PEVENT_RECORD pEvent, ULONG, PTDH_CONTEXT, ULONG PropertyDataCount,
                          PPROPERTY_DATA_DESCRIPTOR pPropertyData, ULONG* pPropertySize) {
  if (pPropertySize == nullptr) return ERROR_INVALID_PARAMETER;
  return guarded([&]() -> ULONG {
    std::span<const std::byte> bytes;
    const ULONG s = property(pEvent, PropertyDataCount, pPropertyData, bytes);
    if (s == ERROR_SUCCESS) *pPropertySize = static_cast<ULONG>(bytes.size());
    return s;
  });
}

TDHAPI TdhGetEventMapInformation(PEVENT_RECORD pEvent, PWSTR pMapName, PEVENT_MAP_INFO pBuffer,
                                 ULONG* pBufferSize) {
  if (pEvent == nullptr || pMapName == nullptr || pBufferSize == nullptr)
    return ERROR_INVALID_PARAMETER;
  return guarded([&]() -> ULONG {
    return etwrt::tdh::manifest_map_information(
        pEvent, name_at(reinterpret_cast<std::uintptr_t>(pMapName)), pBuffer, pBufferSize);
  });
}

TDHAPI TdhGetProperty(PEVENT_RECORD pEvent, ULONG, PTDH_CONTEXT, ULONG PropertyDataCount,
                      PPROPERTY_DATA_DESCRIPTOR pPropertyData, ULONG BufferSize, PBYTE pBuffer) {
  if (pBuffer == nullptr) return ERROR_INVALID_PARAMETER;
  return guarded([&]() -> ULONG {
    std::span<const std::byte> bytes;
    const ULONG s = property(pEvent, PropertyDataCount, pPropertyData, bytes);
    if (s != ERROR_SUCCESS) return s;
    if (BufferSize < bytes.size()) return ERROR_INSUFFICIENT_BUFFER;
    if (!bytes.empty()) std::memcpy(pBuffer, bytes.data(), bytes.size());
    return ERROR_SUCCESS;
  });
}

}  // extern "C"
