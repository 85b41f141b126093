// The providers under test family's core registration: each op's name, parser, oracle part and
// body (families/core_families.h), and its parsers.
#include "harness/conformance/families/family_core.h"
#include "harness/conformance/families/subjects/subjects_ops.h"

namespace etwh::family_core {

namespace {

// subject_write and inject_callback name a provider under test.
void parse_subject_step(CaseParser& cp, const json& v, const std::string& p, Step& s,
                        const Case& c) {
  const Reader& r = cp.reader();
  if (s.op == ops::kSubjectWrite) {
    r.object(v, p, {"op", "provider", "which"});
    SubjectWriteStep w;
    if (v.contains("which")) {
      const std::string which = r.string(v["which"], p + "/which");
      if (which != "test" && which != "state") {
        r.fail(p + "/which", "which \"" + which + "\" is neither \"test\" nor \"state\"");
      }
      w.state_events = which == "state";
    }
    w.provider = cp.ref(v, p, "provider", c);
    s.body = std::move(w);
  } else {
    r.object(v, p, {"op", "provider", "is_enabled", "level", "match_any", "match_all"});
    InjectCallbackStep j;
    j.is_enabled = static_cast<std::uint32_t>(
        r.integer(r.field(v, p, "is_enabled"), p + "/is_enabled", 0xFFFFFFFFu, "is_enabled"));
    if (v.contains("level")) {
      j.level = static_cast<std::uint8_t>(r.integer(v["level"], p + "/level", 255, "level"));
    }
    if (v.contains("match_any")) j.match_any = r.hex64(v["match_any"], p + "/match_any", "keyword");
    if (v.contains("match_all")) j.match_all = r.hex64(v["match_all"], p + "/match_all", "keyword");
    j.provider = cp.ref(v, p, "provider", c);
    s.body = std::move(j);
  }
  const std::string& provider = step_provider(s);
  if (!c.providers.at(provider).subject) {
    r.fail(p + "/provider", "provider \"" + provider +
                                "\" is not a provider under test "
                                "(its agent is not a subject)");
  }
}

}  // namespace

std::vector<CoreOp> subjects_core_ops() {
  return {
      // The provider's side: subject_oracle.h judges what it writes, after the run.
      core_op<SubjectWriteStep>(ops::kSubjectWrite, parse_subject_step, nullptr),
      core_op<InjectCallbackStep>(ops::kInjectCallback, parse_subject_step, nullptr),
  };
}

}  // namespace etwh::family_core
