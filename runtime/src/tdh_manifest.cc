// TdhLoadManifest / TdhUnloadManifest and the decoding of manifest events (DecodingSourceXMLFile).
// Loaded manifests are kept per process, by path; an event is looked up by provider GUID, Id
// and Version, the most recently loaded manifest first. Properties are listed as TDH lists
// them: the template's data and struct elements in order, then each struct's members.
#include "tdh_manifest.h"

#include "manifest.h"

#include <etwh/utf16.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <utility>
#include <string>
#include <vector>

namespace {

using etwrt::ManifestEvent;
using etwrt::ManifestField;
using etwrt::ManifestParam;

struct Loaded {
  std::u16string path;
  std::vector<std::shared_ptr<const ManifestEvent>> events;
};

std::mutex g_mutex;
std::vector<Loaded> g_loaded;  // in load order

std::shared_ptr<const ManifestEvent> find_event(const EVENT_RECORD* e) {
  const EVENT_HEADER& h = e->EventHeader;
  std::lock_guard<std::mutex> lock(g_mutex);
  for (auto it = g_loaded.rbegin(); it != g_loaded.rend(); ++it) {
    for (const auto& ev : it->events) {
      if (std::memcmp(&ev->provider, &h.ProviderId, sizeof(GUID)) == 0 &&
          ev->descriptor.Id == h.EventDescriptor.Id &&
          ev->descriptor.Version == h.EventDescriptor.Version) {
        return ev;
      }
    }
  }
  return nullptr;
}

// The path argument: NULL, empty or MAX_PATH units and more is ERROR_INVALID_PARAMETER
// (TdhLoadManifest page).
ULONG path_of(const WCHAR* manifest, std::u16string& units) {
  if (manifest == nullptr) return ERROR_INVALID_PARAMETER;
  for (; *manifest != 0; ++manifest) {
    if (units.size() + 1 >= MAX_PATH) return ERROR_INVALID_PARAMETER;
    units.push_back(static_cast<char16_t>(*manifest));
  }
  return units.empty() ? ERROR_INVALID_PARAMETER : ERROR_SUCCESS;
}

ULONG load(const WCHAR* manifest) {
  std::u16string path;
  if (const ULONG s = path_of(manifest, path); s != ERROR_SUCCESS) return s;
  std::string file;
  if (!etwh::utf16::to_utf8(path, file))
    return ERROR_INVALID_PARAMETER;  // the path for the file system
  std::ifstream in(file, std::ios::binary);
  if (!in) return ERROR_FILE_NOT_FOUND;
  std::ostringstream text;
  text << in.rdbuf();
  etwrt::ManifestParseResult parsed = etwrt::parse_manifest(text.str());
  if (!parsed.ok) return ERROR_XML_PARSE_ERROR;
  Loaded loaded{path, {}};
  for (ManifestEvent& e : parsed.events) {
    loaded.events.push_back(std::make_shared<const ManifestEvent>(std::move(e)));
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  std::erase_if(g_loaded, [&](const Loaded& l) { return l.path == path; });
  g_loaded.push_back(std::move(loaded));
  return ERROR_SUCCESS;
}

ULONG unload(const WCHAR* manifest) {
  std::u16string path;
  if (const ULONG s = path_of(manifest, path); s != ERROR_SUCCESS) return s;
  std::lock_guard<std::mutex> lock(g_mutex);
  return std::erase_if(g_loaded, [&](const Loaded& l) { return l.path == path; }) > 0
             ? ERROR_SUCCESS
             : ERROR_FILE_NOT_FOUND;
}

// TdhEnumerateProviders over the loaded manifests: each provider GUID once, in load order.
ULONG enumerate_providers(PPROVIDER_ENUMERATION_INFO buffer, ULONG* size) {
  if (size == nullptr) return ERROR_INVALID_PARAMETER;
  std::vector<std::pair<GUID, std::u16string>> providers;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    for (const Loaded& l : g_loaded) {
      for (const auto& ev : l.events) {
        const bool known = std::any_of(providers.begin(), providers.end(), [&](const auto& p) {
          return std::memcmp(&p.first, &ev->provider, sizeof(GUID)) == 0;
        });
        if (!known) providers.emplace_back(ev->provider, etwrt::tdh::utf16(ev->provider_name));
      }
    }
  }
  const std::size_t array_at = offsetof(PROVIDER_ENUMERATION_INFO, TraceProviderInfoArray);
  std::size_t total = array_at + providers.size() * sizeof(TRACE_PROVIDER_INFO);
  for (const auto& p : providers) total += (p.second.size() + 1) * sizeof(char16_t);
  if (total > ULONG_MAX) return ERROR_NOT_ENOUGH_MEMORY;
  if (buffer == nullptr || *size < total) {
    *size = static_cast<ULONG>(total);
    return ERROR_INSUFFICIENT_BUFFER;
  }
  std::byte* out = reinterpret_cast<std::byte*>(buffer);
  std::memset(out, 0, total);
  buffer->NumberOfProviders = static_cast<ULONG>(providers.size());
  std::size_t name_at = array_at + providers.size() * sizeof(TRACE_PROVIDER_INFO);
  for (std::size_t i = 0; i < providers.size(); ++i) {
    TRACE_PROVIDER_INFO info{};
    info.ProviderGuid = providers[i].first;
    info.SchemaSource = 0;
    info.ProviderNameOffset = static_cast<ULONG>(name_at);
    std::memcpy(out + array_at + i * sizeof info, &info, sizeof info);
    const std::u16string& name = providers[i].second;
    std::memcpy(out + name_at, name.c_str(), (name.size() + 1) * sizeof(char16_t));
    name_at += (name.size() + 1) * sizeof(char16_t);
  }
  *size = static_cast<ULONG>(total);
  return ERROR_SUCCESS;
}

std::uint32_t read_uint(std::span<const std::byte> payload, std::size_t at, std::size_t size) {
  std::uint32_t v = 0;
  for (std::size_t b = size; b-- > 0;) v = (v << 8) | static_cast<std::uint8_t>(payload[at + b]);
  return v;
}

// Where a field's value lies in the payload. A struct's value has, per element, its span and
// its members' values.
struct Value {
  std::size_t offset = 0, size = 0;
  std::uint32_t count = 1, length = 0;
  std::vector<std::pair<std::size_t, std::size_t>> element_spans;  // struct: offset, size
  std::vector<std::vector<Value>> elements;                        // struct: members' values
};

// Bytes of one element of `f` at `at`, SIZE_MAX when the payload ends inside it.
std::size_t element_size(const ManifestField& f, std::uint32_t length,
                         std::span<const std::byte> payload, std::size_t at, bool pointer32) {
  const std::size_t left = payload.size() - std::min(at, payload.size());
  std::size_t size = etwrt::manifest_fixed_size(f.in_type, pointer32);
  const bool has_length = f.length.kind != ManifestParam::kNone;
  if (size == 0) {
    switch (f.in_type) {
      case TDH_INTYPE_UNICODESTRING:
      case TDH_INTYPE_ANSISTRING: {
        const std::size_t unit = f.in_type == TDH_INTYPE_UNICODESTRING ? 2 : 1;
        if (has_length) {
          size = std::size_t{length} * unit;
          break;
        }
        for (std::size_t i = 0; i + unit <= left; i += unit) {  // through the NUL
          if (read_uint(payload, at + i, unit) == 0) return i + unit;
        }
        return SIZE_MAX;
      }
      case TDH_INTYPE_BINARY: size = length; break;
      case TDH_INTYPE_MANIFEST_COUNTEDSTRING:
      case TDH_INTYPE_MANIFEST_COUNTEDANSISTRING:
      case TDH_INTYPE_MANIFEST_COUNTEDBINARY:
        if (left < 2) return SIZE_MAX;
        size = 2 + read_uint(payload, at, 2);
        break;
      case TDH_INTYPE_SID:  // revision, sub-authority count, 6-byte authority, sub-authorities
        if (left < 2) return SIZE_MAX;
        size = 8 + 4 * static_cast<std::size_t>(static_cast<std::uint8_t>(payload[at + 1]));
        break;
      default: return SIZE_MAX;
    }
  }
  return size <= left ? size : SIZE_MAX;
}

// Locates the fields of one scope (the template, or one element of a struct) from `at` on.
ULONG locate(const std::vector<ManifestField>& fields, std::span<const std::byte> payload,
             bool pointer32, std::size_t& at, std::vector<Value>& out) {
  auto param = [&](const ManifestParam& p) -> std::uint32_t {
    if (p.kind == ManifestParam::kFixed) return p.value;
    if (p.kind == ManifestParam::kField) {
      const Value& v = out[p.field];
      return read_uint(payload, v.offset, v.size);
    }
    return 1;
  };
  for (const ManifestField& f : fields) {
    Value v;
    v.offset = at;
    v.count = param(f.count);
    v.length = f.length.kind == ManifestParam::kNone ? 0 : param(f.length);
    for (std::uint32_t i = 0; i < v.count; ++i) {
      const std::size_t start = at;
      if (f.is_struct) {
        v.elements.emplace_back();
        if (const ULONG s = locate(f.members, payload, pointer32, at, v.elements.back());
            s != ERROR_SUCCESS) {
          return s;
        }
        v.element_spans.emplace_back(start, at - start);
      } else {
        const std::size_t size = element_size(f, v.length, payload, at, pointer32);
        if (size == SIZE_MAX) return ERROR_EVT_INVALID_EVENT_DATA;
        at += size;
      }
      if (at == start) break;  // every element is empty: no loop over a huge count
    }
    v.size = at - v.offset;
    out.push_back(std::move(v));
  }
  return ERROR_SUCCESS;
}

// The properties as TDH lists them: the template's fields, then each struct's members.
struct Flat {
  const ManifestField* field;
  std::size_t scope_start;  // index of the first property of the field's scope
  std::size_t members = 0;  // a struct: index of its first member
};

std::vector<Flat> flatten(const std::vector<ManifestField>& fields) {
  std::vector<Flat> out;
  for (const ManifestField& f : fields) out.push_back({&f, 0});
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (!fields[i].is_struct) continue;
    out[i].members = out.size();
    for (const ManifestField& m : fields[i].members) out.push_back({&m, out[i].members});
  }
  return out;
}

