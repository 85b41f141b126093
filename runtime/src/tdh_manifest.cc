// TdhLoadManifest / TdhUnloadManifest and the decoding of manifest events (DecodingSourceXMLFile).
// Loaded manifests are kept per process, by path; an event is looked up by provider GUID, Id
// and Version, the most recently loaded manifest first. Properties are the template's data
// elements in order (a manifest template without structs has only top-level properties).
#include "tdh_manifest.h"

#include "manifest.h"

#include <etwh/utf16.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
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

std::uint32_t read_uint(std::span<const std::byte> payload, std::size_t at, std::size_t size) {
  std::uint32_t v = 0;
  for (std::size_t b = size; b-- > 0;) v = (v << 8) | static_cast<std::uint8_t>(payload[at + b]);
  return v;
}

struct Value {
  std::size_t offset = 0, size = 0;
  std::uint32_t count = 1, length = 0;
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

ULONG locate(const ManifestEvent& ev, std::span<const std::byte> payload, bool pointer32,
             std::vector<Value>& out) {
  std::size_t at = 0;
  auto param = [&](const ManifestParam& p) -> std::uint32_t {
    if (p.kind == ManifestParam::kFixed) return p.value;
    if (p.kind == ManifestParam::kField) {
      const Value& v = out[p.field];
      return read_uint(payload, v.offset, v.size);
    }
    return 1;
  };
  for (const ManifestField& f : ev.fields) {
    Value v;
    v.offset = at;
    v.count = param(f.count);
    v.length = f.length.kind == ManifestParam::kNone ? 0 : param(f.length);
    for (std::uint32_t i = 0; i < v.count; ++i) {
      const std::size_t size = element_size(f, v.length, payload, at, pointer32);
      if (size == SIZE_MAX) return ERROR_EVT_INVALID_EVENT_DATA;
      at += size;
      if (size == 0) break;  // every element has the same length 0: no loop over a huge count
    }
    v.size = at - v.offset;
    out.push_back(v);
  }
  return ERROR_SUCCESS;
}

void fill_property(const ManifestField& f, EVENT_PROPERTY_INFO& out) {
  int flags = 0;
  out.nonStructType.InType = f.in_type;
  out.nonStructType.OutType = f.out_type;
  out.count = 1;
  out.length = static_cast<USHORT>(etwrt::manifest_fixed_size(f.in_type, false));
  if (f.length.kind == ManifestParam::kFixed) {
    flags |= PropertyParamFixedLength;
    out.length = static_cast<USHORT>(f.length.value);
  } else if (f.length.kind == ManifestParam::kField) {
    flags |= PropertyParamLength;
    out.lengthPropertyIndex = static_cast<USHORT>(f.length.field);
  }
  if (f.count.kind == ManifestParam::kFixed) {
    flags |= PropertyParamFixedCount;
    out.count = static_cast<USHORT>(f.count.value);
  } else if (f.count.kind == ManifestParam::kField) {
    flags |= PropertyParamCount;
    out.countPropertyIndex = static_cast<USHORT>(f.count.field);
  }
  out.Flags = static_cast<PROPERTY_FLAGS>(flags);
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

}  // namespace

namespace etwrt::tdh {

ULONG manifest_event_information(const EVENT_RECORD* e, TRACE_EVENT_INFO* buffer, ULONG* size) {
  const auto ev = find_event(e);
  if (ev == nullptr) return ERROR_NOT_FOUND;
  const std::size_t base =
      std::max(sizeof(TRACE_EVENT_INFO), offsetof(TRACE_EVENT_INFO, EventPropertyInfoArray) +
                                             ev->fields.size() * sizeof(EVENT_PROPERTY_INFO));
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
  info->PropertyCount = static_cast<ULONG>(ev->fields.size());
  info->TopLevelPropertyCount = info->PropertyCount;
  for (std::size_t i = 0; i < ev->fields.size(); ++i) {
    EVENT_PROPERTY_INFO& p = info->EventPropertyInfoArray[i];
    fill_property(ev->fields[i], p);
    p.NameOffset = s.add(ev->fields[i].name, true);
  }
  const std::size_t total = base + s.units.size() * sizeof(char16_t);
  if (buffer == nullptr || *size < total) {
    *size = static_cast<ULONG>(total);
    return ERROR_INSUFFICIENT_BUFFER;
  }
  std::memcpy(buffer, out.data(), base);
  std::memcpy(reinterpret_cast<std::byte*>(buffer) + base, s.units.data(),
              s.units.size() * sizeof(char16_t));
  *size = static_cast<ULONG>(total);
  return ERROR_SUCCESS;
}

ULONG manifest_property(const EVENT_RECORD* e, ULONG count, const PROPERTY_DATA_DESCRIPTOR* d,
                        std::span<const std::byte>& out) {
  const auto ev = find_event(e);
  if (ev == nullptr) return ERROR_NOT_FOUND;
  if (count != 1) return ERROR_NOT_FOUND;  // no structs: a member path names nothing
  const std::u16string name = [&] {
    std::u16string n;
    const auto* p = reinterpret_cast<const WCHAR*>(static_cast<std::uintptr_t>(d->PropertyName));
    for (; p != nullptr && *p != 0; ++p) n.push_back(static_cast<char16_t>(*p));
    return n;
  }();
  std::size_t f = 0;
  while (f < ev->fields.size() && etwrt::tdh::utf16(ev->fields[f].name) != name) ++f;
  if (f == ev->fields.size()) return ERROR_NOT_FOUND;
  const auto* data = static_cast<const std::byte*>(e->UserData);
  const std::span<const std::byte> payload(data, data == nullptr ? 0 : e->UserDataLength);
  const bool pointer32 = (e->EventHeader.Flags & EVENT_HEADER_FLAG_32_BIT_HEADER) != 0;
  std::vector<Value> values;
  if (const ULONG s = locate(*ev, payload, pointer32, values); s != ERROR_SUCCESS) return s;
  const ManifestField& field = ev->fields[f];
  const Value& v = values[f];
  const bool counted = field.in_type == TDH_INTYPE_MANIFEST_COUNTEDSTRING ||
                       field.in_type == TDH_INTYPE_MANIFEST_COUNTEDANSISTRING ||
                       field.in_type == TDH_INTYPE_MANIFEST_COUNTEDBINARY;
  const ULONG index = d->ArrayIndex;
  if (index == ~ULONG{0}) {
    out = payload.subspan(v.offset, v.size);
    if (counted && v.count == 1) out = out.subspan(2);
    return ERROR_SUCCESS;
  }
  if (index >= v.count) return ERROR_INVALID_PARAMETER;
  std::size_t at = v.offset;
  for (ULONG i = 0; i < index; ++i) at += element_size(field, v.length, payload, at, pointer32);
  out = payload.subspan(at, element_size(field, v.length, payload, at, pointer32));
  if (counted) out = out.subspan(2);
  return ERROR_SUCCESS;
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

TDHAPI TdhUnloadManifest(PWSTR Manifest) {
  try {
    return unload(Manifest);
  } catch (const std::bad_alloc&) {
    return ERROR_NOT_ENOUGH_MEMORY;
  }
}

}  // extern "C"
