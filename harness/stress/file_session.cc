#include "harness/stress/file_session.h"

#include "etwh/child_process.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace etwh::stress {
namespace {

std::optional<std::filesystem::path> find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const std::filesystem::path candidate = std::filesystem::path(dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

RunFolder::RunFolder(const std::string& tag) {
  std::error_code ec;
  const std::filesystem::path base = std::filesystem::temp_directory_path(ec);
  if (ec) throw StressHarnessError("no temporary folder: " + ec.message());
  for (int attempt = 0; attempt < 100; ++attempt) {
    path_ = base / fmt::format("etwh-stress-{}-{}-{}", ::getpid(), tag, attempt);
    if (std::filesystem::create_directory(path_, ec)) return;
  }
  throw StressHarnessError(fmt::format("cannot make a folder under {}: {}", base.string(),
                                       ec ? ec.message() : "every name is taken"));
}

RunFolder::~RunFolder() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void set_log_file(EVENT_TRACE_PROPERTIES* props, std::size_t props_bytes,
                  const std::filesystem::path& file, const FileSettings& settings) {
  // The logger name takes the first half of the room after the struct, the file the second.
  const std::size_t room = (props_bytes - sizeof(EVENT_TRACE_PROPERTIES)) / 2;
  const std::string name = file.string();
  if (name.size() + 1 > room) {
    throw StressHarnessError(
        fmt::format("the log file name {} is longer than {} bytes", name, room - 1));
  }
  props->LogFileNameOffset = static_cast<ULONG>(sizeof(EVENT_TRACE_PROPERTIES) + room);
  char* at = reinterpret_cast<char*>(props) + props->LogFileNameOffset;
  std::memcpy(at, name.c_str(), name.size() + 1);
  props->LogFileMode = settings.mode == FileMode::kCircular ? EVENT_TRACE_FILE_MODE_CIRCULAR
                                                            : EVENT_TRACE_FILE_MODE_SEQUENTIAL;
  props->MaximumFileSize = settings.max_mb;
}

std::optional<double> fio_write_mb_per_s(const std::string& json_text, std::string& why) {
  // fio may print notices before its JSON: the document starts at the first brace.
  const auto start = json_text.find('{');
  const auto doc = nlohmann::json::parse(
      start == std::string::npos ? std::string() : json_text.substr(start), nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    why = "fio's output is not JSON";
    return std::nullopt;
  }
  const auto jobs = doc.find("jobs");
  if (jobs == doc.end() || !jobs->is_array() || jobs->empty()) {
    why = "fio's output names no job";
    return std::nullopt;
  }
  const nlohmann::json& job = jobs->front();
  if (job.value("error", 0) != 0) {
    why = fmt::format("fio's job failed with error {}", job.value("error", 0));
    return std::nullopt;
  }
  const auto write = job.find("write");
  if (write == job.end() || !write->contains("bw_bytes") || !(*write)["bw_bytes"].is_number()) {
    why = "fio's output has no write bandwidth";
    return std::nullopt;
  }
  const double bytes_per_s = (*write)["bw_bytes"].get<double>();
  if (bytes_per_s <= 0) {
    why = "fio measured no write bandwidth";
    return std::nullopt;
  }
  return bytes_per_s / 1e6;
}

DiskRate measure_disk_write(const std::filesystem::path& folder, unsigned megabytes) {
  DiskRate rate;
  const auto fio = find_on_path("fio");
  if (!fio) {
    rate.unavailable = "fio is not installed (Debian package fio; ci/setup installs it)";
    return rate;
  }
  const std::filesystem::path out = folder / "fio.json";
  const std::filesystem::path log = folder / "fio.log";
  boost::asio::io_context io;
  ChildOptions o;
  o.executable = *fio;
  o.args = {"--name=etwh-disk-write",
            "--directory=" + folder.string(),
            "--rw=write",
            "--bs=1M",
            fmt::format("--size={}M", megabytes),
            "--ioengine=psync",
            "--end_fsync=1",
            "--output-format=json",
            "--output=" + out.string()};
  o.stdin_mode = Stdio::kNull;
  o.log_file = log;
  try {
    ChildProcess child(io, o);
    const auto status = child.wait_for(std::chrono::seconds(120));
    if (!status) {
      child.kill();
      child.wait();
      rate.unavailable = "fio did not finish within 120 s";
    } else if (!status->success()) {
      rate.unavailable = "fio " + status->describe() + ": " + read_text(log);
    }
  } catch (const ChildProcessError& e) {
    rate.unavailable = e.what();
  }
  std::error_code ec;
  std::filesystem::remove(folder / "etwh-disk-write.0.0", ec);
  if (!rate.unavailable.empty()) return rate;
  std::string why;
  rate.mb_per_s = fio_write_mb_per_s(read_text(out), why);
  if (!rate.mb_per_s) rate.unavailable = why;
  const auto doc = nlohmann::json::parse(read_text(out), nullptr, false);
  if (!doc.is_discarded() && doc.is_object()) rate.tool = doc.value("fio version", "fio");
  return rate;
}

std::uint64_t monotonic_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

void note_file_written(SessionResult& session, std::uint64_t go_ns, std::uint64_t stopped_ns,
                       std::uint64_t sequential_max_bytes) {
  FileResult& f = *session.file;
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(f.path, ec);
  f.bytes = ec ? 0 : bytes;
  const std::uint64_t buffer_bytes = std::uint64_t{session.buffer_size_kb} * 1024;
  f.at_maximum_size = sequential_max_bytes != 0 && f.bytes + buffer_bytes > sequential_max_bytes;
  // A circular file that wrapped wrote more than it holds: STOP's BuffersWritten counts every
  // buffer written, its header the buffers in the file; the others were overwritten, each a
  // whole BufferSize (docs/etwrt/conformance.md, "Choices where the documents are silent").
  std::uint64_t written_bytes = f.bytes;
  if (session.buffers_written > f.header_buffers_written) {
    written_bytes +=
        (session.buffers_written - f.header_buffers_written) * session.buffer_size_kb * 1024;
  }
  f.write_s = stopped_ns > go_ns ? static_cast<double>(stopped_ns - go_ns) / 1e9 : 0;
  if (f.write_s > 0) {
    f.events_per_s = static_cast<double>(session.delivered) / f.write_s;
    f.mb_per_s = static_cast<double>(written_bytes) / 1e6 / f.write_s;
  }
}

}  // namespace etwh::stress
