#include "classic_agent.h"

#include "agent.h"
#include "platform.h"
#include "request_fields.h"
#include "win32_text.h"

#include <windows.h>
#include <evntrace.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>
#include <vector>

namespace etwh::agent {

using nlohmann::json;

struct ClassicState {
  std::string label;
  LineWriter* out = nullptr;
  GUID control{};
  std::vector<GUID> classes;
  std::vector<TRACE_GUID_REGISTRATION> registrations;
  TRACEHANDLE handle = 0;
  bool registered = false;
  std::atomic<std::uint64_t> invocations{0};
  // What the last ControlCallback learnt (a classic provider filters its own events).
  std::mutex mu;
  TRACEHANDLE logger = 0;
  UCHAR level = 0;
  ULONG flags = 0;
  bool enabled = false;
};

namespace {

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

ULONG WINAPI control_callback(WMIDPREQUESTCODE code, PVOID context, ULONG*, PVOID buffer) {
  auto* s = static_cast<ClassicState*>(context);
  const std::int64_t entered = steady_ns();
  json event = {{"event", "classic_callback"},
                {"provider", s->label},
                {"n", ++s->invocations},
                {"request_code", static_cast<unsigned>(code)},
                {"t_ns", entered}};
  if (code == WMI_ENABLE_EVENTS) {
    // The documented way: the logger handle from the WNODE_HEADER, level and flags from it.
    const TRACEHANDLE logger = GetTraceLoggerHandle(buffer);
    const UCHAR level = GetTraceEnableLevel(logger);
    const ULONG flags = GetTraceEnableFlags(logger);
    {
      std::lock_guard lock(s->mu);
      s->logger = logger;
      s->level = level;
      s->flags = flags;
      s->enabled = true;
    }
    event["logger"] = format_hex(logger);
    event["level"] = level;
    event["flags"] = format_hex(flags);
  } else if (code == WMI_DISABLE_EVENTS) {
    std::lock_guard lock(s->mu);
    event["logger"] = format_hex(s->logger);
    s->enabled = false;
    s->logger = 0;
  }
  event["duration_ns"] = steady_ns() - entered;
  event["tid"] = current_tid();
  s->out->write(event);
  return ERROR_SUCCESS;
}

void put_sequence(std::vector<std::uint8_t>& bytes, std::uint64_t seq) {
  for (std::size_t b = 0; b < 8; ++b) bytes[b] = static_cast<std::uint8_t>(seq >> (8 * b));
}

}  // namespace

ClassicProviders::ClassicProviders(LineWriter& out) : out_(out) {}
ClassicProviders::~ClassicProviders() = default;

bool ClassicProviders::handle(const std::string& op, const json& request, json& reply) {
  if (op == "register_classic") {
    reply = do_register(request);
  } else if (op == "unregister_classic") {
    reply = do_unregister(request);
  } else if (op == "trace_event") {
    reply = do_trace_event(request);
  } else if (op == "trace_message") {
    reply = do_trace_message(request);
  } else {
    return false;
  }
  return true;
}

ClassicState& ClassicProviders::state(const std::string& label) {
  auto it = states_.find(label);
  if (it == states_.end() || !it->second->registered) {
    throw BadRequest("provider: no classic provider labelled \"" + label + "\" is registered");
  }
  return *it->second;
}

json ClassicProviders::do_register(const json& request) {
  RequestFields f(request);
  const std::string label = f.string("provider");
  const GUID control = f.guid("guid");
  std::vector<GUID> classes;
  if (const json* list = f.optional_array("classes")) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      const std::optional<GUID> g =
          (*list)[i].is_string() ? parse_guid((*list)[i].get<std::string>()) : std::nullopt;
      if (!g) f.fail("classes", "entry " + std::to_string(i) + " is not a GUID string");
      classes.push_back(*g);
    }
  }
  f.reject_unknown();
  auto found = states_.find(label);
  if (found != states_.end() && found->second->registered) {
    throw BadRequest("provider: \"" + label + "\" is registered already");
  }
  auto s = std::make_unique<ClassicState>();
  s->label = label;
  s->out = &out_;
  s->control = control;
  s->classes = classes;
  for (const GUID& g : s->classes) s->registrations.push_back({&g, nullptr});
  ClassicState* raw = s.get();
  // Kept even if the registration fails: a ControlCallback may already hold the pointer.
  if (found != states_.end()) {
    found->second.swap(s);
    retired_.push_back(std::move(s));
  } else {
    states_[label] = std::move(s);
  }
  const ULONG status = RegisterTraceGuidsA(
      &control_callback, raw, &raw->control, static_cast<ULONG>(raw->registrations.size()),
      raw->registrations.empty() ? nullptr : raw->registrations.data(), nullptr, nullptr,
      &raw->handle);
  raw->registered = status == ERROR_SUCCESS;
  return {{"status", status}, {"handle", format_hex(raw->handle)}};
}

