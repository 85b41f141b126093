// Instrumentation manifests read with pugixml. Elements are matched by local name (a manifest
// may prefix them); win: levels and opcodes are the predefined ones of winmeta.xml (LevelType,
// OpcodeType pages), named by their message text as TDH shows them. etwrt choice
// (docs/etwrt/conformance.md, "Manifests in tdh.h"): a level, task, opcode, keyword or channel of
// the provider is named by its message string when the string table has it, else by its name
// attribute.
#include "manifest.h"

#include <etwh/tdh_fixed_size.h>

#include <tdh.h>

#include <pugixml.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <span>
#include <stdexcept>

namespace etwrt {
namespace {

struct Named {
  const char* qname;
  std::uint16_t value;
};

constexpr Named kInTypes[] = {
    {"win:UnicodeString", TDH_INTYPE_UNICODESTRING},
    {"win:AnsiString", TDH_INTYPE_ANSISTRING},
    {"win:Int8", TDH_INTYPE_INT8},
    {"win:UInt8", TDH_INTYPE_UINT8},
    {"win:Int16", TDH_INTYPE_INT16},
    {"win:UInt16", TDH_INTYPE_UINT16},
    {"win:Int32", TDH_INTYPE_INT32},
    {"win:UInt32", TDH_INTYPE_UINT32},
    {"win:Int64", TDH_INTYPE_INT64},
    {"win:UInt64", TDH_INTYPE_UINT64},
    {"win:Float", TDH_INTYPE_FLOAT},
    {"win:Double", TDH_INTYPE_DOUBLE},
    {"win:Boolean", TDH_INTYPE_BOOLEAN},
    {"win:Binary", TDH_INTYPE_BINARY},
    {"win:GUID", TDH_INTYPE_GUID},
    {"win:Pointer", TDH_INTYPE_POINTER},
    {"win:FILETIME", TDH_INTYPE_FILETIME},
    {"win:SYSTEMTIME", TDH_INTYPE_SYSTEMTIME},
    {"win:SID", TDH_INTYPE_SID},
    {"win:HexInt32", TDH_INTYPE_HEXINT32},
    {"win:HexInt64", TDH_INTYPE_HEXINT64},
    {"win:CountedUnicodeString", TDH_INTYPE_MANIFEST_COUNTEDSTRING},
    {"win:CountedAnsiString", TDH_INTYPE_MANIFEST_COUNTEDANSISTRING},
    {"win:CountedBinary", TDH_INTYPE_MANIFEST_COUNTEDBINARY},
};

constexpr Named kOutTypes[] = {
    {"xs:string", TDH_OUTTYPE_STRING},
    {"xs:dateTime", TDH_OUTTYPE_DATETIME},
    {"xs:byte", TDH_OUTTYPE_BYTE},
    {"xs:unsignedByte", TDH_OUTTYPE_UNSIGNEDBYTE},
    {"xs:short", TDH_OUTTYPE_SHORT},
    {"xs:unsignedShort", TDH_OUTTYPE_UNSIGNEDSHORT},
    {"xs:int", TDH_OUTTYPE_INT},
    {"xs:unsignedInt", TDH_OUTTYPE_UNSIGNEDINT},
    {"xs:long", TDH_OUTTYPE_LONG},
    {"xs:unsignedLong", TDH_OUTTYPE_UNSIGNEDLONG},
    {"xs:float", TDH_OUTTYPE_FLOAT},
    {"xs:double", TDH_OUTTYPE_DOUBLE},
    {"xs:boolean", TDH_OUTTYPE_BOOLEAN},
    {"xs:GUID", TDH_OUTTYPE_GUID},
    {"xs:hexBinary", TDH_OUTTYPE_HEXBINARY},
    {"win:HexInt8", TDH_OUTTYPE_HEXINT8},
    {"win:HexInt16", TDH_OUTTYPE_HEXINT16},
    {"win:HexInt32", TDH_OUTTYPE_HEXINT32},
    {"win:HexInt64", TDH_OUTTYPE_HEXINT64},
    {"win:PID", TDH_OUTTYPE_PID},
    {"win:TID", TDH_OUTTYPE_TID},
    {"win:Port", TDH_OUTTYPE_PORT},
    {"win:IPv4", TDH_OUTTYPE_IPV4},
    {"win:IPv6", TDH_OUTTYPE_IPV6},
    {"win:SocketAddress", TDH_OUTTYPE_SOCKETADDRESS},
    {"win:CIMDateTime", TDH_OUTTYPE_CIMDATETIME},
    {"win:ETWTIME", TDH_OUTTYPE_ETWTIME},
    {"win:Xml", TDH_OUTTYPE_XML},
    {"win:ErrorCode", TDH_OUTTYPE_ERRORCODE},
    {"win:Win32Error", TDH_OUTTYPE_WIN32ERROR},
    {"win:NTSTATUS", TDH_OUTTYPE_NTSTATUS},
    {"win:HResult", TDH_OUTTYPE_HRESULT},
    {"win:DateTimeCultureInsensitive", TDH_OUTTYPE_CULTURE_INSENSITIVE_DATETIME},
    {"win:Json", TDH_OUTTYPE_JSON},
    {"win:Utf8", TDH_OUTTYPE_UTF8},
    {"win:Pkcs7WithTypeInfo", TDH_OUTTYPE_PKCS7_WITH_TYPE_INFO},
    {"win:CodePointer", TDH_OUTTYPE_CODE_POINTER},
    {"win:DateTimeUtc", TDH_OUTTYPE_DATETIME_UTC},
};

// Predefined levels and opcodes (winmeta.xml) with the names TDH gives them.
struct Predefined {
  const char* qname;
  std::uint16_t value;
  const char* name;
};
constexpr Predefined kLevels[] = {
    {"win:LogAlways", 0, "Log Always"},
    {"win:Critical", 1, "Critical"},
    {"win:Error", 2, "Error"},
    {"win:Warning", 3, "Warning"},
    {"win:Informational", 4, "Information"},
    {"win:Verbose", 5, "Verbose"},
};
constexpr Predefined kOpcodes[] = {
    {"win:Info", 0, "Info"},         {"win:Start", 1, "Start"},
    {"win:Stop", 2, "Stop"},         {"win:DC_Start", 3, "DCStart"},
    {"win:DC_Stop", 4, "DCStop"},    {"win:Extension", 5, "Extension"},
    {"win:Reply", 6, "Reply"},       {"win:Resume", 7, "Resume"},
    {"win:Suspend", 8, "Suspend"},   {"win:Send", 9, "Send"},
    {"win:Receive", 240, "Receive"},
};

// A manifest fault at a node: "line:col: reason" is made by the parser from the offset.
struct Fault : std::runtime_error {
  Fault(const pugi::xml_node& n, const std::string& what)
      : std::runtime_error(what), offset(n.offset_debug() - 1) {}  // the '<', not the name
  std::ptrdiff_t offset;
};

const char* local_name(const pugi::xml_node& n) {
  const char* name = n.name();
  const char* colon = std::strrchr(name, ':');
  return colon != nullptr ? colon + 1 : name;
}

// The child elements of `n` with local name `name`.
std::vector<pugi::xml_node> children(const pugi::xml_node& n, const char* name) {
  std::vector<pugi::xml_node> out;
  if (!n) return out;
  for (pugi::xml_node c : n.children()) {
    if (c.type() == pugi::node_element && std::strcmp(local_name(c), name) == 0) out.push_back(c);
  }
  return out;
}

pugi::xml_node child(const pugi::xml_node& n, const char* name) {
  const auto all = children(n, name);
  return all.empty() ? pugi::xml_node() : all.front();
}

std::uint64_t number(const pugi::xml_node& n, const char* attr, std::uint64_t max) {
  const std::string text = n.attribute(attr).as_string();
  std::size_t used = 0;
  std::uint64_t v = 0;
  try {
    v = std::stoull(text, &used, 0);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || v > max) {
    throw Fault(n, "attribute " + std::string(attr) + " is not a number up to " +
                       std::to_string(max) + ": \"" + text + "\"");
  }
  return v;
}

std::string required(const pugi::xml_node& n, const char* attr) {
  const pugi::xml_attribute a = n.attribute(attr);
  if (!a) throw Fault(n, std::string("<") + local_name(n) + "> lacks the attribute " + attr);
  return a.as_string();
}

GUID parse_guid(const pugi::xml_node& n) {
  const std::string text = required(n, "guid");
  GUID g{};
  unsigned d[11] = {};
  int used = 0;
  if (text.size() != 38 ||
      std::sscanf(text.c_str(), "{%8x-%4x-%4x-%2x%2x-%2x%2x%2x%2x%2x%2x}%n", &d[0], &d[1], &d[2],
                  &d[3], &d[4], &d[5], &d[6], &d[7], &d[8], &d[9], &d[10], &used) != 11 ||
      used != 38) {
    throw Fault(n, "guid \"" + text + "\" is not {xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}");
  }
  g.Data1 = d[0];
  g.Data2 = static_cast<unsigned short>(d[1]);
  g.Data3 = static_cast<unsigned short>(d[2]);
  for (int i = 0; i < 8; ++i) g.Data4[i] = static_cast<unsigned char>(d[3 + i]);
  return g;
}

// One named value a provider defines (level, task, opcode, keyword, channel).
struct Definition {
  std::uint64_t value = 0;
  std::string name;  // what TDH shows
};

class Parser {
 public:
  explicit Parser(const pugi::xml_node& root) : root_(root) {
    const pugi::xml_node resources = child(child(root, "localization"), "resources");
    for (const auto& table : children(resources, "stringTable")) {
      for (const auto& s : children(table, "string"))
        strings_[s.attribute("id").as_string()] = s.attribute("value").as_string();
    }
  }

