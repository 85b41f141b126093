// Fuzz target: the scenario loader (load_scenario_text), and the oracle over every case it
// accepts. Bad input must be an InputError naming the input; a loaded case must be one the
// oracle can replay without throwing (the driver calls it on every loaded case).
#include "fuzz_target.h"

#include "harness/model/catalog.h"
#include "harness/conformance/oracle.h"
#include "harness/conformance/scenario.h"

namespace {

const std::set<std::string>& known_rules() {
  static const std::set<std::string> ids = etwh::load_catalog(ETWH_CATALOG_FILE).ids();
  return ids;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string file = "fuzz-input.json";
  std::vector<etwh::Case> cases;
  try {
    cases = etwh::load_scenario_text(etwh::fuzz::as_text(data, size), file, known_rules());
  } catch (const etwh::InputError& e) {
    etwh::fuzz::expect_names_file(e.what(), file);
    return 0;
  } catch (const std::exception& e) {
    etwh::fuzz::unexpected_exception(e);
  }
  try {
    for (const etwh::Case& c : cases) etwh::oracle::expect_case(c);
  } catch (const std::exception& e) {
    etwh::fuzz::finding(std::string("the oracle threw on a loaded case: ") + e.what());
  }
  return 0;
}
