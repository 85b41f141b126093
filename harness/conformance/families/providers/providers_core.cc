// The providers and agents family's core registration: each op's name, parser, oracle part and
// body (families/core_families.h), and its parsers.
#include "harness/conformance/families/family_core.h"
#include "harness/conformance/families/providers/providers_ops.h"

namespace etwh::family_core {

namespace {

// register, unregister
void parse_provider(CaseParser& cp, const json& v, const std::string& p, Step& s, const Case& c) {
  cp.reader().object(v, p, {"op", "provider", "expect"});
  s.body = ProviderStep{cp.ref(v, p, "provider", c)};
}

void parse_query_enabled(CaseParser& cp, const json& v, const std::string& p, Step& s,
                         const Case& c) {
  const Reader& r = cp.reader();
  r.object(v, p, {"op", "provider", "level", "keyword"});
  QueryEnabledStep q;
  q.provider = cp.ref(v, p, "provider", c);
  q.level =
      static_cast<std::uint8_t>(r.integer(r.field(v, p, "level"), p + "/level", 255, "level"));
  q.keyword = r.hex64(r.field(v, p, "keyword"), p + "/keyword", "keyword");
  s.body = std::move(q);
}

// exit_agent, kill_agent
void parse_agent(CaseParser& cp, const json& v, const std::string& p, Step& s, const Case& c) {
  cp.reader().object(v, p, {"op", "agent"});
  s.body = AgentStep{cp.ref(v, p, "agent", c)};
}

}  // namespace

std::vector<CoreOp> providers_core_ops() {
  return {
      core_op<ProviderStep>(ops::kRegister, parse_provider, model_part<&Model::do_register>),
      core_op<ProviderStep>(ops::kUnregister, parse_provider, model_part<&Model::unregister>),
      core_op<QueryEnabledStep>(ops::kQueryEnabled, parse_query_enabled,
                                model_part<&Model::query_enabled>),
      core_op<AgentStep>(ops::kExitAgent, parse_agent, model_part<&Model::agent_gone>),
      core_op<AgentStep>(ops::kKillAgent, parse_agent, model_part<&Model::agent_gone>),
  };
}

}  // namespace etwh::family_core