  std::vector<ManifestEvent> events() {
    std::vector<ManifestEvent> out;
    const pugi::xml_node events = child(child(root_, "instrumentation"), "events");
    for (const auto& provider : children(events, "provider")) add_provider(provider, out);
    return out;
  }

 private:
  // The text of a message attribute ("$(string.Id)"), empty when absent or not in the table.
  std::string message(const pugi::xml_node& n) const {
    const std::string ref = n.attribute("message").as_string();
    if (ref.rfind("$(string.", 0) != 0 || ref.back() != ')') return {};
    const auto it = strings_.find(ref.substr(9, ref.size() - 10));
    return it == strings_.end() ? std::string() : it->second;
  }

  std::map<std::string, Definition> definitions(const pugi::xml_node& provider, const char* list,
                                                const char* item, const char* value_attr,
                                                std::uint64_t max) const {
    std::map<std::string, Definition> out;
    for (const auto& n : children(child(provider, list), item)) {
      Definition d;
      d.value = number(n, value_attr, max);
      d.name = message(n);
      if (d.name.empty()) d.name = required(n, "name");
      out[required(n, "name")] = d;
    }
    return out;
  }

  static const Definition& lookup(const std::map<std::string, Definition>& defs,
                                  const pugi::xml_node& event, const char* attr) {
    const std::string name = event.attribute(attr).as_string();
    const auto it = defs.find(name);
    if (it == defs.end())
      throw Fault(event, std::string(attr) + " \"" + name + "\" is not defined");
    return it->second;
  }

