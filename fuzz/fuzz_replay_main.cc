// Replays inputs through a fuzz target's LLVMFuzzerTestOneInput in an ordinary build (no
// libFuzzer, no clang): `fuzz_replay_<target> PATH...`, each PATH a file or a directory of
// files. Every regression input under fuzz/regressions/ runs this way as a CTest. A finding
// aborts inside the target; this main fails when a path is missing or holds no input at all,
// so that a test over an empty or misnamed folder cannot pass by replaying nothing.
#include "fuzz_target.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <vector>

namespace {

std::vector<std::filesystem::path> inputs_of(const std::filesystem::path& path) {
  std::vector<std::filesystem::path> files;
  if (std::filesystem::is_directory(path)) {
    for (const auto& entry : std::filesystem::directory_iterator(path)) {
      // README files describe the inputs beside them; they are not inputs.
      if (entry.is_regular_file() && entry.path().filename() != "README.md") {
        files.push_back(entry.path());
      }
    }
    std::sort(files.begin(), files.end());
  } else if (std::filesystem::is_regular_file(path)) {
    files.push_back(path);
  }
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " PATH... (files, or folders of files)\n";
    return 2;
  }
  std::size_t replayed = 0;
  for (int i = 1; i < argc; ++i) {
    const std::vector<std::filesystem::path> files = inputs_of(argv[i]);
    if (files.empty()) {
      std::cerr << argv[i] << ": no input there (missing, or an empty folder)\n";
      return 2;
    }
    for (const auto& file : files) {
      std::ifstream in(file, std::ios::binary);
      if (!in) {
        std::cerr << file.string() << ": cannot open the file\n";
        return 2;
      }
      std::vector<char> bytes{std::istreambuf_iterator<char>(in), {}};
      std::cout << "replay " << file.string() << " (" << bytes.size() << " bytes)" << std::endl;
      LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
      ++replayed;
    }
  }
  std::cout << replayed << " inputs replayed, no finding" << std::endl;
  return 0;
}
