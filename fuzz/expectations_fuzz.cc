// Fuzz target: the per-platform expectations loader (load_expectations), with no known cases
// and with a few (which reject entries naming none of them). Bad input must be an
// InputError naming the file.
#include "fuzz_target.h"
#include "memory_file.h"

#include "harness/model/expectations.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string file = etwh::fuzz::memory_file(data, size);
  const std::set<std::string> known_cases = {"lvl-single", "traits-malformed", "grp-enable"};
  for (const std::set<std::string>& known : {std::set<std::string>{}, known_cases}) {
    try {
      const etwh::Expectations loaded = etwh::load_expectations(file, known);
      for (const auto& [case_id, expectation] : loaded) {
        if (!known.empty() && known.count(case_id) == 0) {
          etwh::fuzz::finding("an entry for the unknown case \"" + case_id + "\" was accepted");
        }
        etwh::classify(expectation.status, loaded, case_id);
      }
    } catch (const etwh::InputError& e) {
      etwh::fuzz::expect_names_file(e.what(), file);
    } catch (const std::exception& e) {
      etwh::fuzz::unexpected_exception(e);
    }
  }
  return 0;
}
