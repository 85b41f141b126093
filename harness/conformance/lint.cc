#include "harness/conformance/lint.h"
#include "harness/model/rules.h"
#include "harness/conformance/families/classic/classic_ops.h"
#include "harness/conformance/families/data_path/data_path_ops.h"
#include "harness/conformance/families/traits/traits_ops.h"

#include "win32_ops.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace etwh::lint {

namespace {

// Seed 004's descriptor conventions.
constexpr std::uint8_t kChannelTraceLogging = 11;
constexpr std::uint8_t kChannelManifestWithTraits = 12;
constexpr std::uint8_t kFirstProviderChannel = 16;
constexpr std::uint8_t kOpcodeStart = 1;
constexpr std::uint8_t kOpcodeStop = 2;
constexpr std::uint64_t kMicrosoftKeywords = 0xFFFF000000000000ull;
// Seed 001: trait types 1..127 are Microsoft's (1 = EtwProviderTraitTypeGroup).
constexpr std::uint8_t kTraitTypeGroup = 1;
constexpr std::uint8_t kFirstCustomTraitType = 128;
constexpr std::size_t kTraitsSizeLimit = 256;
// Seed 002: WNODE_HEADER flags and the header's predefined types.
constexpr std::uint32_t kTracedGuid = 0x00020000;
constexpr std::uint32_t kUseGuidPtr = 0x00080000;
constexpr std::uint32_t kUseMofPtr = 0x00100000;
constexpr std::uint32_t kMaxMofFields = 16;
constexpr std::uint8_t kLastPredefinedType = 8;  // CHECKPOINT
constexpr std::uint8_t kFirstCustomType = 10;

std::string describe_descriptor(const Descriptor& d) {
  return fmt::format("Id {} Version {} Channel {} Level {} Opcode {} Keyword 0x{:x}", d.id,
                     d.version, d.channel, d.level, d.opcode, d.keyword);
}

Finding make(const Catalog& catalog, const std::string& rule, const std::string& where,
             std::string message) {
  return Finding{rule, severity_of(catalog, rule), where, std::move(message)};
}

// The header a trace_event step makes the agent write (classic::parse_step's request fields):
// Class.Type/Level/Version set one by one, Flags TRACED_GUID plus USE_GUID_PTR / USE_MOF_PTR
// as the step uses them, unless the step overrides Flags.
ClassicHeader classic_header_of(const nlohmann::json& r) {
  ClassicHeader h;
  h.type = r.value("type", std::uint8_t{0});
  h.level = r.value("level", std::uint8_t{0});
  h.version = r.value("version", std::uint16_t{0});
  h.class_version = static_cast<std::uint32_t>(h.type) |
                    (static_cast<std::uint32_t>(h.level) << 8) |
                    (static_cast<std::uint32_t>(h.version) << 16);
  h.guid_ptr_used = r.value("guid_ptr", false);
  h.mof_fields = r.value("mof_fields", std::uint32_t{0});
  h.flags = kTracedGuid | (h.guid_ptr_used ? kUseGuidPtr : 0) | (h.mof_fields > 0 ? kUseMofPtr : 0);
  if (r.contains("flags") && r["flags"].is_string()) {
    h.flags = static_cast<std::uint32_t>(std::stoull(r["flags"].get<std::string>(), nullptr, 16));
  }
  return h;
}

}  // namespace

Severity severity_of(const Catalog& catalog, const std::string& rule) {
  const Rule* r = catalog.find(rule);
  return r != nullptr && r->severity == "failure" ? Severity::kFailure : Severity::kWarning;
}

std::vector<Finding> lint_descriptor(const Descriptor& d, const std::string& where,
                                     const Catalog& catalog) {
  std::vector<Finding> out;
  const std::string at = where + ": " + describe_descriptor(d);
  if (d.channel == kChannelTraceLogging && d.id != 0) {
    out.push_back(make(catalog, rules::kDescTlId0, at,
                       "a TraceLogging event (channel 11) has Id " + std::to_string(d.id) +
                           "; TraceLogging events are identified by name with Id 0"));
  }
  if (d.channel != 0 && d.channel != kChannelTraceLogging &&
      d.channel != kChannelManifestWithTraits && d.channel < kFirstProviderChannel) {
    out.push_back(make(catalog, rules::kDescChannel, at,
                       fmt::format("channel {} is reserved (0 manifest, 11 TraceLogging, 12 "
                                   "manifest with traits, 16 and up provider-defined)",
                                   d.channel)));
  }
  if (d.level == 0) {
    out.push_back(make(catalog, rules::kDescLevelNonzero, at,
                       "level 0 (LOG_ALWAYS) bypasses every session's level filter"));
  } else if (d.level >= 6 && d.level <= 15) {
    out.push_back(make(catalog, rules::kDescLevelNonzero, at,
                       fmt::format("level {} is reserved (6..15)", d.level)));
  }
  if (d.keyword == 0) {
    out.push_back(make(catalog, rules::kDescKeywordNonzero, at,
                       "keyword 0 bypasses every session's keyword filter"));
  } else if ((d.keyword & ~kMicrosoftKeywords) == 0) {
    out.push_back(make(catalog, rules::kDescKeywordNonzero, at,
                       "only Microsoft's keyword bits (top 16) are set; the provider's own are "
                       "the low 48"));
  }
  return out;
}