// NUL-terminated UTF-16 strings after the fixed part; offsets from the structure's start.
struct Strings {
  std::size_t base;
  std::vector<char16_t> units;
  ULONG add(const std::string& s, bool keep_empty = false) {
    if (s.empty() && !keep_empty) return 0;
    const ULONG offset = static_cast<ULONG>(base + units.size() * sizeof(char16_t));
    const std::u16string u = etwrt::tdh::utf16(s);
    units.insert(units.end(), u.begin(), u.end());
    units.push_back(0);
    return offset;
  }
};

// A length or count parameter of a field: a fixed number (`fixed_flag`, the number in `value`)
// or another field's value (`field_flag`, that field's index in `index`); its flag, 0 for none.
int param(const ManifestParam& m, std::size_t scope_start, int fixed_flag, int field_flag,
          USHORT& value, USHORT& index) {
  if (m.kind == ManifestParam::kFixed) {
    value = static_cast<USHORT>(m.value);
    return fixed_flag;
  }
  if (m.kind == ManifestParam::kField) {
    index = static_cast<USHORT>(scope_start + m.field);
    return field_flag;
  }
  return 0;
}

void fill_property(const Flat& p, Strings& strings, EVENT_PROPERTY_INFO& out) {
  const ManifestField& f = *p.field;
  int flags = 0;
  out.count = 1;
  if (f.is_struct) {
    flags |= PropertyStruct;
    out.structType.StructStartIndex = static_cast<USHORT>(p.members);
    out.structType.NumOfStructMembers = static_cast<USHORT>(f.members.size());
  } else {
    out.nonStructType.InType = f.in_type;
    out.nonStructType.OutType = f.out_type;
    out.nonStructType.MapNameOffset = strings.add(f.map);
    out.length = static_cast<USHORT>(etwrt::manifest_fixed_size(f.in_type, false));
  }
  flags |= param(f.length, p.scope_start, PropertyParamFixedLength, PropertyParamLength, out.length,
                 out.lengthPropertyIndex);
  flags |= param(f.count, p.scope_start, PropertyParamFixedCount, PropertyParamCount, out.count,
                 out.countPropertyIndex);
  out.Flags = static_cast<PROPERTY_FLAGS>(flags);
  out.NameOffset = strings.add(f.name, true);
}

