#include "harness/stress/profile.h"

#include "harness/model/json_text.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

namespace etwh::stress {
namespace {

using nlohmann::json;

const char* const kDimensions[] = {"processes",
                                   "threads",
                                   "sessions",
                                   "rate",
                                   "payload_bytes",
                                   "burst.events",
                                   "burst.period_ms",
                                   "duration_ms",
                                   "consumer.delay_us",
                                   "consumer.latency_every",
                                   "buffers.buffer_size_kb",
                                   "buffers.minimum",
                                   "buffers.maximum",
                                   "buffers.flush_timer_s",
                                   "file.max_mb"};

// Per-record overhead etwrt adds to the payload in a buffer (80-byte header, 8-byte alignment),
// rounded up so that a payload the loader accepts always fits.
constexpr std::uint64_t kRecordOverhead = 128;

class Checker {
 public:
  explicit Checker(std::string where) : where_(std::move(where)) {}

  [[noreturn]] void fail(const std::string& pointer, const std::string& reason) const {
    throw InputError(where_, pointer.empty() ? "/" : pointer, reason);
  }

  void only(const json& obj, const std::string& pointer,
            std::initializer_list<const char*> allowed) const {
    if (!obj.is_object()) fail(pointer, "expected an object, got " + json_type_name(obj));
    for (const auto& [key, ignored] : obj.items()) {
      if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return key == a; })) {
        fail(pointer + "/" + key, "unknown field \"" + key + "\"");
      }
    }
  }

  // An unsigned integer field in [low, high]; `fallback` when absent (nullopt: required).
  std::uint64_t count(const json& obj, const std::string& pointer, const char* name,
                      std::uint64_t low, std::uint64_t high,
                      std::optional<std::uint64_t> fallback) const {
    const std::string at = pointer + "/" + name;
    auto it = obj.find(name);
    if (it == obj.end()) {
      if (!fallback) fail(pointer, std::string("missing field \"") + name + "\"");
      return *fallback;
    }
    if (!it->is_number_integer()) fail(at, "expected an integer, got " + json_type_name(*it));
    if (it->is_number_integer() && !it->is_number_unsigned() && it->get<std::int64_t>() < 0) {
      fail(at, std::to_string(it->get<std::int64_t>()) + " is negative");
    }
    const auto v = it->get<std::uint64_t>();
    if (v < low) fail(at, std::to_string(v) + " < " + std::to_string(low));
    if (v > high) fail(at, std::to_string(v) + " > " + std::to_string(high));
    return v;
  }

  // The value that `v` names, of a field that takes one of two names.
  template <class E>
  E either(const json& v, const std::string& pointer, std::pair<const char*, E> a,
           std::pair<const char*, E> b) const {
    if (v == a.first) return a.second;
    if (v == b.first) return b.second;
    fail(pointer,
         std::string("expected \"") + a.first + "\" or \"" + b.first + "\", got " + v.dump());
  }

 private:
  std::string where_;
};

FileSettings check_file(const Checker& c, const json& file) {
  c.only(file, "/file", {"mode", "max_mb"});
  FileSettings f;
  auto mode = file.find("mode");
  if (mode == file.end())
    c.fail("/file", "missing field \"mode\" (\"sequential\" or \"circular\")");
  f.mode = c.either<FileMode>(*mode, "/file/mode", {"sequential", FileMode::kSequential},
                              {"circular", FileMode::kCircular});
  // A circular file needs a size to wrap at (EVENT_TRACE_FILE_MODE_CIRCULAR).
  const std::uint64_t low = f.mode == FileMode::kCircular ? 1 : 0;
  f.max_mb = static_cast<std::uint32_t>(
      c.count(file, "/file", "max_mb", low, 1000000,
              f.mode == FileMode::kCircular ? std::nullopt : std::optional<std::uint64_t>(0)));
  return f;
}