std::vector<Finding> lint_event_set(const std::vector<Descriptor>& events, const std::string& where,
                                    const Catalog& catalog) {
  std::vector<Finding> out;
  // (Id, Version) -> payload sizes seen. Id 0 is TraceLogging's: identified by name, not here.
  std::map<std::pair<std::uint16_t, std::uint8_t>, std::set<std::size_t>> layouts;
  std::size_t starts = 0, stops = 0;
  for (const Descriptor& d : events) {
    if (d.id != 0) layouts[{d.id, d.version}].insert(d.payload_size);
    starts += d.opcode == kOpcodeStart;
    stops += d.opcode == kOpcodeStop;
  }
  for (const auto& [key, sizes] : layouts) {
    if (sizes.size() < 2) continue;
    out.push_back(make(catalog, rules::kDescIdVersion,
                       fmt::format("{}: Id {} Version {}", where, key.first, key.second),
                       fmt::format("one (provider, Id, Version) carries {} payload layouts "
                                   "(sizes {})",
                                   sizes.size(), fmt::join(sizes, ", "))));
  }
  if (starts != stops) {
    out.push_back(make(catalog, rules::kDescOpcode, where,
                       fmt::format("{} START (opcode 1) and {} STOP (opcode 2) events: an "
                                   "activity is left unpaired",
                                   starts, stops)));
  }
  return out;
}

std::vector<Finding> lint_named_layouts(
    const std::vector<std::pair<Descriptor, std::string>>& events, const std::string& where,
    const Catalog& catalog) {
  std::vector<Finding> out;
  std::map<std::pair<std::uint16_t, std::uint8_t>, std::set<std::string>> layouts;
  for (const auto& [d, layout] : events) {
    if (d.id != 0) layouts[{d.id, d.version}].insert(layout);
  }
  for (const auto& [key, seen] : layouts) {
    if (seen.size() < 2) continue;
    out.push_back(make(catalog, rules::kDescIdVersion,
                       fmt::format("{}: Id {} Version {}", where, key.first, key.second),
                       fmt::format("one (provider, Id, Version) carries {} payload layouts ({})",
                                   seen.size(), fmt::join(seen, ", "))));
  }
  return out;
}

std::vector<Finding> lint_traits(const std::vector<std::uint8_t>& blob, const std::string& where,
                                 const Catalog& catalog) {
  std::vector<Finding> out;
  auto u16 = [&](std::size_t at) {
    return static_cast<std::size_t>(blob[at] | (blob[at + 1] << 8));
  };
  if (blob.size() < 3 || u16(0) != blob.size()) return out;
  std::size_t at = 2;
  while (at < blob.size() && blob[at] != 0) ++at;
  if (at == blob.size()) return out;
  ++at;
  std::vector<std::pair<std::uint8_t, std::size_t>> traits;  // type, data size
  while (at < blob.size()) {
    if (at + 3 > blob.size()) return out;
    const std::size_t size = u16(at);
    if (size < 3 || at + size > blob.size()) return out;
    traits.emplace_back(blob[at + 2], size - 3);
    at += size;
  }
  for (const auto& [type, data_size] : traits) {
    if (type == kTraitTypeGroup && data_size == sizeof(GUID)) continue;
    if (type >= kFirstCustomTraitType) continue;
    out.push_back(make(catalog, rules::kTrTypeReserved,
                       fmt::format("{}: trait type {}", where, type),
                       fmt::format("trait type {} is reserved to Microsoft (1..127); custom "
                                   "traits use 128..255",
                                   type)));
  }
  if (blob.size() >= kTraitsSizeLimit) {
    out.push_back(make(catalog, rules::kTrSize256, where,
                       fmt::format("the traits blob is {} bytes; keep it under 256 (it travels "
                                   "with every event)",
                                   blob.size())));
  }
  return out;
}