  static void add_predefined(std::map<std::string, Definition>& defs,
                             std::span<const Predefined> list) {
    for (const Predefined& p : list) defs.emplace(p.qname, Definition{p.value, p.name});
  }

  void add_provider(const pugi::xml_node& provider, std::vector<ManifestEvent>& out) const {
    ManifestEvent base;
    base.provider = parse_guid(provider);
    base.provider_name = required(provider, "name");
    auto levels = definitions(provider, "levels", "level", "value", 255);
    add_predefined(levels, kLevels);
    auto opcodes = definitions(provider, "opcodes", "opcode", "value", 255);
    add_predefined(opcodes, kOpcodes);
    const auto tasks = definitions(provider, "tasks", "task", "value", 65535);
    // Opcodes a task defines for its own events (the manifest schema's task/opcodes): an
    // event's opcode is looked up in its task's first, then in the provider's.
    std::map<std::string, std::map<std::string, Definition>> task_opcodes;
    for (const auto& t : children(child(provider, "tasks"), "task")) {
      task_opcodes[required(t, "name")] = definitions(t, "opcodes", "opcode", "value", 255);
    }
    const auto keywords = definitions(provider, "keywords", "keyword", "mask", ~0ull);
    std::map<std::string, Definition> channels;
    std::uint64_t next_channel = 16;  // mc.exe numbers channels without a value from 16
    for (pugi::xml_node n : child(provider, "channels").children()) {
      const std::string kind = n.type() == pugi::node_element ? local_name(n) : "";
      if (kind != "channel" && kind != "importChannel") continue;
      Definition d{n.attribute("value") ? number(n, "value", 255) : next_channel++,
                   required(n, "name")};
      channels[n.attribute("chid") ? n.attribute("chid").as_string() : d.name] = d;
    }
    base.maps = maps_of(provider);
    std::map<std::string, std::vector<ManifestField>> templates;  // all checked, used or not
    for (const auto& t : children(child(provider, "templates"), "template")) {
      templates[required(t, "tid")] = fields_of(t, base.maps);
    }
    for (const auto& n : children(child(provider, "events"), "event")) {
      ManifestEvent e = base;
      EVENT_DESCRIPTOR& d = e.descriptor;
      d.Id = static_cast<USHORT>(number(n, "value", 65535));
      if (n.attribute("version")) d.Version = static_cast<UCHAR>(number(n, "version", 255));
      e.event_name = n.attribute("name").as_string();
      e.message = message(n);
      if (n.attribute("level")) {
        const Definition& l = lookup(levels, n, "level");
        d.Level = static_cast<UCHAR>(l.value);
        e.level_name = l.name;
      }
      if (n.attribute("opcode")) {
        const auto scoped = task_opcodes.find(n.attribute("task").as_string());
        const bool in_task = scoped != task_opcodes.end() &&
                             scoped->second.contains(n.attribute("opcode").as_string());
        const Definition& o = lookup(in_task ? scoped->second : opcodes, n, "opcode");
        d.Opcode = static_cast<UCHAR>(o.value);
        e.opcode_name = o.name;
      }
      if (n.attribute("task")) {
        const Definition& t = lookup(tasks, n, "task");
        d.Task = static_cast<USHORT>(t.value);
        e.task_name = t.name;
      }
      if (n.attribute("channel")) {
        const Definition& c = lookup(channels, n, "channel");
        d.Channel = static_cast<UCHAR>(c.value);
        e.channel_name = c.name;
      }
      keywords_of(n, keywords, e);
      if (n.attribute("template")) {
        const std::string tid = n.attribute("template").as_string();
        const auto t = templates.find(tid);
        if (t == templates.end()) throw Fault(n, "template \"" + tid + "\" is not defined");
        e.fields = t->second;
      }
      out.push_back(std::move(e));
    }
  }

