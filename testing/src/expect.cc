#include "etwh/testing/expect.h"

#include <etwh/pattern.h>

#include <cstdio>
#include <string>

namespace etwh::testing {
namespace {

std::string hex(ULONGLONG v) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(v));
  return text;
}

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

// At most this many received events are listed under a failed check.
constexpr std::size_t kListed = 20;

std::string listing(const std::vector<Event>& events, const EventSpec& spec, std::size_t from) {
  std::string out;
  for (std::size_t i = from; i < events.size() && i < from + kListed; ++i) {
    out += "  #" + std::to_string(i) + " " + describe(events[i]) + "\n";
    const std::string diff = spec.mismatch(events[i]);
    out += diff.empty() ? "      matches\n" : "      differs: " + diff + "\n";
  }
  if (events.size() > from + kListed) {
    out += "  ... and " + std::to_string(events.size() - from - kListed) + " more\n";
  }
  return out;
}

}  // namespace

EventSpec& EventSpec::named(std::string name) {
  name_ = std::move(name);
  return *this;
}
EventSpec& EventSpec::id(USHORT id) {
  id_ = id;
  return *this;
}
EventSpec& EventSpec::level(UCHAR level) {
  level_ = level;
  return *this;
}
EventSpec& EventSpec::keywords(ULONGLONG mask) {
  keywords_ |= mask;
  return *this;
}
EventSpec& EventSpec::field_eq(std::string field, std::string value) {
  equal_.emplace_back(std::move(field), std::move(value));
  return *this;
}
EventSpec& EventSpec::field_matches(std::string field, std::string regex) {
  matching_.emplace_back(std::move(field), std::move(regex));
  return *this;
}

std::string EventSpec::describe() const {
  std::vector<std::string> parts;
  if (name_) parts.push_back("named " + quoted(*name_));
  if (id_) parts.push_back("id " + std::to_string(*id_));
  if (level_) parts.push_back("level " + std::to_string(*level_));
  if (keywords_ != 0) parts.push_back("keywords including " + hex(keywords_));
  for (const auto& [f, v] : equal_) parts.push_back("field " + f + " = " + quoted(v));
  for (const auto& [f, r] : matching_) parts.push_back("field " + f + " matching /" + r + "/");
  std::string out = "an event";
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i == 0 ? " " : ", ") + parts[i];
  return out;
}

std::string EventSpec::mismatch(const Event& e) const {
  std::vector<std::string> diffs;
  const auto differ = [&](const std::string& what, const std::string& want,
                          const std::string& got) {
    diffs.push_back(what + ": expected " + want + " | received " + got);
  };
  if (name_ && e.name != *name_) differ("name", quoted(*name_), quoted(e.name));
  if (id_ && e.id != *id_) differ("id", std::to_string(*id_), std::to_string(e.id));
  if (level_ && e.level != *level_) {
    differ("level", std::to_string(*level_), std::to_string(e.level));
  }
  if ((e.keyword & keywords_) != keywords_)
    differ("keyword", "all of " + hex(keywords_), hex(e.keyword));
  for (const auto& [f, v] : equal_) {
    const std::optional<std::string> got = e.field(f);
    if (got != v) differ("field " + f, quoted(v), got ? quoted(*got) : "(no such field)");
  }
  for (const auto& [f, r] : matching_) {
    const std::optional<std::string> got = e.field(f);
    bool ok = false;
    try {
      ok = got && Pattern(r).found_in(*got);
    } catch (const PatternError& e) {
      differ("field " + f, "/" + r + "/ (not a pattern: " + std::string(e.what()) + ")", "-");
      continue;
    }
    if (!ok) differ("field " + f, "matching /" + r + "/", got ? quoted(*got) : "(no such field)");
  }
  std::string out;
  for (std::size_t i = 0; i < diffs.size(); ++i) out += (i == 0 ? "" : "; ") + diffs[i];
  return out;
}

std::string describe(const Event& e) {
  std::string out = e.name.empty() ? "(no name)" : quoted(e.name);
  out += " id " + std::to_string(e.id) + " v" + std::to_string(e.version) + " channel " +
         std::to_string(e.channel) + " level " + std::to_string(e.level) + " opcode " +
         std::to_string(e.opcode) + " task " + std::to_string(e.task) + " keyword " +
         hex(e.keyword) + " pid " + std::to_string(e.process_id) + " tid " +
         std::to_string(e.thread_id);
  if (e.decode_status != 0)
    return out + " (TDH could not decode it: " + std::to_string(e.decode_status) + ")";
  out += " {";
  for (std::size_t i = 0; i < e.fields.size(); ++i) {
    out += (i == 0 ? "" : ", ") + e.fields[i].name + "=" + e.fields[i].value;
  }
  return out + "}";
}

Verdict contains(const std::vector<Event>& events, const EventSpec& spec) {
  for (const Event& e : events) {
    if (spec.matches(e)) return {true, {}};
  }
  return {false, "expected " + spec.describe() + "\nreceived " + std::to_string(events.size()) +
                     " events, none matches:\n" + listing(events, spec, 0)};
}

Verdict in_order(const std::vector<Event>& events, const std::vector<EventSpec>& specs) {
  std::size_t next = 0;
  for (std::size_t k = 0; k < specs.size(); ++k) {
    const std::size_t from = next;
    while (next < events.size() && !specs[k].matches(events[next])) ++next;
    if (next == events.size()) {
      std::string out = "expected, in order:\n";
      for (std::size_t j = 0; j < specs.size(); ++j) {
        out += "  " +
               std::string(j < k    ? "(found) "
                           : j == k ? "(MISSING) "
                                    : "") +
               specs[j].describe() + "\n";
      }
      out += "received " + std::to_string(events.size()) + " events; after #" +
             std::to_string(from) + " (where expectation " + std::to_string(k + 1) +
             " was looked for) none matches it:\n" + listing(events, specs[k], from);
      return {false, out};
    }
    ++next;
  }
  return {true, {}};
}

Verdict count(const std::vector<Event>& events, const EventSpec& spec, std::size_t n) {
  std::size_t matched = 0;
  for (const Event& e : events) matched += spec.matches(e) ? 1 : 0;
  if (matched == n) return {true, {}};
  return {false, "expected " + std::to_string(n) + " x " + spec.describe() + "\nreceived " +
                     std::to_string(matched) + " matching among " + std::to_string(events.size()) +
                     " events:\n" + listing(events, spec, 0)};
}

}  // namespace etwh::testing
