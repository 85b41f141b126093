#include "replies.h"

#include "trace_properties.h"
#include "wire.h"

#include <cstdio>
#include <exception>
#include <limits>
#include <new>
#include <string>
#include <system_error>

namespace etwrt {

using json = nlohmann::json;

ULONG reply_status(const ClientReply& reply, const char* what) {
  if (reply.status == kBadReply) {
    std::fprintf(stderr, "etwrt: %s: the broker's reply could not be read\n", what);
    return ERROR_INVALID_DATA;
  }
  if (reply.status != ERROR_SUCCESS) return reply.status;
  const auto status = reply.body.find("status");
  if (status == reply.body.end() || !status->is_number_unsigned() ||
      status->get<std::uint64_t>() > std::numeric_limits<ULONG>::max()) {
    std::fprintf(stderr, "etwrt: %s: the broker's reply has no valid status: %s\n", what,
                 reply.body.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
    return ERROR_INVALID_DATA;
  }
  return status->get<ULONG>();
}

ULONG fault_status(const char* entry) noexcept {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "etwrt: %s: out of memory\n", entry);
    return ERROR_NOT_ENOUGH_MEMORY;
  } catch (const std::system_error& e) {  // A thread or lock the call needed.
    std::fprintf(stderr, "etwrt: %s: %s\n", entry, e.what());
    return ERROR_NO_SYSTEM_RESOURCES;
  } catch (const std::exception& e) {  // A reply of the broker that is not as expected.
    std::fprintf(stderr, "etwrt: %s: %s\n", entry, e.what());
    return ERROR_INVALID_DATA;
  } catch (...) {
    std::fprintf(stderr, "etwrt: %s: unknown fault\n", entry);
    return ERROR_INVALID_DATA;
  }
}

SessionNames fill_fixed_properties(EVENT_TRACE_PROPERTIES* out, const json& q) {
  // All read before anything is written: a reply without a field changes nothing.
  EVENT_TRACE_PROPERTIES fixed = *out;  // The fixed part; the names follow it.
  EVENT_TRACE_PROPERTIES* p = &fixed;
  p->Wnode.HistoricalContext = q.at("handle").get<std::uint64_t>();
  GUID guid;
  if (guid_from_wire(q.at("guid").get<std::string>(), guid)) p->Wnode.Guid = guid;
  p->BufferSize = q.at("buffer_size").get<ULONG>();
  p->MinimumBuffers = q.at("minimum_buffers").get<ULONG>();
  p->MaximumBuffers = q.at("maximum_buffers").get<ULONG>();
  p->MaximumFileSize = q.at("maximum_file_size").get<ULONG>();
  p->LogFileMode = q.at("log_file_mode").get<ULONG>();
  p->FlushTimer = q.at("flush_timer").get<ULONG>();
  p->EnableFlags = q.at("enable_flags").get<ULONG>();
  p->Wnode.ClientContext = q.at("client_context").get<ULONG>();
  p->NumberOfBuffers = q.at("number_of_buffers").get<ULONG>();
  p->FreeBuffers = q.at("free_buffers").get<ULONG>();
  p->EventsLost = q.at("events_lost").get<ULONG>();
  p->BuffersWritten = q.at("buffers_written").get<ULONG>();
  p->LogBuffersLost = q.at("log_buffers_lost").get<ULONG>();
  p->RealTimeBuffersLost = q.at("real_time_buffers_lost").get<ULONG>();
  SessionNames names{q.at("name").get<std::string>(), q.value("log_file", std::string())};
  *out = fixed;
  return names;
}

void fill_properties(EVENT_TRACE_PROPERTIES* out, const json& q) {
  write_logger_name(out, fill_fixed_properties(out, q).logger);
}

PreEnabled read_pre_enabled(const json& body) {
  PreEnabled p;
  p.enabled = body.value("is_enabled", 0u) != 0;
  p.level = static_cast<UCHAR>(body.value("level", 0u));
  p.any = body.value("any", std::uint64_t{0});
  p.all = body.value("all", std::uint64_t{0});
#if defined(ETWRT_MUTANTS)
  if (body.contains("mutant_source")) {
    guid_from_wire(body["mutant_source"].get<std::string>(), p.source);
  }
#endif
  return p;
}

}  // namespace etwrt
