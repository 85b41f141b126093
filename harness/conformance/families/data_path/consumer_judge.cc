#include "harness/conformance/families/data_path/consumer_judge.h"

#include "harness/model/rules.h"
#include "harness/conformance/families/data_path/event_def.h"
#include "win32_text.h"

#include <evntrace.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <set>

namespace etwh {

namespace {

using nlohmann::json;

// RT_LostEvent's event types (EVENT_TRACE_TYPE_RT_LOST_*; not every SDK header names them).
constexpr unsigned kRtLostEvent = 32;
constexpr unsigned kRtLostBuffer = 33;

std::string join(const std::vector<std::string>& parts) {
  std::string s;
  for (const std::string& p : parts) s += (s.empty() ? "" : "; ") + p;
  return s;
}

// A consumer's mismatches, one finding per rule and kind: at most a few examples each, with
// the total.
// `event`: the decoded event the findings being added are about, if any.
struct Mismatches {
  std::map<std::pair<std::string, std::string>, std::vector<Finding>> by_key;
  std::optional<DecodedEvent> event;
  void add(const std::string& rule, const std::string& kind, std::string text,
           std::string expected = {}, std::string observed = {}) {
    Finding f = failed_check(rule, kind, std::move(text), std::move(expected), std::move(observed));
    f.event = event;
    by_key[{rule, kind}].push_back(std::move(f));
  }
};

// The agent's `decoded` of a record (PROTOCOL.md), when TDH could decode the event.
std::optional<DecodedEvent> decoded_of(const json& r) {
  const auto it = r.find("decoded");
  if (it == r.end() || !it->is_object() || !it->contains("fields")) return std::nullopt;
  DecodedEvent e;
  e.name = it->value("name", "");
  for (const json& f : it->at("fields")) {
    if (f.is_object()) e.fields.push_back({f.value("name", ""), f.value("value", "")});
  }
  return e;
}

// What RT_LostEvent records announced.
struct Loss {
  std::uint64_t events = 0, buffers = 0, refused = 0;
  bool unreadable = false;  // some announcement's count could not be read
};

class ConsumerJudge {
 public:
  ConsumerJudge(const oracle::ConsumerExpectation& want, const ConsumerFacts& facts)
      : want_(want),
        facts_(facts),
        who_("consumer " + want.consumer + " of session " + want.session) {
    for (const auto& ev : want.events) by_seq_[ev.seq] = &ev;
  }

  ConsumerVerdict judge(const json& reply, const json& properties) {
    const auto process_status = reply.value("process_status", 0xFFFFFFFFu);
    if (process_status != 0) {
      f_.add(rules::kConRecordMode, "ProcessTrace",
             fmt::format("ProcessTrace returned {}", process_status), "0",
             std::to_string(process_status));
    }
    if (!reply.value("returned_by_itself", false)) {
      f_.add(rules::kConRecordMode, "ProcessTrace",
             "ProcessTrace did not return when the session stopped (CloseTrace ended it)");
    }
    const json records = reply.value("records", json::array());
    check_header(records, process_status);
    for (std::size_t i = 0; i < records.size(); ++i) record(i, records[i]);
    if (names_rule(rules::kConClock)) check_clock(records);
    check_missing_and_loss(properties);
    ConsumerVerdict out;
    out.notes = std::move(notes_);
    for (const auto& [key, list] : f_.by_key) {
      Finding first = list.front();
      first.text = who_ + ": ";
      for (std::size_t k = 0; k < list.size() && k < 3; ++k) {
        first.text += (k ? "; " : "") + list[k].text;
      }
      if (list.size() > 3) first.text += fmt::format(" (and {} more)", list.size() - 3);
      if (list.size() > 1) first.evidence = fmt::format("{} such mismatches", list.size());
      out.failures.push_back(std::move(first));
    }
    return out;
  }