Profile check_profile(const json& doc, const std::string& where, const std::string& name,
                      const std::string& file) {
  Checker c(where);
  c.only(doc, "",
         {"description", "processes", "threads", "sessions", "rate", "payload_bytes", "burst",
          "duration_ms", "consumer", "buffers", "file", "expect_loss"});
  Profile p;
  p.name = name;
  p.file = file;
  p.source = doc;
  if (auto it = doc.find("description"); it != doc.end()) {
    if (!it->is_string()) c.fail("/description", "expected a string, got " + json_type_name(*it));
    p.description = it->get<std::string>();
  }
  p.processes = static_cast<std::uint32_t>(c.count(doc, "", "processes", 1, 64, 1));
  p.threads = static_cast<std::uint32_t>(c.count(doc, "", "threads", 1, 64, 1));
  // SES-MAX-8: no more sessions can enable one provider.
  p.sessions = static_cast<std::uint32_t>(c.count(doc, "", "sessions", 1, 8, 1));
  p.duration_ms = c.count(doc, "", "duration_ms", 1, 3600000, std::nullopt);
  p.payload_bytes = static_cast<std::uint32_t>(c.count(doc, "", "payload_bytes", 24, 65536, 32));

  auto rate = doc.find("rate");
  if (rate == doc.end()) c.fail("", "missing field \"rate\" (events/s per thread, or \"max\")");
  if (rate->is_string()) {
    if (*rate != "max")
      c.fail("/rate",
             "expected a number of events/s or \"max\", got \"" + rate->get<std::string>() + "\"");
    p.rate = 0;
  } else {
    p.rate = c.count(doc, "", "rate", 1, 1000000000, std::nullopt);
  }

  if (auto it = doc.find("burst"); it != doc.end()) {
    c.only(*it, "/burst", {"events", "period_ms"});
    p.burst_events = c.count(*it, "/burst", "events", 1, 1000000000, std::nullopt);
    p.burst_period_ms = c.count(*it, "/burst", "period_ms", 1, 3600000, std::nullopt);
    if (p.rate != 0) {
      c.fail("/rate", "a bursty profile sets its pace with \"burst\": rate must be \"max\"");
    }
  }
  if (auto it = doc.find("consumer"); it != doc.end()) {
    c.only(*it, "/consumer", {"delay_us", "latency_every"});
    p.consumer_delay_us = c.count(*it, "/consumer", "delay_us", 0, 1000000, 0);
    p.latency_every = c.count(*it, "/consumer", "latency_every", 1, 1000000, 1);
  }
  if (auto it = doc.find("buffers"); it != doc.end()) {
    c.only(*it, "/buffers", {"buffer_size_kb", "minimum", "maximum", "flush_timer_s"});
    BufferSettings& b = p.buffers;
    b.buffer_size_kb =
        static_cast<std::uint32_t>(c.count(*it, "/buffers", "buffer_size_kb", 1, 16384, 64));
    b.minimum_buffers =
        static_cast<std::uint32_t>(c.count(*it, "/buffers", "minimum", 2, 100000, 4));
    b.maximum_buffers =
        static_cast<std::uint32_t>(c.count(*it, "/buffers", "maximum", 2, 100000, 32));
    b.flush_timer_s =
        static_cast<std::uint32_t>(c.count(*it, "/buffers", "flush_timer_s", 0, 3600, 1));
    if (b.maximum_buffers < b.minimum_buffers) {
      c.fail("/buffers/maximum",
             std::to_string(b.maximum_buffers) + " < minimum " + std::to_string(b.minimum_buffers));
    }
  }
  if (auto it = doc.find("file"); it != doc.end()) p.log_file = check_file(c, *it);
  if (p.payload_bytes + kRecordOverhead > std::uint64_t{p.buffers.buffer_size_kb} * 1024) {
    c.fail("/payload_bytes", std::to_string(p.payload_bytes) + " bytes do not fit in a " +
                                 std::to_string(p.buffers.buffer_size_kb) + " KB buffer");
  }
  if (auto it = doc.find("expect_loss"); it != doc.end()) {
    p.expect_loss = c.either<LossExpectation>(*it, "/expect_loss", {"none", LossExpectation::kNone},
                                              {"some", LossExpectation::kSome});
  }
  return p;
}

std::string value_text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