json ClassicProviders::do_unregister(const json& request) {
  RequestFields f(request);
  ClassicState& s = state(f.string("provider"));
  f.reject_unknown();
  const ULONG status = UnregisterTraceGuids(s.handle);
  if (status == ERROR_SUCCESS) s.registered = false;
  return {{"status", status}};
}

json ClassicProviders::do_trace_event(const json& request) {
  RequestFields f(request);
  ClassicState& s = state(f.string("provider"));
  const GUID guid = f.optional_guid("guid").value_or(s.control);
  const auto type = static_cast<UCHAR>(f.optional_unsigned_int("type", 255).value_or(0));
  const auto level = static_cast<UCHAR>(f.optional_unsigned_int("level", 255).value_or(0));
  const auto version = static_cast<USHORT>(f.optional_unsigned_int("version", 65535).value_or(0));
  const std::vector<std::uint8_t> payload =
      f.optional_bytes("payload").value_or(std::vector<std::uint8_t>{});
  const auto count = f.optional_unsigned_int("count", 1'000'000).value_or(1);
  const auto sequence = f.optional_unsigned_int("sequence", 0xFFFFFFFFFFFFull);
  const bool guid_ptr = f.optional_bool("guid_ptr", false);
  // MOF_FIELDs instead of data after the header: the sequence number, the payload, then
  // empty fields up to `mof_fields` (to probe MAX_MOF_FIELDS).
  const bool mof = f.has("mof_fields");
  const auto mof_fields = f.optional_unsigned_int("mof_fields", 64).value_or(0);
  const auto size_override = f.optional_unsigned_int("size", 65535);
  const auto flags_override = f.optional_hex("flags");
  const bool only_enabled = f.optional_bool("only_enabled", false);
  f.reject_unknown();
  if (mof && mof_fields < 2) f.fail("mof_fields", "must be at least 2 (sequence and payload)");

  const std::size_t prefix = sequence ? 8 : 0;
  std::vector<std::uint8_t> data(prefix + payload.size());
  if (!payload.empty()) std::memcpy(data.data() + prefix, payload.data(), payload.size());
  ULONG first_status = ERROR_SUCCESS;
  std::uint64_t failed = 0, skipped = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    TRACEHANDLE logger;
    bool pass;
    {
      std::lock_guard lock(s.mu);
      logger = s.logger;
      // HDR-CLASSIC-LEVEL: the provider writes what its enable level includes (lower values
      // are more severe, so a level includes every level at or below it).
      pass = s.enabled && (level == 0 || level <= s.level);
    }
    if (only_enabled && !pass) {
      ++skipped;
      continue;
    }
    if (sequence) put_sequence(data, *sequence + i);
    std::vector<MOF_FIELD> fields;
    if (mof) {
      fields.resize(mof_fields);
      fields[0] = {reinterpret_cast<ULONG64>(data.data()), sequence ? 8u : 0u, 0};
      fields[1] = {reinterpret_cast<ULONG64>(data.data() + (sequence ? 8 : 0)),
                   static_cast<ULONG>(payload.size()), 0};
    }
    const std::size_t tail = mof ? fields.size() * sizeof(MOF_FIELD) : data.size();
    const std::size_t natural = sizeof(EVENT_TRACE_HEADER) + tail;
    // Real, zeroed memory behind an overridden Size, so the platform may read all of it.
    std::vector<std::uint8_t> storage(std::max<std::size_t>(natural, size_override.value_or(0)));
    EVENT_TRACE_HEADER header{};
    header.Size = static_cast<USHORT>(size_override.value_or(natural));
    header.Class.Type = type;
    header.Class.Level = level;
    header.Class.Version = version;
    header.Flags = WNODE_FLAG_TRACED_GUID | (guid_ptr ? WNODE_FLAG_USE_GUID_PTR : 0) |
                   (mof ? WNODE_FLAG_USE_MOF_PTR : 0);
    if (flags_override) header.Flags = static_cast<ULONG>(*flags_override);
    if (guid_ptr) {
      header.GuidPtr = reinterpret_cast<ULONGLONG>(&guid);
    } else {
      header.Guid = guid;
    }
    std::memcpy(storage.data(), &header, sizeof header);
    if (mof) {
      std::memcpy(storage.data() + sizeof header, fields.data(), tail);
    } else if (tail > 0) {
      std::memcpy(storage.data() + sizeof header, data.data(), tail);
    }
    const ULONG status = TraceEvent(logger, reinterpret_cast<PEVENT_TRACE_HEADER>(storage.data()));
    if (status != ERROR_SUCCESS) {
      if (failed++ == 0) first_status = status;
    }
  }
  return {{"status", first_status}, {"failed", failed}, {"skipped", skipped}};
}

