// The oracle's part of the traits family: Model's replay of its ops (oracle_model.h).
#include "harness/conformance/oracle_model.h"
#include "harness/model/rules.h"
#include "harness/conformance/families/traits/traits_ops.h"
#include "win32_text.h"

#include <evntprov.h>
#include <evntrace.h>

#include <algorithm>

namespace etwh::oracle::detail {

void Model::set_traits(const Step& step, StepExpectation& e) {
  const TraitsStep& t = step_body<TraitsStep>(step);
  if (!registered_.count(t.provider)) return;
  const bool attempted_before = traits_attempted_.count(t.provider) > 0;
  traits_attempted_.insert(t.provider);
  // A structured blob is well-formed by construction (the loader bounds its size).
  if (t.raw && traits_blob_error(t.blob)) {
    e.status_nonzero = true;
    e.status_rule = rules::kTrFormat;
  } else if (traits_set_.count(t.provider)) {
    e.status_nonzero = true;
    e.status_rule = rules::kTrSetOnce;
  } else if (!attempted_before) {
    // Whether a rejected malformed blob used up the one chance is not documented.
    e.status = ERROR_SUCCESS;
    e.status_rule = t.raw ? rules::kTrFormat : rules::kTrSetOnce;
    traits_set_.insert(t.provider);
    if (!t.raw && t.group) {
      // Joining a group some session enabled enables the registration (GRP-ENABLE).
      const auto before = snapshot();
      member_group_[t.provider] = format_guid(*t.group);
      notify_diff(before, e, rules::kGrpEnable, "traits naming group " + member_group_[t.provider],
                  kNullGuid, "");
    }
  }
}

}  // namespace etwh::oracle::detail
