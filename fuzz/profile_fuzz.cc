// Fuzz target: the stress profile loader (load_profile_text), with and without a sweep. When
// the input's first line is "sweep DIM=V1,V2,...", that line is given to parse_sweep and the
// rest is the profile. Bad input must be an InputError naming the input (or --sweep).
#include "fuzz_target.h"

#include "harness/stress/profile.h"

namespace {

constexpr std::string_view kSweepPrefix = "sweep ";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string file = "fuzz-input.json";
  std::string text = etwh::fuzz::as_text(data, size);
  std::optional<etwh::stress::Sweep> sweep;
  try {
    if (text.starts_with(kSweepPrefix)) {
      const std::size_t eol = std::min(text.find('\n'), text.size());
      const std::string spec = text.substr(kSweepPrefix.size(), eol - kSweepPrefix.size());
      text.erase(0, eol);
      try {
        sweep = etwh::stress::parse_sweep(spec);
      } catch (const etwh::InputError& e) {
        // "--sweep: reason" or "--sweep SPEC: reason": the option, then what was wrong.
        if (!std::string_view(e.what()).starts_with("--sweep")) {
          etwh::fuzz::finding(std::string("sweep error does not name --sweep: ") + e.what());
        }
        return 0;
      }
    }
    const std::vector<etwh::stress::Profile> profiles =
        etwh::stress::load_profile_text(text, file, sweep);
    const std::size_t expected = sweep ? sweep->values.size() : 1;
    if (profiles.size() != expected) {
      etwh::fuzz::finding("loaded " + std::to_string(profiles.size()) + " profiles, expected " +
                          std::to_string(expected));
    }
  } catch (const etwh::InputError& e) {
    // With a sweep, the file is named with its value: "<file> [--sweep DIM=V]: ...".
    const std::string_view message = e.what();
    if (!sweep || !message.starts_with(file + " [--sweep ")) {
      etwh::fuzz::expect_names_file(message, file);
    }
  } catch (const std::exception& e) {
    etwh::fuzz::unexpected_exception(e);
  }
  return 0;
}
