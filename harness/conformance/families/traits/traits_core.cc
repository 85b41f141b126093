// The traits family's core registration: each op's name, parser, oracle part and
// body (families/core_families.h), and its parsers.
#include "harness/conformance/families/family_core.h"
#include "harness/conformance/families/traits/traits_ops.h"

namespace etwh::family_core {

namespace {

void parse_traits(CaseParser& cp, const json& v, const std::string& p, TraitsStep& s) {
  const Reader& r = cp.reader();
  r.object(v, p, {"name", "group", "custom"});
  s.name = r.string(r.field(v, p, "name"), p + "/name");
  if (s.name.find('\0') != std::string::npos) r.fail(p + "/name", "name holds a NUL");
  std::size_t size = 2 + s.name.size() + 1;
  if (v.contains("group")) {
    s.group = r.guid(v["group"], p + "/group");
    size += 3 + sizeof(GUID);
  }
  if (v.contains("custom")) {
    const json& list = v["custom"];
    if (!list.is_array()) {
      r.fail(p + "/custom", "expected an array, got " + json_type_name(list));
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string pi = p + "/custom/" + std::to_string(i);
      r.object(list[i], pi, {"type", "data"});
      FilterDef t;
      t.type = static_cast<std::uint32_t>(
          r.integer(r.field(list[i], pi, "type"), pi + "/type", 255, "trait type"));
      t.data = r.bytes(r.field(list[i], pi, "data"), pi + "/data");
      size += 3 + t.data.size();
      s.custom.push_back(t);
    }
  }
  if (size > 0xFFFF) {
    r.fail(p, "traits blob of " + std::to_string(size) + " bytes > 65535 (UINT16 TraitsSize)");
  }
}

void parse_set_traits(CaseParser& cp, const json& v, const std::string& p, Step& s, const Case& c) {
  const Reader& r = cp.reader();
  r.object(v, p, {"op", "provider", "traits", "raw", "expect"});
  TraitsStep t;
  t.provider = cp.ref(v, p, "provider", c);
  if (v.contains("traits") == v.contains("raw")) {
    r.fail(p, "set_traits needs exactly one of \"traits\" and \"raw\"");
  }
  if (v.contains("raw")) {
    t.blob = r.bytes(v["raw"], p + "/raw");
    t.raw = true;
  } else {
    parse_traits(cp, v["traits"], p + "/traits", t);
  }
  s.body = std::move(t);
}

}  // namespace

std::vector<CoreOp> traits_core_ops() {
  return {
      core_op<TraitsStep>(ops::kSetTraits, parse_set_traits, model_part<&Model::set_traits>),
  };
}

}  // namespace etwh::family_core