std::vector<Finding> lint_classic_header(const ClassicHeader& h, const std::string& where,
                                         const Catalog& catalog) {
  std::vector<Finding> out;
  const std::uint32_t rolled = static_cast<std::uint32_t>(h.type) |
                               (static_cast<std::uint32_t>(h.level) << 8) |
                               (static_cast<std::uint32_t>(h.version) << 16);
  if (h.class_version != rolled) {
    out.push_back(make(catalog, rules::kHdrClassRollup, where,
                       fmt::format("Class.Version 0x{:08x} is not Type | Level << 8 | Version "
                                   "<< 16 = 0x{:08x}",
                                   h.class_version, rolled)));
  }
  if (h.type > kLastPredefinedType && h.type < kFirstCustomType) {
    out.push_back(
        make(catalog, rules::kHdrTypes, where,
             fmt::format("Type {} is neither predefined (0..8) nor custom (10 and up)", h.type)));
  }
  if ((h.flags & kTracedGuid) == 0) {
    out.push_back(make(catalog, rules::kHdrFlags, where, "Flags lack WNODE_FLAG_TRACED_GUID"));
  }
  if (((h.flags & kUseGuidPtr) != 0) != h.guid_ptr_used) {
    out.push_back(make(catalog, rules::kHdrFlags, where,
                       h.guid_ptr_used ? "GuidPtr is used without WNODE_FLAG_USE_GUID_PTR"
                                       : "WNODE_FLAG_USE_GUID_PTR is set but Guid is used"));
  }
  if (((h.flags & kUseMofPtr) != 0) != (h.mof_fields > 0)) {
    out.push_back(make(catalog, rules::kHdrFlags, where,
                       h.mof_fields > 0
                           ? "MOF_FIELDs follow without WNODE_FLAG_USE_MOF_PTR"
                           : "WNODE_FLAG_USE_MOF_PTR is set but no MOF_FIELD follows"));
  }
  if (h.mof_fields > kMaxMofFields) {
    out.push_back(make(catalog, rules::kHdrFlags, where,
                       fmt::format("{} MOF_FIELDs; at most MAX_MOF_FIELDS (16)", h.mof_fields)));
  }
  return out;
}

std::vector<std::uint8_t> traits_blob_of(const Step& step) {
  const TraitsStep& t = step_body<TraitsStep>(step);
  if (t.raw) return t.blob;
  std::vector<Trait> traits;
  if (t.group) traits.push_back(group_trait(*t.group));
  for (const FilterDef& t : t.custom) {
    traits.push_back(Trait{static_cast<std::uint8_t>(t.type), t.data});
  }
  return build_traits_blob(t.name, traits);
}

std::vector<Finding> lint_case(const Case& c, const Catalog& catalog) {
  std::vector<Finding> out;
  auto append = [&](std::vector<Finding> more) {
    out.insert(out.end(), std::make_move_iterator(more.begin()),
               std::make_move_iterator(more.end()));
  };
  // Per provider GUID, in first-use order: every event written, for the set rules.
  std::vector<std::pair<std::string, std::vector<Descriptor>>> written;
  for (const Step& step : c.steps) {
    const std::string where =
        fmt::format("{} {} provider {}", c.id, step.pointer, step_provider(step));
    if (const WriteStep* w = step.body.get_if<WriteStep>()) {
      auto it = std::find_if(written.begin(), written.end(),
                             [&](const auto& entry) { return entry.first == w->provider; });
      if (it == written.end()) it = written.insert(written.end(), {w->provider, {}});
      for (std::size_t i = 0; i < w->events.size(); ++i) {
        const EventDef& e = w->events[i];
        const Descriptor d{e.id,     e.version, e.channel,       e.level,
                           e.opcode, e.keyword, e.payload.size()};
        append(lint_descriptor(d, where + " event " + std::to_string(i), catalog));
        std::vector<std::uint8_t> meta;  // several Type 1 descriptors are one metadata block
        for (const TypedData& t : e.typed) {
          if (t.type == 1) meta.insert(meta.end(), t.data.begin(), t.data.end());
        }
        if (!meta.empty()) {
          append(lint_tl_metadata(meta, where + " event " + std::to_string(i), catalog));
        }
        for (std::uint32_t n = 0; n < std::max<std::uint32_t>(e.count, 1); ++n) {
          it->second.push_back(d);
        }
      }
    } else if (step.op == ops::kSetTraits) {
      std::vector<std::uint8_t> blob;
      try {
        blob = traits_blob_of(step);
      } catch (const std::exception&) {
        continue;  // Does not fit a blob at all: the runtime's TR-FORMAT cases judge that.
      }
      append(lint_traits(blob, where, catalog));
    } else if (step.op == ops::kTraceEvent) {
      append(lint_classic_header(classic_header_of(step_body<ClassicStep>(step).request), where,
                                 catalog));
    }
  }
  for (const auto& [provider, events] : written) {
    append(lint_event_set(events, fmt::format("{} provider {}", c.id, provider), catalog));
  }
  return out;
}

std::string describe(const Finding& f) {
  return fmt::format("{} {} {}: {}", f.severity == Severity::kFailure ? "FAILURE" : "WARNING",
                     f.rule, f.where, f.message);
}

Judgement judge(const std::vector<std::string>& expected, const std::vector<Finding>& found) {
  Judgement j;
  std::set<std::string> fired;
  for (const Finding& f : found) fired.insert(f.rule);
  std::vector<std::string> problems;
  for (const std::string& rule : expected) {
    if (!fired.count(rule)) {
      j.missing.push_back(rule);
      problems.push_back("lint rule " + rule + " did not fire");
    }
  }
  for (const std::string& rule : fired) {
    if (std::find(expected.begin(), expected.end(), rule) == expected.end()) {
      j.unexpected.push_back(rule);
      problems.push_back("lint rule " + rule + " fired unexpectedly");
    }
  }
  j.ok = problems.empty();
  std::vector<std::string> lines = problems;
  for (const Finding& f : found) lines.push_back(describe(f));
  j.message = fmt::format("{}", fmt::join(lines, "; "));
  return j;
}

}  // namespace etwh::lint