Sweep parse_sweep(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw InputError("--sweep", "", "expected DIMENSION=V1,V2,..., got \"" + text + "\"");
  }
  Sweep s;
  s.dimension = text.substr(0, eq);
  if (std::none_of(std::begin(kDimensions), std::end(kDimensions),
                   [&](const char* d) { return s.dimension == d; })) {
    std::string known;
    for (const char* d : kDimensions) known += (known.empty() ? "" : ", ") + std::string(d);
    throw InputError("--sweep", "",
                     "unknown dimension \"" + s.dimension + "\" (one of " + known + ")");
  }
  s.pointer = "/" + s.dimension;
  std::replace(s.pointer.begin(), s.pointer.end(), '.', '/');
  std::stringstream values(text.substr(eq + 1));
  std::string item;
  while (std::getline(values, item, ',')) {
    if (item.empty()) throw InputError("--sweep " + text, "", "empty value");
    // Numbers stay numbers; anything else ("max") is a string, checked by the loader.
    json v = json::parse(item, nullptr, false);
    if (v.is_discarded() || !v.is_primitive()) v = item;
    s.values.push_back(std::move(v));
  }
  if (s.values.empty() || text.back() == ',') {
    throw InputError("--sweep " + text, "", "give at least one value, none empty");
  }
  return s;
}

std::vector<Profile> load_profile_text(const std::string& text, const std::string& file,
                                       const std::optional<Sweep>& sweep) {
  const json doc = parse_input_json(text, file);
  const std::string stem = std::filesystem::path(file).stem().string();
  if (!sweep) {
    try {
      return {check_profile(doc, file, stem, file)};
    } catch (const InputError& e) {
      throw e.located_in(text);
    }
  }
  // A swept value is not in the text: its errors name the sweep and the pointer only.
  if (!doc.is_object()) Checker(file).fail("", "expected an object, got " + json_type_name(doc));
  std::vector<Profile> out;
  for (const json& v : sweep->values) {
    json swept = doc;
    const std::string tag = sweep->dimension + "=" + value_text(v);
    const json::json_pointer ptr(sweep->pointer);
    if (swept.contains(ptr.parent_pointer()) && !swept[ptr.parent_pointer()].is_object()) {
      Checker(file).fail(ptr.parent_pointer().to_string(), "expected an object to sweep into");
    }
    swept[ptr] = v;
    out.push_back(
        check_profile(swept, file + " [--sweep " + tag + "]", stem + "[" + tag + "]", file));
  }
  return out;
}

std::vector<Profile> load_profile_file(const std::filesystem::path& file,
                                       const std::optional<Sweep>& sweep) {
  return load_profile_text(read_input_file(file), file.string(), sweep);
}

namespace {

std::vector<std::filesystem::path> profiles_in_folder(const std::filesystem::path& folder) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
    if (entry.path().extension() == ".json" && !entry.is_directory()) files.push_back(entry.path());
  }
  if (ec) throw InputError(folder.string(), "", "cannot read the folder: " + ec.message());
  if (files.empty())
    throw InputError(folder.string(), "", "no *.json stress profile in the folder");
  std::sort(files.begin(), files.end());
  return files;
}

std::string shipped_names(const std::filesystem::path& shipped_dir) {
  std::string names;
  std::error_code ec;
  std::vector<std::string> stems;
  for (const auto& entry : std::filesystem::directory_iterator(shipped_dir, ec)) {
    if (entry.path().extension() == ".json") stems.push_back(entry.path().stem().string());
  }
  std::sort(stems.begin(), stems.end());
  for (const std::string& s : stems) names += (names.empty() ? "" : ", ") + s;
  return names.empty() ? "none" : names;
}

}  // namespace

std::vector<std::filesystem::path> resolve_profiles(const std::vector<std::string>& arguments,
                                                    const std::filesystem::path& shipped_dir) {
  std::vector<std::filesystem::path> out;
  for (const std::string& argument : arguments) {
    const std::filesystem::path path(argument);
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      for (auto& file : profiles_in_folder(path)) out.push_back(std::move(file));
      continue;
    }
    if (std::filesystem::exists(path, ec)) {
      out.push_back(path);
      continue;
    }
    // A bare name: no folder part, no extension.
    const bool bare = !argument.empty() && path == path.filename() && !path.has_extension();
    const std::filesystem::path shipped = shipped_dir / (argument + ".json");
    if (bare && std::filesystem::is_regular_file(shipped, ec)) {
      out.push_back(shipped);
      continue;
    }
    throw InputError(argument, "",
                     bare ? "no such file, and no shipped stress profile of that name (shipped: " +
                                shipped_names(shipped_dir) + ")"
                          : "no such file or folder");
  }
  return out;
}

}  // namespace etwh::stress