 private:
  void check_header(const json& records, unsigned process_status) {
    const bool header_first = !records.empty() && records[0].value("kind", "") == "header";
    if (header_first &&
        (records[0].value("opcode", 1u) != 0 ||
         records[0].value("payload", "").size() < 2 * sizeof(TRACE_LOGFILE_HEADER))) {
      f_.add(rules::kConHeaderEvent, "header",
             fmt::format("the header event has Opcode {} and {} payload bytes (expected Opcode 0 "
                         "and a TRACE_LOGFILE_HEADER, {} bytes)",
                         records[0].value("opcode", 1u), records[0].value("payload", "").size() / 2,
                         sizeof(TRACE_LOGFILE_HEADER)));
    }
    if (!header_first && process_status == 0) {
      f_.add(rules::kConHeaderEvent, "header",
             records.empty()
                 ? "no record at all, not even the header event"
                 : "the first record is not the EventTraceGuid header event: " + records[0].dump());
    }
  }

  bool names_rule(const char* rule) const {
    const auto& r = facts_.c->rules;
    return std::find(r.begin(), r.end(), rule) != r.end();
  }

  // CON-CLOCK: without PROCESS_TRACE_MODE_RAW_TIMESTAMP (the agent never sets it) every event's
  // TimeStamp is a FILETIME: not before the session started (the header's StartTime) and
  // within an hour of it (a case runs for seconds). A raw clock (QPC ticks, cycles) is far off.
  void check_clock(const json& records) {
    if (records.empty() || records[0].value("kind", "") != "header") return;  // CON-HEADER-EVENT
    const auto header = hex_to_bytes(records[0].value("payload", ""));
    constexpr std::size_t at = offsetof(TRACE_LOGFILE_HEADER, StartTime);
    if (!header || header->size() < at + 8) return;
    check_named_clock(*header);
    std::int64_t start = 0;
    for (int b = 7; b >= 0; --b) start = (start << 8) | (*header)[at + static_cast<std::size_t>(b)];
    constexpr std::int64_t kHour = 36'000'000'000;  // in 100 ns
    for (std::size_t i = 1; i < records.size(); ++i) {
      const json& r = records[i];
      if (r.value("kind", "") != "event" || facts_.set_aside(r)) continue;
      const std::int64_t ts = r.value("ts", std::int64_t{0});
      if (ts < start || ts > start + kHour) {
        f_.add(rules::kConClock, "timestamp",
               fmt::format("record #{}: TimeStamp {} is not a FILETIME of this session (its "
                           "StartTime is {})",
                           i, ts, start),
               fmt::format("a FILETIME in [{}, {}]", start, start + kHour), std::to_string(ts));
      }
    }
  }

  // CON-CLOCK: the header's ReservedFlags names the clock the session chose (0 and 1: QPC).
  void check_named_clock(const std::vector<std::uint8_t>& header) {
    constexpr std::size_t at = offsetof(TRACE_LOGFILE_HEADER, ReservedFlags);
    if (header.size() < at + 4) return;
    std::uint32_t named = 0;
    for (int b = 3; b >= 0; --b) named = (named << 8) | header[at + static_cast<std::size_t>(b)];
    if ((named == 0 ? 1 : named) == want_.clock) return;
    f_.add(rules::kConClock, "ReservedFlags",
           fmt::format("the header event's ReservedFlags is {}, the session's ClientContext {}",
                       named, want_.clock),
           std::to_string(want_.clock), std::to_string(named));
  }

  // One record, in arrival order.
  void record(std::size_t i, const json& r) {
    const std::string kind = r.value("kind", "");
    if (want_.event_record_mode) {
      if (parse_hex(r.value("context", "")) != want_.context) {
        f_.add(rules::kConUserContext, "context",
               fmt::format("record #{} ({}): UserContext expected {}, observed {}", i, kind,
                           format_hex(want_.context), r.value("context", "?")),
               format_hex(want_.context), r.value("context", "?"));
      }
    }
    if (kind == "header" || facts_.set_aside(r)) return;
    // RT_LostEvent is stamped when the gap is announced, ahead of older data: not ordered.
    if (kind == "lost") {
      lost(r);
      return;
    }
    const std::int64_t ts = r.value("ts", std::int64_t{0});
    if (ts < last_ts_) {
      ++inversions_;
      f_.add(rules::kConOrder, "timestamp",
             fmt::format("record #{} ({}) has TimeStamp {} < {} of the record before", i, kind, ts,
                         last_ts_));
    }
    last_ts_ = std::max(last_ts_, ts);
    f_.event = decoded_of(r);
    event(i, r);
    f_.event.reset();
  }

