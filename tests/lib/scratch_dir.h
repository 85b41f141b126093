// For unit tests (POSIX): a fresh folder of its own in the temporary folder, removed with all it
// holds when the test is done with it (also when an assertion ends the test early).
#pragma once

#include "tests/lib/scratch_file.h"

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace etwh::test_support {

class ScratchDir : public ScratchPath {
 public:
  // The folder is "<prefix>-XXXXXX" with a unique tail; throws when it cannot be made.
  explicit ScratchDir(const std::string& prefix) : ScratchPath(made(prefix)) {}

 private:
  static std::filesystem::path made(const std::string& prefix) {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp " + pattern);
    return pattern;
  }
};

}  // namespace etwh::test_support
