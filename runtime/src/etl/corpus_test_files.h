// The corpus of .etl files recorded on real Windows (../shared/etl-corpus, SOURCES.md) for the
// reader's tests: where it is, and its zip members extracted into a temporary folder once per
// run (removed when the test program ends). Test code only.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

#include <stdlib.h>

namespace etwrt::etl::testing {

// ../shared/etl-corpus beside the source tree; ETWRT_ETL_CORPUS names another place (a
// worktree whose parent has no shared/).
inline const std::filesystem::path& corpus_dir() {
  static const std::filesystem::path dir =
      std::getenv("ETWRT_ETL_CORPUS") != nullptr
          ? std::filesystem::path(std::getenv("ETWRT_ETL_CORPUS"))
          : std::filesystem::path(ETWRT_ETL_CORPUS_DIR);
  return dir;
}

inline bool corpus_present() { return std::filesystem::exists(corpus_dir() / "SOURCES.md"); }

// The corpus file `name`, or `member` of `name`.zip extracted (python3's zipfile). Empty when
// it cannot be had.
inline std::filesystem::path corpus_file(const std::string& name, const std::string& member = "") {
  namespace fs = std::filesystem;
  if (member.empty()) return corpus_dir() / name;
  struct TempDir {
    fs::path path;
    ~TempDir() {
      std::error_code ignored;
      if (!path.empty()) fs::remove_all(path, ignored);
    }
  };
  static const TempDir temp = [] {
    std::string templ = (fs::temp_directory_path() / "etwrt-etl-XXXXXX").string();
    return TempDir{fs::path(::mkdtemp(templ.data()) != nullptr ? templ : "")};
  }();
  const fs::path& dir = temp.path;
  if (dir.empty()) return {};
  const fs::path out = dir / member;
  if (!fs::exists(out)) {
    const std::string cmd =
        "python3 -c \"import sys,zipfile; zipfile.ZipFile(sys.argv[1])"
        ".extract(sys.argv[2], sys.argv[3])\" '" +
        (corpus_dir() / name).string() + "' '" + member + "' '" + dir.string() + "'";
    if (std::system(cmd.c_str()) != 0) return {};
  }
  return out;
}

}  // namespace etwrt::etl::testing