std::u16string name_at(ULONGLONG pointer) {
  std::u16string n;
  const auto* p = reinterpret_cast<const WCHAR*>(static_cast<std::uintptr_t>(pointer));
  for (; p != nullptr && *p != 0; ++p) n.push_back(static_cast<char16_t>(*p));
  return n;
}

std::size_t field_named(const std::vector<ManifestField>& fields, const std::u16string& name) {
  std::size_t f = 0;
  while (f < fields.size() && etwrt::tdh::utf16(fields[f].name) != name) ++f;
  return f;
}

// The bytes of value `v` of data field `f`: element `index`, or all of it (~0).
ULONG value_bytes(const ManifestField& f, const Value& v, ULONG index,
                  std::span<const std::byte> payload, bool pointer32,
                  std::span<const std::byte>& out) {
  const bool counted = f.in_type == TDH_INTYPE_MANIFEST_COUNTEDSTRING ||
                       f.in_type == TDH_INTYPE_MANIFEST_COUNTEDANSISTRING ||
                       f.in_type == TDH_INTYPE_MANIFEST_COUNTEDBINARY;
  if (f.is_struct) {
    if (index == ~ULONG{0}) {
      out = payload.subspan(v.offset, v.size);
    } else if (index >= v.count) {
      return ERROR_INVALID_PARAMETER;
    } else {
      const auto& span = v.element_spans[std::min<std::size_t>(index, v.elements.size() - 1)];
      out = payload.subspan(span.first, span.second);
    }
    return ERROR_SUCCESS;
  }
  if (index == ~ULONG{0}) {
    out = payload.subspan(v.offset, v.size);
    if (counted && v.count == 1) out = out.subspan(2);
    return ERROR_SUCCESS;
  }
  if (index >= v.count) return ERROR_INVALID_PARAMETER;
  std::size_t at = v.offset;
  for (ULONG i = 0; i < index; ++i) at += element_size(f, v.length, payload, at, pointer32);
  out = payload.subspan(at, element_size(f, v.length, payload, at, pointer32));
  if (counted) out = out.subspan(2);
  return ERROR_SUCCESS;
}

}  // namespace

