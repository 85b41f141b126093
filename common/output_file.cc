// etwh::OutputFile (etwh/output_file.h): standard C++ only, so the same on Windows.
#include "etwh/output_file.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>

namespace etwh {

namespace fs = std::filesystem;

namespace {

std::string kind_of(fs::file_type type) {
  switch (type) {
    case fs::file_type::directory: return "a directory";
    case fs::file_type::fifo: return "a FIFO";
    case fs::file_type::character:
    case fs::file_type::block: return "a device";
    case fs::file_type::socket: return "a socket";
    case fs::file_type::not_found: return "nothing";
    default: return "not a regular file";
  }
}

// The file to replace for `path`, or OutputRefused: a symlink is followed to a regular file (so
// the link stays a link), never to anything else.
fs::path checked_target(const std::string& path) {
  std::error_code ec;
  const fs::file_status own = fs::symlink_status(path, ec);
  if (ec && own.type() != fs::file_type::not_found) throw OutputRefused(path, ec.message());
  if (own.type() == fs::file_type::not_found) {
    const fs::path parent = fs::absolute(fs::path(path), ec).parent_path();
    if (ec || !fs::is_directory(parent, ec)) {
      throw OutputRefused(path, "its folder " + parent.string() + " does not exist");
    }
    return fs::absolute(fs::path(path));
  }
  if (own.type() == fs::file_type::regular) return fs::absolute(fs::path(path));
  if (own.type() == fs::file_type::symlink) {
    const fs::file_status pointed = fs::status(path, ec);
    if (pointed.type() == fs::file_type::regular) return fs::canonical(path);
    throw OutputRefused(path, "a symlink to " + kind_of(pointed.type()) +
                                  ": refused, only a regular file is replaced");
  }
  throw OutputRefused(path, kind_of(own.type()) + ": refused, only a regular file is replaced");
}

// A new name beside `target` for the content before it is renamed over `target`.
fs::path temporary_beside(const fs::path& target) {
  std::random_device random;
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, ".%08x%08x.tmp", random(), random());
  fs::path temp = target;
  temp += ".etwh";
  temp += suffix;
  return temp;
}

// Creates `temp` with `text`; false (nothing left behind) when it cannot.
bool write_new_file(const fs::path& temp, std::string_view text) {
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.flush();
    if (out) return true;
  }
  std::error_code ignored;
  fs::remove(temp, ignored);
  return false;
}

}  // namespace

OutputRefused::OutputRefused(const std::string& path, const std::string& reason)
    : std::runtime_error(path + ": " + reason) {}

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
  if (path_ == "-") {
    to_stdout_ = true;
    return;
  }
  if (path_.empty()) throw OutputRefused("\"\"", "an empty file name");
  target_ = checked_target(path_);
  // Written beside it at the end: find out now whether a file can be made there.
  const fs::path probe = temporary_beside(target_);
  if (!write_new_file(probe, "")) {
    throw OutputRefused(path_, "cannot create a file in " + target_.parent_path().string());
  }
  std::error_code ignored;
  fs::remove(probe, ignored);
}

void OutputFile::write(std::string_view text) const {
  if (to_stdout_) {
    std::cout.write(text.data(), static_cast<std::streamsize>(text.size()));
    std::cout.flush();
    if (!std::cout) throw std::runtime_error("standard output: cannot write");
    return;
  }
  const fs::path temp = temporary_beside(target_);
  if (!write_new_file(temp, text)) throw std::runtime_error(path_ + ": cannot write");
  std::error_code ec;
  try {
    const fs::file_status now = fs::symlink_status(target_, ec);
    if (now.type() == fs::file_type::regular) {
      fs::permissions(temp, now.permissions(), ec);
    } else if (now.type() != fs::file_type::not_found) {
      throw OutputRefused(path_, kind_of(now.type()) + " now: refused, nothing replaced");
    }
    fs::rename(temp, target_, ec);
    if (ec) throw std::runtime_error(path_ + ": cannot replace it: " + ec.message());
  } catch (...) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    throw;
  }
}

std::optional<OutputFile> output_file(const std::string& path) {
  if (path.empty()) return std::nullopt;
  return OutputFile(path);
}

std::vector<std::optional<OutputFile>> output_files(const std::vector<std::string>& paths) {
  std::vector<std::optional<OutputFile>> files;
  for (const std::string& path : paths) files.push_back(output_file(path));
  return files;
}

bool write_output(const std::optional<OutputFile>& file, std::string_view text) {
  if (!file) return true;
  try {
    file->write(text);
  } catch (const std::exception& e) {
    std::cerr << "etwh: " << e.what() << "\n";
    return false;
  }
  return true;
}

}  // namespace etwh
