// Fuzz target: the rule catalog loader (load_catalog). Bad input must be an InputError naming
// the file; a loaded catalog must hold unique IDs (the loader promises it).
#include "fuzz_target.h"
#include "memory_file.h"

#include "harness/model/catalog.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string file = etwh::fuzz::memory_file(data, size);
  try {
    const etwh::Catalog catalog = etwh::load_catalog(file);
    if (catalog.ids().size() != catalog.rules.size()) {
      etwh::fuzz::finding("the catalog loaded with a duplicate rule ID");
    }
  } catch (const etwh::InputError& e) {
    etwh::fuzz::expect_names_file(e.what(), file);
  } catch (const std::exception& e) {
    etwh::fuzz::unexpected_exception(e);
  }
  return 0;
}