namespace etwrt::tdh {

ULONG manifest_event_information(const EVENT_RECORD* e, TRACE_EVENT_INFO* buffer, ULONG* size) {
  const auto ev = find_event(e);
  if (ev == nullptr) return ERROR_NOT_FOUND;
  const std::vector<Flat> props = flatten(ev->fields);
  const std::size_t base =
      std::max(sizeof(TRACE_EVENT_INFO), offsetof(TRACE_EVENT_INFO, EventPropertyInfoArray) +
                                             props.size() * sizeof(EVENT_PROPERTY_INFO));
  std::vector<std::byte> out(base);
  auto* info = reinterpret_cast<TRACE_EVENT_INFO*>(out.data());
  Strings s{base, {}};
  info->ProviderGuid = e->EventHeader.ProviderId;
  info->EventDescriptor = e->EventHeader.EventDescriptor;
  info->DecodingSource = DecodingSourceXMLFile;
  info->ProviderNameOffset = s.add(ev->provider_name);
  info->LevelNameOffset = s.add(ev->level_name);
  info->ChannelNameOffset = s.add(ev->channel_name);
  if (!ev->keyword_names.empty()) {  // a list of strings ended by two NULs (TRACE_EVENT_INFO)
    info->KeywordsNameOffset = s.add(ev->keyword_names.front());
    for (std::size_t k = 1; k < ev->keyword_names.size(); ++k) s.add(ev->keyword_names[k]);
    s.units.push_back(0);
  }
  info->TaskNameOffset = s.add(ev->task_name);
  info->OpcodeNameOffset = s.add(ev->opcode_name);
  info->EventMessageOffset = s.add(ev->message);
  info->EventNameOffset = s.add(ev->event_name);
  info->PropertyCount = static_cast<ULONG>(props.size());
  info->TopLevelPropertyCount = static_cast<ULONG>(ev->fields.size());
  for (std::size_t i = 0; i < props.size(); ++i) {
    fill_property(props[i], s, info->EventPropertyInfoArray[i]);
  }
  return copy_out(out, s.units, buffer, size);
}

// One descriptor names a template field; two name a struct (its ArrayIndex the element, ~0
// the first) and one of its members (TdhGetProperty page: PROPERTY_DATA_DESCRIPTOR array).
ULONG manifest_property(const EVENT_RECORD* e, ULONG count, const PROPERTY_DATA_DESCRIPTOR* d,
                        std::span<const std::byte>& out) {
  const auto ev = find_event(e);
  if (ev == nullptr) return ERROR_NOT_FOUND;
  if (count > 2) return ERROR_NOT_FOUND;  // no struct inside a struct
  const std::size_t f = field_named(ev->fields, name_at(d[0].PropertyName));
  if (f == ev->fields.size()) return ERROR_NOT_FOUND;
  const auto* data = static_cast<const std::byte*>(e->UserData);
  const std::span<const std::byte> payload(data, data == nullptr ? 0 : e->UserDataLength);
  const bool pointer32 = (e->EventHeader.Flags & EVENT_HEADER_FLAG_32_BIT_HEADER) != 0;
  std::vector<Value> values;
  std::size_t at = 0;
  if (const ULONG s = locate(ev->fields, payload, pointer32, at, values); s != ERROR_SUCCESS) {
    return s;
  }
  const ManifestField& field = ev->fields[f];
  if (count == 1) return value_bytes(field, values[f], d[0].ArrayIndex, payload, pointer32, out);
  if (!field.is_struct) return ERROR_NOT_FOUND;
  const std::size_t m = field_named(field.members, name_at(d[1].PropertyName));
  if (m == field.members.size()) return ERROR_NOT_FOUND;
  const ULONG element = d[0].ArrayIndex == ~ULONG{0} ? 0 : d[0].ArrayIndex;
  const Value& v = values[f];
  if (element >= v.count || v.elements.empty()) return ERROR_INVALID_PARAMETER;
  const auto& members = v.elements[std::min<std::size_t>(element, v.elements.size() - 1)];
  return value_bytes(field.members[m], members[m], d[1].ArrayIndex, payload, pointer32, out);
}

// EVENT_MAP_INFO of the map `name` of the event's provider: entries in manifest order, each
// text followed by a space (TdhGetEventMapInformation page: "Monday " for "Monday").
ULONG manifest_map_information(const EVENT_RECORD* e, const std::u16string& name,
                               EVENT_MAP_INFO* buffer, ULONG* size) {
  const auto ev = find_event(e);
  if (ev == nullptr) return ERROR_NOT_FOUND;
  const auto map = std::find_if(ev->maps.begin(), ev->maps.end(),
                                [&](const auto& m) { return etwrt::tdh::utf16(m.name) == name; });
  if (map == ev->maps.end()) return ERROR_NOT_FOUND;
  const std::size_t base =
      std::max(sizeof(EVENT_MAP_INFO), offsetof(EVENT_MAP_INFO, MapEntryArray) +
                                           map->entries.size() * sizeof(EVENT_MAP_ENTRY));
  std::vector<std::byte> out(base);
  auto* info = reinterpret_cast<EVENT_MAP_INFO*>(out.data());
  Strings s{base, {}};
  info->NameOffset = s.add(map->name, true);
  info->Flag =
      map->bitmap ? EVENTMAP_INFO_FLAG_MANIFEST_BITMAP : EVENTMAP_INFO_FLAG_MANIFEST_VALUEMAP;
  info->EntryCount = static_cast<ULONG>(map->entries.size());
  info->MapEntryValueType = EVENTMAP_ENTRY_VALUETYPE_ULONG;
  for (std::size_t i = 0; i < map->entries.size(); ++i) {
    info->MapEntryArray[i].Value = map->entries[i].first;
    info->MapEntryArray[i].OutputOffset = s.add(map->entries[i].second + " ", true);
  }
  return copy_out(out, s.units, buffer, size);
}

}  // namespace etwrt::tdh

