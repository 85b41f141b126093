// For unit tests: a file with the given text in the temporary folder, removed when the test is
// done with it (also when an assertion ends the test early).
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <utility>

namespace etwh::test_support {

// A path of the temporary folder that is the test's own: removed, with all it holds, when the
// object goes.
class ScratchPath {
 public:
  ~ScratchPath() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchPath(const ScratchPath&) = delete;
  ScratchPath& operator=(const ScratchPath&) = delete;

  const std::filesystem::path& path() const { return path_; }

 protected:
  explicit ScratchPath(std::filesystem::path path) : path_(std::move(path)) {}

 private:
  std::filesystem::path path_;
};

class ScratchFile : public ScratchPath {
 public:
  ScratchFile(const std::string& name, const std::string& text)
      : ScratchPath(std::filesystem::temp_directory_path() / name) {
    std::ofstream(path(), std::ios::binary) << text;
  }
};

}  // namespace etwh::test_support
