#include "win32_ops.h"

#include "request_fields.h"
#include "win32_text.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <limits>
#include <utility>

namespace etwh {
namespace {

constexpr std::uint64_t kULongMax = std::numeric_limits<ULONG>::max();

// Room ControlTraceA gets for each name it may return; the documented maximum name length.
constexpr std::size_t kControlNameRoom = 1024;

// EVENT_TRACE_PROPERTIES holds 64-bit members, so its buffer is allocated in 8-byte units.
class PropertiesBuffer {
 public:
  explicit PropertiesBuffer(std::size_t bytes) : bytes_(bytes), storage_((bytes + 7) / 8) {}
  EVENT_TRACE_PROPERTIES* get() {
    return reinterpret_cast<EVENT_TRACE_PROPERTIES*>(storage_.data());
  }
  char* at(std::size_t offset) { return reinterpret_cast<char*>(storage_.data()) + offset; }
  std::size_t size() const { return bytes_; }

 private:
  std::size_t bytes_;
  std::vector<std::uint64_t> storage_;
};

// A NUL-terminated string at `offset` inside the buffer, or nullopt if it does not lie wholly
// inside (an offset the platform left bad must not make us read past our own allocation).
std::optional<std::string> string_at(PropertiesBuffer& buffer, ULONG offset) {
  if (offset < sizeof(EVENT_TRACE_PROPERTIES) || offset >= buffer.size()) return std::nullopt;
  const char* begin = buffer.at(offset);
  const char* end = static_cast<const char*>(std::memchr(begin, 0, buffer.size() - offset));
  if (end == nullptr) return std::nullopt;
  return std::string(begin, end);
}

nlohmann::json properties_json(PropertiesBuffer& buffer) {
  const EVENT_TRACE_PROPERTIES& p = *buffer.get();
  nlohmann::json out = {
      {"buffer_size", p.BufferSize},
      {"minimum_buffers", p.MinimumBuffers},
      {"maximum_buffers", p.MaximumBuffers},
      {"number_of_buffers", p.NumberOfBuffers},
      {"free_buffers", p.FreeBuffers},
      {"events_lost", p.EventsLost},
      {"buffers_written", p.BuffersWritten},
      {"log_buffers_lost", p.LogBuffersLost},
      {"real_time_buffers_lost", p.RealTimeBuffersLost},
      {"flush_timer", p.FlushTimer},
      {"log_file_mode", p.LogFileMode},
      {"logger_name", nullptr},
  };
  if (auto name = string_at(buffer, p.LoggerNameOffset)) out["logger_name"] = *name;
  if (p.LogFileNameOffset != 0) {
    if (auto file = string_at(buffer, p.LogFileNameOffset)) out["log_file_name"] = *file;
  }
  return out;
}

// The session settings a start or update request may carry, applied over defaults.
void apply_settings(const RequestFields& f, EVENT_TRACE_PROPERTIES& p) {
  static constexpr std::pair<const char*, ULONG EVENT_TRACE_PROPERTIES::*> kSettings[] = {
      {"buffer_size_kb", &EVENT_TRACE_PROPERTIES::BufferSize},
      {"minimum_buffers", &EVENT_TRACE_PROPERTIES::MinimumBuffers},
      {"maximum_buffers", &EVENT_TRACE_PROPERTIES::MaximumBuffers},
      {"maximum_file_size", &EVENT_TRACE_PROPERTIES::MaximumFileSize},
      {"flush_timer", &EVENT_TRACE_PROPERTIES::FlushTimer},
      {"log_file_mode", &EVENT_TRACE_PROPERTIES::LogFileMode}};
  for (const auto& [name, field] : kSettings) {
    if (auto v = f.optional_unsigned_int(name, kULongMax)) p.*field = static_cast<ULONG>(*v);
  }
}

void init_wnode(EVENT_TRACE_PROPERTIES& p, std::size_t size) {
  p.Wnode.BufferSize = static_cast<ULONG>(size);
  p.Wnode.Flags = WNODE_FLAG_TRACED_GUID;
  // QueryPerformanceCounter clock, the documented default for new sessions.
  p.Wnode.ClientContext = 1;
}

std::uint8_t level_field(const RequestFields& f) {
  return static_cast<std::uint8_t>(f.unsigned_int("level", 255));
}

struct Filters {
  std::vector<std::vector<std::uint8_t>> data;
  std::vector<EVENT_FILTER_DESCRIPTOR> descriptors;
};

Filters read_filters(const RequestFields& params) {
  Filters out;
  const nlohmann::json* list = params.optional_array("filters");
  if (list == nullptr) return out;
  out.data.reserve(list->size());
  for (std::size_t i = 0; i < list->size(); ++i) {
    RequestFields f((*list)[i], params.path("filters[" + std::to_string(i) + "]."));
    auto type = static_cast<ULONG>(f.unsigned_int("type", kULongMax));
    out.data.push_back(f.bytes("data"));
    f.reject_unknown();
    EVENT_FILTER_DESCRIPTOR d{};
    d.Ptr = out.data.back().empty() ? 0 : reinterpret_cast<ULONGLONG>(out.data.back().data());
    d.Size = static_cast<ULONG>(out.data.back().size());
    d.Type = type;
    out.descriptors.push_back(d);
  }
  return out;
}

void put_u16(std::vector<std::uint8_t>& out, std::size_t value) {
  out.push_back(static_cast<std::uint8_t>(value & 0xFF));
  out.push_back(static_cast<std::uint8_t>((value >> 8) & 0xFF));
}

}  // namespace

std::optional<TRACEHANDLE> Controller::handle_of(const std::string& label) const {
  auto it = sessions_.find(label);
  if (it == sessions_.end()) return std::nullopt;
  return it->second.handle;
}

TRACEHANDLE Controller::requested_handle(const RequestFields& f,
                                         const std::optional<std::string>& label,
                                         std::optional<std::uint64_t> explicit_handle) const {
  if (!label) return explicit_handle.value_or(0);
  const auto it = sessions_.find(*label);
  if (it == sessions_.end()) {
    f.fail("session", "no session labelled \"" + *label + "\" was started here");
  }
  return it->second.handle;
}

nlohmann::json Controller::start_session(const nlohmann::json& request) {
  RequestFields f(request);
  std::string label = f.string("session");
  std::string name = f.string("name");
  if (sessions_.count(label) != 0) {
    f.fail("session", "label \"" + label + "\" already names a session started here");
  }
  auto log_file_name = f.optional_string("log_file_name");

  // Defaults a real caller would choose; any of them may be overridden below, validly or not.
  const std::size_t name_offset = sizeof(EVENT_TRACE_PROPERTIES);
  const std::size_t file_offset = name_offset + name.size() + 1;
  std::size_t size = file_offset + (log_file_name ? log_file_name->size() + 1 : 0);

  std::optional<std::uint64_t> wnode_buffer_size, logger_name_offset, log_file_name_offset;
  bool null_properties = false, null_handle = false, null_instance_name = false;
  if (const nlohmann::json* raw = f.optional_object("raw")) {
    RequestFields r(*raw, "raw.");
    wnode_buffer_size = r.optional_unsigned_int("wnode_buffer_size", kULongMax);
    logger_name_offset = r.optional_unsigned_int("logger_name_offset", kULongMax);
    log_file_name_offset = r.optional_unsigned_int("log_file_name_offset", kULongMax);
    null_properties = r.optional_bool("null_properties", false);
    null_handle = r.optional_bool("null_handle", false);
    null_instance_name = r.optional_bool("null_instance_name", false);
    r.reject_unknown();
  }

  // A BufferSize that claims more than we need is honoured with real memory, so that a
  // platform trusting it reads our zeros, never past the allocation.
  PropertiesBuffer buffer(std::max<std::size_t>(size, wnode_buffer_size.value_or(0)));
  EVENT_TRACE_PROPERTIES& p = *buffer.get();
  init_wnode(p, size);
  p.LogFileMode = EVENT_TRACE_REAL_TIME_MODE;
  p.LoggerNameOffset = static_cast<ULONG>(name_offset);
  if (log_file_name) {
    p.LogFileNameOffset = static_cast<ULONG>(file_offset);
    std::memcpy(buffer.at(file_offset), log_file_name->c_str(), log_file_name->size() + 1);
  }
  apply_settings(f, p);
  // The session's clock (WNODE_HEADER ClientContext); QPC, 1, when the case does not choose.
  if (auto v = f.optional_unsigned_int("client_context", kULongMax)) {
    p.Wnode.ClientContext = static_cast<ULONG>(*v);
  }
  f.reject_unknown();
  if (wnode_buffer_size) p.Wnode.BufferSize = static_cast<ULONG>(*wnode_buffer_size);
  if (logger_name_offset) p.LoggerNameOffset = static_cast<ULONG>(*logger_name_offset);
  if (log_file_name_offset) p.LogFileNameOffset = static_cast<ULONG>(*log_file_name_offset);

  TRACEHANDLE handle = 0;
  ULONG status =
      StartTraceA(null_handle ? nullptr : &handle, null_instance_name ? nullptr : name.c_str(),
                  null_properties ? nullptr : &p);
  nlohmann::json reply = {{"status", status}, {"handle", format_hex(handle)}};
  if (!null_properties) reply["properties"] = properties_json(buffer);
  if (status == ERROR_SUCCESS) sessions_[label] = Session{name, handle};
  return reply;
}

nlohmann::json Controller::control(const nlohmann::json& request) {
  RequestFields f(request);
  auto label = f.optional_string("session");
  auto name = f.optional_string("name");
  auto explicit_handle = f.optional_hex("handle");
  auto code = static_cast<ULONG>(f.unsigned_int("code", kULongMax));
  if (label && (name || explicit_handle)) {
    f.fail("session", "give either a session label or a name and/or handle, not both");
  }
  if (!label && !name && !explicit_handle) f.fail("session", "missing (or name, or handle)");

  const TRACEHANDLE handle = requested_handle(f, label, explicit_handle);

  const std::size_t size = sizeof(EVENT_TRACE_PROPERTIES) + 2 * kControlNameRoom;
  PropertiesBuffer buffer(size);
  EVENT_TRACE_PROPERTIES& p = *buffer.get();
  init_wnode(p, size);
  p.LoggerNameOffset = sizeof(EVENT_TRACE_PROPERTIES);
  p.LogFileNameOffset = static_cast<ULONG>(sizeof(EVENT_TRACE_PROPERTIES) + kControlNameRoom);
  // Only UPDATE reads these; zero means "leave unchanged" there.
  apply_settings(f, p);
  f.reject_unknown();

  ULONG status = ControlTraceA(handle, name ? name->c_str() : nullptr, &p, code);
  return {{"status", status}, {"properties", properties_json(buffer)}};
}

nlohmann::json Controller::enable(const nlohmann::json& request) {
  RequestFields f(request);
  std::string api = f.optional_string("api").value_or("EnableTraceEx2");
  if (api != "EnableTraceEx2" && api != "EnableTraceEx" && api != "EnableTrace") {
    f.fail("api",
           "must be \"EnableTraceEx2\", \"EnableTraceEx\" or \"EnableTrace\", got \"" + api + "\"");
  }
  auto label = f.optional_string("session");
  auto explicit_handle = f.optional_hex("handle");
  f.optional_string("name");  // informative only: enabling addresses a session by handle
  if (label && explicit_handle)
    f.fail("session", "give either a session label or a handle, not both");
  if (!label && !explicit_handle) f.fail("session", "missing (or handle)");
  const TRACEHANDLE handle = requested_handle(f, label, explicit_handle);

  GUID provider = f.guid("guid");
  auto control_code = static_cast<ULONG>(f.unsigned_int("control_code", kULongMax));
  UCHAR level = level_field(f);
  ULONGLONG match_any = f.hex("match_any");
  ULONGLONG match_all = f.optional_hex("match_all").value_or(0);
  auto timeout_ms =
      static_cast<ULONG>(f.optional_unsigned_int("timeout_ms", kULongMax).value_or(0));

  std::optional<ENABLE_TRACE_PARAMETERS> params;
  std::optional<GUID> source_id;
  Filters filters;
  if (const nlohmann::json* raw_params = f.optional_object("parameters")) {
    RequestFields pf(*raw_params, "parameters.");
    if (api == "EnableTrace") f.fail("parameters", "EnableTrace takes no parameters");
    if (api == "EnableTraceEx") {
      for (const char* key : {"version", "control_flags"}) {
        if (pf.has(key)) pf.fail(key, "cannot be expressed with EnableTraceEx");
      }
    }
    ENABLE_TRACE_PARAMETERS p{};
    p.Version = static_cast<ULONG>(
        pf.optional_unsigned_int("version", kULongMax).value_or(ENABLE_TRACE_PARAMETERS_VERSION_2));
    p.EnableProperty =
        static_cast<ULONG>(pf.optional_unsigned_int("enable_property", kULongMax).value_or(0));
    p.ControlFlags =
        static_cast<ULONG>(pf.optional_unsigned_int("control_flags", kULongMax).value_or(0));
    source_id = pf.optional_guid("source_id");
    p.SourceId = source_id.value_or(GUID_NULL);
    filters = read_filters(pf);
    pf.reject_unknown();
    if (api == "EnableTraceEx" && filters.descriptors.size() > 1) {
      pf.fail("filters", "EnableTraceEx takes at most one filter");
    }
    p.EnableFilterDesc = filters.descriptors.empty() ? nullptr : filters.descriptors.data();
    p.FilterDescCount = static_cast<ULONG>(filters.descriptors.size());
    params = p;
  }
  f.reject_unknown();

  ULONG status;
  if (api == "EnableTraceEx2") {
    status = EnableTraceEx2(handle, &provider, control_code, level, match_any, match_all,
                            timeout_ms, params ? &*params : nullptr);
  } else {
    if (timeout_ms != 0) f.fail("timeout_ms", api + " has no timeout");
    if (api == "EnableTraceEx") {
      status = EnableTraceEx(&provider, source_id ? &*source_id : nullptr, handle, control_code,
                             level, match_any, match_all, params ? params->EnableProperty : 0,
                             filters.descriptors.empty() ? nullptr : filters.descriptors.data());
    } else {
      if (match_any > kULongMax) f.fail("match_any", "EnableTrace's EnableFlag has 32 bits");
      if (match_all != 0) f.fail("match_all", "EnableTrace has no MatchAllKeyword");
      status = EnableTrace(control_code, static_cast<ULONG>(match_any), level, &provider, handle);
    }
  }
  return {{"status", status}};
}

std::vector<std::uint8_t> build_traits_blob(const std::string& provider_name,
                                            const std::vector<Trait>& traits) {
  constexpr std::size_t kMax = 0xFFFF;
  if (provider_name.find('\0') != std::string::npos) {
    throw BadRequest("provider_name: contains a NUL byte, which would end the name early");
  }
  std::size_t total = 2 + provider_name.size() + 1;
  for (std::size_t i = 0; i < traits.size(); ++i) {
    std::size_t trait_size = 3 + traits[i].data.size();
    if (trait_size > kMax) {
      throw BadRequest("traits[" + std::to_string(i) + "]: " + std::to_string(trait_size) +
                       " bytes do not fit a UINT16 TraitSize");
    }
    total += trait_size;
  }
  if (total > kMax) {
    throw BadRequest("traits: the blob would take " + std::to_string(total) +
                     " bytes, more than a UINT16 TraitsSize can say");
  }
  std::vector<std::uint8_t> blob;
  blob.reserve(total);
  put_u16(blob, total);
  blob.insert(blob.end(), provider_name.begin(), provider_name.end());
  blob.push_back(0);
  for (const Trait& t : traits) {
    put_u16(blob, 3 + t.data.size());
    blob.push_back(t.type);
    blob.insert(blob.end(), t.data.begin(), t.data.end());
  }
  return blob;
}

Trait group_trait(const GUID& group) {
  // The GUID's in-memory (little-endian) layout, as Windows stores it in the blob.
  // EtwProviderTraitTypeGroup; not every SDK's evntprov.h names it (mingw-w64's does not).
  constexpr std::uint8_t kTraitTypeGroup = 1;
  Trait t{kTraitTypeGroup, {}};
  for (int i = 0; i < 4; ++i) t.data.push_back(static_cast<std::uint8_t>(group.Data1 >> (8 * i)));
  for (int i = 0; i < 2; ++i) t.data.push_back(static_cast<std::uint8_t>(group.Data2 >> (8 * i)));
  for (int i = 0; i < 2; ++i) t.data.push_back(static_cast<std::uint8_t>(group.Data3 >> (8 * i)));
  t.data.insert(t.data.end(), std::begin(group.Data4), std::end(group.Data4));
  return t;
}

}  // namespace etwh