  void lost(const json& r) {
    const auto bytes = hex_to_bytes(r.value("payload", "")).value_or(std::vector<std::uint8_t>{});
    auto u64 = [&](std::size_t at) {
      std::uint64_t v = 0;
      for (int b = 7; b >= 0; --b) v = (v << 8) | bytes[at + static_cast<std::size_t>(b)];
      return v;
    };
    const unsigned type = r.value("opcode", 0u);
    if (type == kRtLostBuffer && bytes.size() >= 16) {
      loss_.buffers += u64(0);
      loss_.events += u64(8);
    } else if (type == kRtLostEvent && bytes.size() >= 8) {
      loss_.refused += u64(0);
      loss_.events += u64(0);
    } else {
      loss_.unreadable = true;
      notes_.push_back(fmt::format("{}: RT_LostEvent type {} with payload {} (count unknown)", who_,
                                   type, r.value("payload", "")));
    }
  }

  // An event record: written for this consumer, once, in order, with the fields written.
  void event(std::size_t i, const json& r) {
    if (!r.contains("seq") || !r["seq"].is_number_unsigned()) {
      f_.add(rules::kFltPerSession, "extra",
             fmt::format("unexpected record #{} without a sequence number: {}", i, r.dump()));
      return;
    }
    const auto seq = r["seq"].get<std::uint64_t>();
    auto it = by_seq_.find(seq);
    if (it == by_seq_.end()) {
      auto ex = want_.excluded.find(seq);
      if (ex != want_.excluded.end()) {
        f_.add(ex->second.rule, "extra",
               fmt::format("event #{} delivered but must not be: {}", seq, ex->second.reason),
               "not delivered", fmt::format("event #{} delivered", seq));
      } else {
        f_.add(rules::kFltPerSession, "extra",
               fmt::format("event #{} was never written for this consumer", seq));
      }
      return;
    }
    if (!seen_.insert(seq).second) {
      f_.add(rules::kConOrder, "duplicate", fmt::format("event #{} delivered twice", seq));
      return;
    }
    if (seq < last_seq_) {
      f_.add(rules::kConOrder, "order",
             fmt::format("event #{} arrived after event #{}", seq, last_seq_),
             fmt::format("event #{} before event #{}", seq, last_seq_),
             fmt::format("event #{} after event #{}", seq, last_seq_));
    }
    last_seq_ = std::max(last_seq_, seq);
    check_fields(*it->second, r);
  }

  // The fields of a delivered event against what was written (CON-RECORD-MODE, TR-IN-EVENTS).
  void check_fields(const oracle::ExpectedEvent& ev, const json& r) {
    const ProviderDef& p = facts_.c->providers.at(ev.provider);
    std::vector<std::string> wrong, expected, observed;
    auto expect = [&](const char* field, const json& value) {
      if (!r.contains(field) || r[field] != value) {
        const std::string seen = r.contains(field) ? r[field].dump() : "none";
        wrong.push_back(fmt::format("{} expected {}, observed {}", field, value.dump(), seen));
        expected.push_back(fmt::format("{} {}", field, value.dump()));
        observed.push_back(fmt::format("{} {}", field, seen));
      }
    };
    expect("provider", format_guid(p.guid));
    expect("opcode", ev.def.opcode);
    expect("level", ev.def.level);
    expect("version", ev.def.version);
    if (want_.event_record_mode) {
      expect("id", ev.def.id);
      expect("channel", ev.def.channel);
      expect("task", ev.def.task);
      expect("keyword", format_hex(ev.def.keyword));
    }
    std::vector<std::uint8_t> payload(8);
    for (std::size_t b = 0; b < 8; ++b) payload[b] = static_cast<std::uint8_t>(ev.seq >> (8 * b));
    payload.insert(payload.end(), ev.def.payload.begin(), ev.def.payload.end());
    if (ev.def.typed.empty()) {
      expect("payload", bytes_to_hex(payload.data(), payload.size()));
    } else {
      check_typed(ev, r, payload);
    }
    if (const auto pid = facts_.pid_of(p.agent)) expect("pid", *pid);
    if (want_.event_record_mode && ev.flags != 0 && (r.value("flags", 0u) & ev.flags) != ev.flags) {
      f_.add(ev.flags_rule, "flags",
             fmt::format("event #{}: EVENT_HEADER.Flags {:#x} lacks {:#x}", ev.seq,
                         r.value("flags", 0u), ev.flags));
    }
    if (!wrong.empty()) {
      f_.add(rules::kConRecordMode, "fields", fmt::format("event #{}: {}", ev.seq, join(wrong)),
             join(expected), join(observed));
    }
    if (want_.event_record_mode) check_traits(ev, r);
  }

