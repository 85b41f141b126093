// etwrt: instrumentation manifests (the XML mc.exe compiles; EventManifest schema pages of
// win32 desktop-src) read for tdh.h's TdhLoadManifest. What TDH needs of each event: its
// provider, descriptor, the names of its level, channel, task, opcode and keywords, its message
// and its template's fields (the data elements, with their length and count).
#pragma once

#include <windows.h>
#include <evntprov.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace etwrt {

// A data element's length or count: absent, a number, or the value of an earlier field.
struct ManifestParam {
  enum Kind { kNone, kFixed, kField } kind = kNone;
  std::uint32_t value = 0;  // kFixed: the number
  std::size_t field = 0;    // kField: index of the field in the template
};

// A <data> element, or a <struct> (is_struct, with its data members; a member's length or
// count names an earlier member of the same struct).
struct ManifestField {
  std::string name;
  std::uint16_t in_type = 0;   // TDH_INTYPE_*
  std::uint16_t out_type = 0;  // TDH_OUTTYPE_*, 0 when the manifest gives none
  ManifestParam length;        // characters of a string, bytes of a binary
  ManifestParam count;         // array elements
  std::string map;             // the valueMap or bitMap named by map="...", empty for none
  bool is_struct = false;
  std::vector<ManifestField> members;
};

// A provider's <valueMap> or <bitMap>: values and their message text, in manifest order.
struct ManifestMap {
  std::string name;
  bool bitmap = false;
  std::vector<std::pair<std::uint32_t, std::string>> entries;
};

struct ManifestEvent {
  GUID provider{};
  std::string provider_name;
  EVENT_DESCRIPTOR descriptor{};
  // Empty when the manifest gives none (TDH then has a zero offset).
  std::string event_name, level_name, channel_name, task_name, opcode_name, message;
  std::vector<std::string> keyword_names;
  std::vector<ManifestField> fields;
  std::vector<ManifestMap> maps;  // the provider's maps
};

struct ManifestParseResult {
  bool ok = false;
  std::string error;  // "line:col: reason" when not ok
  std::vector<ManifestEvent> events;
};

// Parses a manifest's text. Fails on XML that does not parse, a root other than
// instrumentationManifest, a reference to a level, task, opcode, keyword, channel or template
// the manifest does not define, an unknown inType or outType, a length or count naming no
// earlier integer field, a map="..." naming no map of the provider, and what etwrt does not
// decode (a template element other than data and struct, a struct inside a struct).
ManifestParseResult parse_manifest(const std::string& text);

// Bytes of one value of a fixed-size in-type (a pointer: 4 or 8), 0 for a variable one.
std::size_t manifest_fixed_size(std::uint16_t in_type, bool pointer32);

}  // namespace etwrt
