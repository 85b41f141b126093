// For unit tests: a file with the given text in the temporary folder, removed when the test is
// done with it (also when an assertion ends the test early).
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace etwh::test_support {

class ScratchFile {
 public:
  ScratchFile(const std::string& name, const std::string& text)
      : path_(std::filesystem::temp_directory_path() / name) {
    std::ofstream(path_, std::ios::binary) << text;
  }
  ~ScratchFile() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace etwh::test_support