  static void keywords_of(const pugi::xml_node& n, const std::map<std::string, Definition>& defs,
                          ManifestEvent& e) {
    std::string list = n.attribute("keywords").as_string();
    std::size_t at = 0;
    while (at < list.size()) {
      const std::size_t end = std::min(list.find(' ', at), list.size());
      const std::string name = list.substr(at, end - at);
      at = end + 1;
      if (name.empty()) continue;
      const auto it = defs.find(name);
      if (it == defs.end()) throw Fault(n, "keyword \"" + name + "\" is not defined");
      e.descriptor.Keyword |= it->second.value;
      e.keyword_names.push_back(it->second.name);
    }
  }

  static std::uint16_t type_of(const pugi::xml_node& n, const char* attr,
                               std::span<const Named> table) {
    const std::string q = n.attribute(attr).as_string();
    for (const Named& t : table) {
      if (q == t.qname) return t.value;
    }
    throw Fault(n, std::string(attr) + " \"" + q + "\" is not a type etwrt knows");
  }

  // length="N" or count="N": a number, or the name of an earlier integer field.
  static ManifestParam param_of(const pugi::xml_node& n, const char* attr,
                                const std::vector<ManifestField>& before) {
    ManifestParam p;
    const std::string text = n.attribute(attr).as_string();
    if (text.empty()) return p;
    if (text.find_first_not_of("0123456789") == std::string::npos) {
      p.kind = ManifestParam::kFixed;
      p.value = static_cast<std::uint32_t>(number(n, attr, 65535));
      return p;
    }
    for (std::size_t i = 0; i < before.size(); ++i) {
      const std::uint16_t t = before[i].in_type;
      if (before[i].name == text && before[i].count.kind == ManifestParam::kNone &&
          (t == TDH_INTYPE_UINT8 || t == TDH_INTYPE_UINT16 || t == TDH_INTYPE_UINT32)) {
        p.kind = ManifestParam::kField;
        p.field = i;
        return p;
      }
    }
    throw Fault(
        n, std::string(attr) + " \"" + text + "\" names no earlier UInt8, UInt16 or UInt32 field");
  }