  // Descriptors with a Type: event data while Type is ignored (TL-TYPE-IGNORED); otherwise
  // Type 1 becomes the EVENT_SCHEMA_TL item (TL-SCHEMA-ITEM) and Type 2 the traits item
  // (TL-PROVIDER-METADATA, checked with the traits), neither in the event data.
  void check_typed(const oracle::ExpectedEvent& ev, const json& r,
                   std::vector<std::uint8_t> payload) {
    std::vector<std::uint8_t> schema;
    for (const TypedData& t : ev.def.typed) {
      if (!ev.type_honoured) payload.insert(payload.end(), t.data.begin(), t.data.end());
      if (t.type == 1) schema.insert(schema.end(), t.data.begin(), t.data.end());
    }
    const char* rule = !ev.type_honoured ? rules::kTlTypeIgnored
                       : schema.empty()  ? rules::kTlProviderMetadata
                                         : rules::kTlSchemaItem;
    const std::string want = bytes_to_hex(payload.data(), payload.size());
    if (r.value("payload", "") != want) {
      const std::string seen = r.contains("payload") ? r["payload"].dump() : "none";
      f_.add(rule, "payload",
             fmt::format("event #{}: event data expected {} (Type {}), observed {}", ev.seq, want,
                         ev.type_honoured ? "honoured" : "ignored", seen),
             want, seen);
    }
    if (!want_.event_record_mode) return;
    const std::string want_schema =
        ev.type_honoured && !schema.empty() ? bytes_to_hex(schema.data(), schema.size()) : "";
    const std::string seen_schema = r.value("schema", "");
    if (seen_schema != want_schema) {
      f_.add(ev.type_honoured ? rules::kTlSchemaItem : rules::kTlTypeIgnored, "schema",
             fmt::format("event #{}: EVENT_SCHEMA_TL item expected {}, observed {}", ev.seq,
                         want_schema.empty() ? "none" : want_schema,
                         seen_schema.empty() ? "none" : seen_schema),
             want_schema.empty() ? "none" : want_schema,
             seen_schema.empty() ? "none" : seen_schema);
    }
  }

  // The traits item a Type 2 descriptor makes when Type is honoured and no traits were set.
  std::optional<std::string> manual_traits(const oracle::ExpectedEvent& ev) const {
    if (!ev.type_honoured || ev.traits) return std::nullopt;
    std::vector<std::uint8_t> blob;
    bool any = false;
    for (const TypedData& t : ev.def.typed) {
      if (t.type != 2) continue;
      any = true;
      blob.insert(blob.end(), t.data.begin(), t.data.end());
    }
    if (!any) return std::nullopt;
    return bytes_to_hex(blob.data(), blob.size());
  }

  void check_traits(const oracle::ExpectedEvent& ev, const json& r) {
    const bool has_type2 = std::any_of(ev.def.typed.begin(), ev.def.typed.end(),
                                       [](const TypedData& t) { return t.type == 2; });
    const char* rule = !has_type2         ? rules::kTrInEvents
                       : ev.type_honoured ? rules::kTlProviderMetadata
                                          : rules::kTlTypeIgnored;
    if (const std::optional<std::string> manual = manual_traits(ev)) {
      if (r.value("traits", "") != *manual) {
        const std::string seen = r.contains("traits") ? r["traits"].dump() : "none";
        f_.add(rule, "traits",
               fmt::format("event #{}: traits item from the Type 2 descriptor expected {}, "
                           "observed {}",
                           ev.seq, *manual, seen),
               *manual, seen);
      }
      return;
    }
    auto blob = facts_.traits->find(ev.provider);
    if (ev.traits && blob != facts_.traits->end()) {
      if (r.value("traits", "") != blob->second) {
        const std::string seen = r.contains("traits") ? r["traits"].dump() : "none";
        f_.add(rule, "traits",
               fmt::format("event #{}: traits extended data expected {}, observed {}", ev.seq,
                           blob->second, seen),
               blob->second, seen);
      }
    } else if (!ev.traits && r.contains("traits")) {
      f_.add(rule, "traits",
             fmt::format("event #{}: traits extended data from a provider that set none: {}",
                         ev.seq, r["traits"].dump()),
             "none", r["traits"].dump());
    }
  }