extern "C" {

TDHAPI TdhLoadManifest(PWSTR Manifest) {
  try {
    return load(Manifest);
  } catch (const std::bad_alloc&) {
    return ERROR_NOT_ENOUGH_MEMORY;
  }
}

TDHAPI TdhEnumerateProviders(PPROVIDER_ENUMERATION_INFO pBuffer, ULONG* pBufferSize) {
  try {
    return enumerate_providers(pBuffer, pBufferSize);
  } catch (const std::bad_alloc&) {
    return ERROR_NOT_ENOUGH_MEMORY;
  }
}

// etwrt reads no PE resources: a binary that exists holds no metadata it can read
// (ERROR_RESOURCE_NOT_FOUND, the page's "does not contain any eventing metadata resources").
TDHAPI TdhLoadManifestFromBinary(PWSTR BinaryPath) {
  try {
    std::u16string path;
    if (const ULONG s = path_of(BinaryPath, path); s != ERROR_SUCCESS) return s;
    std::string file;
    if (!etwh::utf16::to_utf8(path, file)) return ERROR_INVALID_PARAMETER;
    if (!std::ifstream(file, std::ios::binary)) return ERROR_FILE_NOT_FOUND;
    return ERROR_RESOURCE_NOT_FOUND;
  } catch (const std::bad_alloc&) {
    return ERROR_NOT_ENOUGH_MEMORY;
  }
}

TDHAPI TdhUnloadManifest(PWSTR Manifest) {
  try {
    return unload(Manifest);
  } catch (const std::bad_alloc&) {
    return ERROR_NOT_ENOUGH_MEMORY;
  }
}

}  // extern "C"