json ClassicProviders::do_trace_message(const json& request) {
  RequestFields f(request);
  ClassicState& s = state(f.string("provider"));
  const auto number = static_cast<USHORT>(f.optional_unsigned_int("number", 65535).value_or(0));
  const auto message_flags = static_cast<ULONG>(
      f.optional_unsigned_int("message_flags", 0xffff).value_or(TRACE_MESSAGE_SEQUENCE));
  const std::vector<std::uint8_t> payload =
      f.optional_bytes("payload").value_or(std::vector<std::uint8_t>{});
  const auto count = f.optional_unsigned_int("count", 1'000'000).value_or(1);
  const auto sequence = f.optional_unsigned_int("sequence", 0xFFFFFFFFFFFFull);
  f.reject_unknown();
  std::uint8_t seq_bytes[8] = {};
  ULONG first_status = ERROR_SUCCESS;
  std::uint64_t failed = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    TRACEHANDLE logger;
    {
      std::lock_guard lock(s.mu);
      logger = s.logger;
    }
    ULONG status;
    // Arguments as (pointer, size_t length) pairs, ended by a NULL pointer.
    void* payload_ptr = payload.empty() ? nullptr : const_cast<std::uint8_t*>(payload.data());
    if (sequence) {
      for (std::size_t b = 0; b < 8; ++b) {
        seq_bytes[b] = static_cast<std::uint8_t>((*sequence + i) >> (8 * b));
      }
      status =
          TraceMessage(logger, message_flags, &s.control, number, static_cast<void*>(seq_bytes),
                       sizeof seq_bytes, payload_ptr, payload.size(), static_cast<void*>(nullptr));
    } else {
      status = TraceMessage(logger, message_flags, &s.control, number, payload_ptr, payload.size(),
                            static_cast<void*>(nullptr));
    }
    if (status != ERROR_SUCCESS) {
      if (failed++ == 0) first_status = status;
    }
  }
  return {{"status", first_status}, {"failed", failed}};
}

}  // namespace etwh::agent
