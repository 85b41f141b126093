// Every file etwh writes (reports, results, traces, pages, comparisons, expectations, the kill
// matrix) goes through OutputFile: the path is checked when the command starts, before any work,
// and the file is written whole at the end, replaced atomically in its own directory, so that a
// reader sees the old file or the new one and nothing else is ever replaced.
//
//   etwh::OutputFile report("out/run.json");   // throws OutputRefused now, not after the run
//   ...
//   report.write(text);                        // out/run.json replaced in one rename
#pragma once

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace etwh {

// An output path etwh will not write: "<path>: <reason>" (etwh exits 2).
class OutputRefused : public std::runtime_error {
 public:
  OutputRefused(const std::string& path, const std::string& reason);
};

class OutputFile {
 public:
  // Checks `path`: "-" is standard output; a regular file, a path that does not exist yet in an
  // existing directory, or a symlink to a regular file (the file it points to is replaced) are
  // accepted once a file could be created beside it. Anything else (a directory, FIFO, device,
  // socket, a symlink to one of these or to nothing) throws OutputRefused naming `path`.
  explicit OutputFile(std::string path);

  const std::string& path() const { return path_; }
  bool to_stdout() const { return to_stdout_; }

  // Writes `text` to standard output or as the whole new content of the file: written to a
  // temporary file in the same directory, then renamed over it (an existing file's permissions
  // are kept). Throws OutputRefused if the path became something other than a regular file since
  // the check, std::runtime_error naming the file when writing fails (the old file stays).
  void write(std::string_view text) const;

 private:
  std::string path_;              // as the user gave it, for messages
  std::filesystem::path target_;  // the file replaced (a symlink's target)
  bool to_stdout_ = false;
};

// OutputFile(path), or nothing for an empty path (an output option not given).
std::optional<OutputFile> output_file(const std::string& path);
// output_file of each of `paths`, in their order (a command's file per report format).
std::vector<std::optional<OutputFile>> output_files(const std::vector<std::string>& paths);

// Writes `text` to `file` when there is one. A failure is said on stderr ("etwh: <reason>") and
// gives false: the command then exits 2.
bool write_output(const std::optional<OutputFile>& file, std::string_view text);

}  // namespace etwh
