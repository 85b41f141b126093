// Fuzz target: the provider traits blob of EventSetInformation, read by three pieces of code
// that must agree: etwrt's parser (parse_traits, what the runtime accepts), the oracle's
// TR-FORMAT check (traits_blob_error, what the harness expects the runtime to accept) and the
// blob builder of the driver and agents (build_traits_blob), which must rebuild an accepted
// blob byte for byte from what the parser read out of it.
#include "fuzz_target.h"

#include "harness/conformance/oracle.h"
#include "traits.h"
#include "win32_ops.h"

#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const etwrt::TraitsParseResult parsed = etwrt::parse_traits(data, size);
  const std::optional<std::string> oracle_error =
      etwh::oracle::traits_blob_error(std::span<const std::uint8_t>(data, size));
  if (parsed.ok == oracle_error.has_value()) {
    etwh::fuzz::finding("etwrt " + std::string(parsed.ok ? "accepts" : "rejects") +
                        " a blob that the oracle " +
                        (oracle_error ? "rejects: " + *oracle_error : "accepts: " + parsed.error));
  }
  if (!parsed.ok) {
    if (parsed.error.empty()) etwh::fuzz::finding("a rejected blob with no reason");
    return 0;
  }
  std::vector<etwh::Trait> traits;
  for (const etwrt::ProviderTrait& t : parsed.traits.traits) traits.push_back({t.type, t.data});
  std::vector<std::uint8_t> rebuilt;
  try {
    rebuilt = etwh::build_traits_blob(parsed.traits.name, traits);
  } catch (const std::exception& e) {
    etwh::fuzz::finding(std::string("an accepted blob does not rebuild: ") + e.what());
  }
  if (rebuilt.size() != size || (size != 0 && std::memcmp(rebuilt.data(), data, size) != 0)) {
    etwh::fuzz::finding("an accepted blob rebuilds differently (" + std::to_string(size) +
                        " bytes in, " + std::to_string(rebuilt.size()) + " out)");
  }
  return 0;
}
