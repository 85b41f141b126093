// The groups and disallow lists family's core registration: each op's name, parser, oracle part and
// body (families/core_families.h), and its parsers.
#include "harness/conformance/families/family_core.h"
#include "harness/conformance/families/groups/groups_ops.h"

namespace etwh::family_core {

namespace {

// disallow: TraceSetDisallowList of `session` with the GUIDs of `providers` (labels).
void parse_disallow(CaseParser& cp, const json& v, const std::string& p, Step& step,
                    const Case& c) {
  const Reader& r = cp.reader();
  r.object(v, p, {"op", "session", "providers", "expect"});
  DisallowStep& s = step.body.emplace<DisallowStep>();
  s.session = cp.ref(v, p, "session", c);
  const json& list = r.field(v, p, "providers");
  if (!list.is_array()) r.fail(p + "/providers", "expected an array, got " + json_type_name(list));
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string pi = p + "/providers/" + std::to_string(i);
    const std::string label = r.string(list[i], pi);
    if (!c.providers.count(label)) r.fail(pi, "unknown provider \"" + label + "\"");
    s.providers.push_back(label);
  }
}

}  // namespace

std::vector<CoreOp> groups_core_ops() {
  return {
      core_op<DisallowStep>(ops::kDisallow, parse_disallow, model_part<&Model::disallow>),
  };
}

}  // namespace etwh::family_core