  // A <data> element; `before` are the fields of its scope (template or struct) before it.
  static ManifestField data_of(const pugi::xml_node& n, const std::vector<ManifestField>& before,
                               const std::vector<ManifestMap>& maps) {
    ManifestField f;
    f.name = required(n, "name");
    f.in_type = type_of(n, "inType", kInTypes);
    if (n.attribute("outType")) f.out_type = type_of(n, "outType", kOutTypes);
    f.length = param_of(n, "length", before);
    f.count = param_of(n, "count", before);
    if (f.in_type == TDH_INTYPE_BINARY && f.length.kind == ManifestParam::kNone) {
      throw Fault(n, "win:Binary data \"" + f.name + "\" needs a length");
    }
    if (n.attribute("map")) {
      f.map = n.attribute("map").as_string();
      const bool known = std::any_of(maps.begin(), maps.end(),
                                     [&](const ManifestMap& m) { return m.name == f.map; });
      if (!known) throw Fault(n, "map \"" + f.map + "\" is not defined");
    }
    return f;
  }

  // The template's fields: data elements and structs of data elements (EventManifest
  // TemplateItemType: data and struct).
  static std::vector<ManifestField> fields_of(const pugi::xml_node& t,
                                              const std::vector<ManifestMap>& maps) {
    std::vector<ManifestField> out;
    for (pugi::xml_node n : t.children()) {
      if (n.type() != pugi::node_element) continue;
      const std::string kind = local_name(n);
      if (kind == "data") {
        out.push_back(data_of(n, out, maps));
      } else if (kind == "struct") {
        ManifestField s;
        s.name = required(n, "name");
        s.is_struct = true;
        s.count = param_of(n, "count", out);
        for (pugi::xml_node m : n.children()) {
          if (m.type() != pugi::node_element) continue;
          if (std::strcmp(local_name(m), "data") != 0) {
            throw Fault(m, std::string("<") + local_name(m) +
                               "> in a struct: etwrt decodes data "
                               "members only");
          }
          s.members.push_back(data_of(m, s.members, maps));
        }
        out.push_back(std::move(s));
      } else if (kind == "UserData") {
        // How the Event Log renders the event as XML (the documentation's sample manifest has
        // one): no property of its own, so TDH has nothing to decode in it.
      } else {
        throw Fault(n, "<" + kind + "> in a template: etwrt decodes data and struct elements");
      }
    }
    return out;
  }

  // <maps>: valueMap and bitMap, each map's message from the string table.
  std::vector<ManifestMap> maps_of(const pugi::xml_node& provider) const {
    std::vector<ManifestMap> out;
    for (pugi::xml_node n : child(provider, "maps").children()) {
      if (n.type() != pugi::node_element) continue;
      const std::string kind = local_name(n);
      if (kind != "valueMap" && kind != "bitMap") continue;
      ManifestMap m;
      m.name = required(n, "name");
      m.bitmap = kind == "bitMap";
      for (const auto& e : children(n, "map")) {
        m.entries.emplace_back(static_cast<std::uint32_t>(number(e, "value", 0xFFFFFFFFull)),
                               message(e));
      }
      out.push_back(std::move(m));
    }
    return out;
  }

  pugi::xml_node root_;
  std::map<std::string, std::string> strings_;
};

std::string line_col(const std::string& text, std::ptrdiff_t offset) {
  std::size_t line = 1, col = 1;
  for (std::ptrdiff_t i = 0; i < offset && static_cast<std::size_t>(i) < text.size(); ++i) {
    if (text[static_cast<std::size_t>(i)] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return std::to_string(line) + ":" + std::to_string(col);
}

}  // namespace

ManifestParseResult parse_manifest(const std::string& text) {
  ManifestParseResult r;
  pugi::xml_document doc;
  const pugi::xml_parse_result xml = doc.load_buffer(text.data(), text.size());
  if (!xml) {
    r.error = line_col(text, xml.offset) + ": not XML: " + xml.description();
    return r;
  }
  const pugi::xml_node root = doc.document_element();
  if (std::strcmp(local_name(root), "instrumentationManifest") != 0) {
    r.error = line_col(text, root.offset_debug() - 1) + ": the root element is <" + root.name() +
              ">, not <instrumentationManifest>";
    return r;
  }
  try {
    r.events = Parser(root).events();
    r.ok = true;
  } catch (const Fault& f) {
    r.error = line_col(text, f.offset) + ": " + f.what();
  }
  return r;
}

std::size_t manifest_fixed_size(std::uint16_t in_type, bool pointer32) {
  switch (in_type) {
    case TDH_INTYPE_SYSTEMTIME: return 16;
    case TDH_INTYPE_POINTER: return pointer32 ? 4 : 8;
    default: return etwh::tdh_fixed_size(in_type);
  }
}

}  // namespace etwrt