  void check_missing_and_loss(const json& properties) {
    std::uint64_t missing_lossy = 0;
    for (const auto& ev : want_.events) {
      if (seen_.count(ev.seq)) continue;
      if (ev.lossy) {
        ++missing_lossy;
        continue;
      }
      f_.add(ev.rule.empty() ? rules::kFltPerSession : ev.rule, "missing",
             fmt::format("event #{} ({} id {} level {} keyword {}) never arrived", ev.seq,
                         ev.provider, ev.def.id, ev.def.level, format_hex(ev.def.keyword)),
             fmt::format("event #{} delivered", ev.seq), "never arrived");
    }
    if (want_.lossy) {
      check_accounting(properties, missing_lossy);
    } else if (loss_.events != 0) {
      f_.add(rules::kConSlow, "lost",
             fmt::format("{} events reported lost where none may be", loss_.events), "0",
             std::to_string(loss_.events));
    }
    if (inversions_ > 0) {
      notes_.push_back(fmt::format("{}: {} timestamp inversions", who_, inversions_));
    }
    if (!want_.lossy) {
      notes_.push_back(fmt::format("{}: {} events delivered of {} expected, {} must-not events",
                                   who_, seen_.size(), want_.events.size(), want_.excluded.size()));
    }
  }

  // CON-SLOW: written = delivered + reported lost, exactly, and the session's counters agree.
  void check_accounting(const json& properties, std::uint64_t missing_lossy) {
    const std::uint64_t written = want_.events.size();
    const std::uint64_t delivered = seen_.size();
    notes_.push_back(fmt::format(
        "{}: written {} delivered {} reported lost {} (RT_LostEvent: {} buffers, {} refused "
        "at write); session EventsLost {} RealTimeBuffersLost {}",
        who_, written, delivered, loss_.events, loss_.buffers, loss_.refused,
        properties.value("events_lost", 0), properties.value("real_time_buffers_lost", 0)));
    if (delivered + loss_.events != written) {
      f_.add(rules::kConSlow, "accounting",
             fmt::format("written {} != delivered {} + reported lost {} (unaccounted {})", written,
                         delivered, loss_.events,
                         static_cast<std::int64_t>(written - delivered) -
                             static_cast<std::int64_t>(loss_.events)),
             std::to_string(written), std::to_string(delivered + loss_.events));
    }
    // The announcements and the session's counters tell the same loss (when every
    // RT_LostEvent could be read): events refused at write and buffers lost in delivery.
    if (!loss_.unreadable && properties.contains("events_lost") &&
        (loss_.refused != properties.value("events_lost", std::uint64_t{0}) ||
         loss_.buffers != properties.value("real_time_buffers_lost", std::uint64_t{0}))) {
      f_.add(rules::kConSlow, "counters",
             fmt::format("RT_LostEvent reports {} events refused and {} buffers lost; "
                         "ControlTrace says EventsLost {} and RealTimeBuffersLost {}",
                         loss_.refused, loss_.buffers, properties.value("events_lost", 0),
                         properties.value("real_time_buffers_lost", 0)));
    }
    if (want_.delay_us > 0 && missing_lossy == 0) {
      f_.add(rules::kConSlow, "no loss",
             fmt::format("a consumer slowed by {} us per event lost nothing of {} events",
                         want_.delay_us, written),
             "some loss", "none");
    }
  }

  const oracle::ConsumerExpectation& want_;
  const ConsumerFacts& facts_;
  const std::string who_;
  std::map<std::uint64_t, const oracle::ExpectedEvent*> by_seq_;
  Mismatches f_;
  std::vector<std::string> notes_;
  std::set<std::uint64_t> seen_;
  std::uint64_t last_seq_ = 0;
  std::int64_t last_ts_ = 0;
  std::uint64_t inversions_ = 0;
  Loss loss_;
};

}  // namespace

ConsumerVerdict judge_consumer(const oracle::ConsumerExpectation& want, const json& reply,
                               const json& properties, const ConsumerFacts& facts) {
  return ConsumerJudge(want, facts).judge(reply, properties);
}

}  // namespace etwh
