#include "profile.h"

#include "json_text.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace etwh::stress {
namespace {

using nlohmann::json;

const char* const kDimensions[] = {
    "processes",       "threads",          "sessions",        "rate",
    "payload_bytes",   "burst.events",     "burst.period_ms", "duration_ms",
    "consumer.delay_us", "buffers.buffer_size_kb", "buffers.minimum", "buffers.maximum",
    "buffers.flush_timer_s"};

// Per-record overhead etwrt adds to the payload in a buffer (80-byte header, 8-byte alignment),
// rounded up so that a payload the loader accepts always fits.
constexpr std::uint64_t kRecordOverhead = 128;


class Checker {
 public:
  explicit Checker(std::string where) : where_(std::move(where)) {}

  [[noreturn]] void fail(const std::string& pointer, const std::string& reason) const {
    throw StressProfileError(where_ + ": " + (pointer.empty() ? "/" : pointer) + ": " + reason);
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

 private:
  std::string where_;
};

Profile check_profile(const json& doc, const std::string& where, const std::string& name,
                      const std::string& file) {
  Checker c(where);
  c.only(doc, "", {"description", "processes", "threads", "sessions", "rate", "payload_bytes",
                   "burst", "duration_ms", "consumer", "buffers", "expect_loss"});
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
    if (*rate != "max") c.fail("/rate", "expected a number of events/s or \"max\", got \"" +
                                            rate->get<std::string>() + "\"");
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
    c.only(*it, "/consumer", {"delay_us"});
    p.consumer_delay_us = c.count(*it, "/consumer", "delay_us", 0, 1000000, 0);
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
    b.flush_timer_s = static_cast<std::uint32_t>(c.count(*it, "/buffers", "flush_timer_s", 0,
                                                         3600, 1));
    if (b.maximum_buffers < b.minimum_buffers) {
      c.fail("/buffers/maximum", std::to_string(b.maximum_buffers) + " < minimum " +
                                     std::to_string(b.minimum_buffers));
    }
  }
  if (p.payload_bytes + kRecordOverhead > std::uint64_t{p.buffers.buffer_size_kb} * 1024) {
    c.fail("/payload_bytes", std::to_string(p.payload_bytes) + " bytes do not fit in a " +
                                 std::to_string(p.buffers.buffer_size_kb) + " KB buffer");
  }
  if (auto it = doc.find("expect_loss"); it != doc.end()) {
    if (*it == "none") p.expect_loss = LossExpectation::kNone;
    else if (*it == "some") p.expect_loss = LossExpectation::kSome;
    else c.fail("/expect_loss", "expected \"none\" or \"some\", got " + it->dump());
  }
  return p;
}

std::string value_text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

Sweep parse_sweep(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw StressProfileError("--sweep: expected DIMENSION=V1,V2,..., got \"" + text + "\"");
  }
  Sweep s;
  s.dimension = text.substr(0, eq);
  if (std::none_of(std::begin(kDimensions), std::end(kDimensions),
                   [&](const char* d) { return s.dimension == d; })) {
    std::string known;
    for (const char* d : kDimensions) known += (known.empty() ? "" : ", ") + std::string(d);
    throw StressProfileError("--sweep: unknown dimension \"" + s.dimension + "\" (one of " +
                             known + ")");
  }
  s.pointer = "/" + s.dimension;
  std::replace(s.pointer.begin(), s.pointer.end(), '.', '/');
  std::stringstream values(text.substr(eq + 1));
  std::string item;
  while (std::getline(values, item, ',')) {
    if (item.empty()) throw StressProfileError("--sweep " + text + ": empty value");
    // Numbers stay numbers; anything else ("max") is a string, checked by the loader.
    json v = json::parse(item, nullptr, false);
    if (v.is_discarded() || !v.is_primitive()) v = item;
    s.values.push_back(std::move(v));
  }
  if (s.values.empty() || text.back() == ',') {
    throw StressProfileError("--sweep " + text + ": give at least one value, none empty");
  }
  return s;
}

std::vector<Profile> load_profile_text(const std::string& text, const std::string& file,
                                       const std::optional<Sweep>& sweep) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    std::string reason = e.what();
    if (auto colon = reason.rfind(": "); colon != std::string::npos) reason = reason.substr(colon + 2);
    throw StressProfileError(file + ": " + line_col(text, e.byte > 0 ? e.byte - 1 : 0) +
                             ": JSON syntax error: " + reason);
  } catch (const json::out_of_range& e) {  // a number no double holds (1e999)
    throw StressProfileError(file + ": " + line_col(text, json_error_offset(text)) + ": " +
                             json_error_reason(e));
  }
  const std::string stem = std::filesystem::path(file).stem().string();
  if (!sweep) return {check_profile(doc, file, stem, file)};
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
    out.push_back(check_profile(swept, file + " [--sweep " + tag + "]", stem + "[" + tag + "]", file));
  }
  return out;
}

std::vector<Profile> load_profile_file(const std::filesystem::path& file,
                                       const std::optional<Sweep>& sweep) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw StressProfileError(file.string() + ": -: cannot open the file");
  std::stringstream text;
  text << in.rdbuf();
  return load_profile_text(text.str(), file.string(), sweep);
}

}  // namespace etwh::stress
