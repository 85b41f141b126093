// The data the provider check judges with, compiled in so that an installed test finds it
// without a path: the rule catalog (catalog/rules.json) and `etwh observe`'s default schedule
// (scenarios/observe/default.json).
#pragma once

namespace etwh::testing {

extern const char kCatalogJson[];
extern const char kScheduleJson[];

}  // namespace etwh::testing
