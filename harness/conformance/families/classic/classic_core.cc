// The classic providers family's core registration: each op's name, parser, oracle part and
// body (families/core_families.h), and its parsers.
#include "harness/conformance/families/family_core.h"
#include "harness/conformance/families/classic/classic_ops.h"
#include "harness/conformance/families/classic/classic_steps.h"

#include <set>

namespace etwh::family_core {

namespace {

void parse_classic_step(CaseParser& cp, const json& v, const std::string& p, Step& s,
                        const Case& c) {
  std::set<std::string> labels;
  for (const auto& [label, def] : c.providers) labels.insert(label);
  classic::parse_step(v, cp.file(), p, labels, s);
}

}  // namespace

std::vector<CoreOp> classic_core_ops() {
  std::vector<CoreOp> out;
  // classic::expect judges these ops in its own pass over the case (classic_steps.h).
  for (std::string_view op : ops::kClassicOps) {
    out.push_back(core_op<ClassicStep>(op, parse_classic_step, nullptr));
  }
  return out;
}

}  // namespace etwh::family_core
