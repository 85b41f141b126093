// What a family's core registration (families/<family>/<family>_core.cc) is written in: the
// registration types, the scenario loader's parser and reader, and the oracle's model, by their
// short names. Each family's parsers and its *_core_ops() live in namespace etwh::family_core.
#pragma once

#include "harness/conformance/families/core_families.h"
#include "harness/conformance/oracle_model.h"
#include "harness/conformance/scenario_parser.h"

namespace etwh::family_core {

using nlohmann::json;
using oracle::detail::Model;
using scenario_parse::CaseParser;
using scenario_parse::Reader;

}  // namespace etwh::family_core
