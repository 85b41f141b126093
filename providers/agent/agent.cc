#include "agent.h"
#include "callback_slots.h"
#include "event_json.h"
#include "last_error.h"

#include "platform.h"
#include "request_fields.h"
#include "win32_text.h"

#include <array>
#include <chrono>
#include <thread>
#include <utility>

namespace etwh::agent {
namespace {

using nlohmann::json;

// PENABLECALLBACK gives a callback nothing but the CallbackContext, and that value belongs to
// the driver (CB-CONTEXT checks it arrives unchanged). So each registration gets its own
// callback function instead, one of kSlots instantiations, which finds its state here.
constexpr int kSlots = 256;
std::array<std::atomic<CallbackState*>, kSlots> g_slots{};

// Where a callback that no registration owns is reported (set by the Agent).
std::atomic<LineWriter*> g_stray_out{nullptr};

// A request line as JSON. A number no double holds ("1e999") is out_of_range (406) to
// nlohmann, not a parse_error: still a line the agent cannot read, not an internal error.
json parse_request(const std::string& line) {
  try {
    return json::parse(line);
  } catch (const json::out_of_range& e) {
    throw BadRequest(std::string("request: not JSON: ") + e.what());
  }
}

void on_callback(int slot, LPCGUID source_id, ULONG is_enabled, UCHAR level, ULONGLONG match_any,
                 ULONGLONG match_all, PEVENT_FILTER_DESCRIPTOR filter, PVOID context) {
  auto entered = std::chrono::steady_clock::now();
  CallbackState* state = g_slots[static_cast<std::size_t>(slot)].load();
  json event =
      callback_arguments_json(source_id, is_enabled, level, match_any, match_all, filter, context);
  event["event"] = state != nullptr ? "callback" : "stray_callback";
  event["provider"] = state != nullptr ? json(state->label) : json(nullptr);
  event["n"] = state != nullptr ? state->invocations.fetch_add(1) + 1 : 0;
  if (state != nullptr && state->delay_ms > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(state->delay_ms));
  }
  auto left = std::chrono::steady_clock::now();
  event["t_ns"] =
      std::chrono::duration_cast<std::chrono::nanoseconds>(entered.time_since_epoch()).count();
  event["duration_ns"] =
      std::chrono::duration_cast<std::chrono::nanoseconds>(left - entered).count();
  event["tid"] = current_tid();
  if (state != nullptr) {
    state->out->write(event);
  } else if (LineWriter* out = g_stray_out.load()) {
    // No registration owns this slot: the platform called back after EventUnregister returned.
    event["slot"] = slot;
    out->write(event);
  }
}

constexpr auto kCallbacks = make_slot_callbacks<on_callback, kSlots>();

// Slots are handed out round-robin so that a slot freed by EventUnregister is the last one
// reused: a stray late callback then finds no state rather than another registration's.
int g_next_slot = 0;

int take_slot(CallbackState* state) {
  for (int i = 0; i < kSlots; ++i) {
    int slot = (g_next_slot + i) % kSlots;
    CallbackState* expected = nullptr;
    if (g_slots[static_cast<std::size_t>(slot)].compare_exchange_strong(expected, state)) {
      g_next_slot = (slot + 1) % kSlots;
      return slot;
    }
  }
  return -1;
}

void release_slot(int slot) {
  if (slot >= 0) g_slots[static_cast<std::size_t>(slot)].store(nullptr);
}

EVENT_DESCRIPTOR read_descriptor(const json& object) {
  RequestFields f(object, "descriptor.");
  EVENT_DESCRIPTOR d{};
  d.Id = static_cast<USHORT>(f.optional_unsigned_int("id", 0xFFFF).value_or(0));
  d.Version = static_cast<UCHAR>(f.optional_unsigned_int("version", 0xFF).value_or(0));
  d.Channel = static_cast<UCHAR>(f.optional_unsigned_int("channel", 0xFF).value_or(0));
  d.Level = static_cast<UCHAR>(f.optional_unsigned_int("level", 0xFF).value_or(0));
  d.Opcode = static_cast<UCHAR>(f.optional_unsigned_int("opcode", 0xFF).value_or(0));
  d.Task = static_cast<USHORT>(f.optional_unsigned_int("task", 0xFFFF).value_or(0));
  d.Keyword = f.optional_hex("keyword").value_or(0);
  f.reject_unknown();
  return d;
}

}  // namespace

Agent::Agent(LineWriter& out) : out_(out) { g_stray_out.store(&out); }

void LineWriter::write(const json& line) {
  // Replacement keeps a line parseable even if a platform string is not valid UTF-8.
  std::string text = line.dump(-1, ' ', false, json::error_handler_t::replace);
  text.push_back('\n');
  std::lock_guard<std::mutex> lock(mutex_);
  std::fwrite(text.data(), 1, text.size(), stream_);
  std::fflush(stream_);
}

Agent::Next Agent::handle_line(const std::string& line, int& exit_code) {
  json reply = {{"id", nullptr}};
  Next next = Next::kContinue;
  try {
    json request = parse_request(line);
    if (!request.is_object()) throw BadRequest("request: must be a JSON object");
    auto id = request.find("id");
    if (id == request.end()) throw BadRequest("id: missing");
    if (!id->is_number_integer()) throw BadRequest("id: must be an integer");
    reply["id"] = *id;
    auto op = request.find("op");
    if (op == request.end()) throw BadRequest("op: missing");
    if (!op->is_string()) throw BadRequest("op: must be a string");
    json body = request;
    body.erase("id");
    body.erase("op");
    json fields = dispatch(op->get<std::string>(), body, next, exit_code);
    if (next == Next::kCrash) return next;
    reply["ok"] = true;
    reply.update(fields);
  } catch (const json::parse_error& e) {
    reply["ok"] = false;
    reply["error"] = std::string("request: not JSON: ") + e.what();
  } catch (const BadRequest& e) {
    reply["ok"] = false;
    reply["error"] = e.what();
    next = Next::kContinue;
  } catch (const std::exception& e) {
    // The agent's own fault, never the request's: said by a field, since a request's field
    // name can be any text and is quoted in the error.
    reply["ok"] = false;
    reply["internal"] = true;
    reply["error"] = std::string("agent: internal error: ") + e.what();
    next = Next::kContinue;
  }
  out_.write(reply);
  return next;
}

json Agent::dispatch(const std::string& op, const json& request, Next& next, int& exit_code) {
  if (extension_ != nullptr) {
    if (std::optional<json> reply = extension_->handle(op, request)) return *reply;
  }
  if (json reply; classic_.handle(op, request, reply)) return reply;
  if (op == "ping") {
    RequestFields(request).reject_unknown();
    return {{"pid", current_pid()}};
  }
  if (op == "register") return do_register(request);
  if (op == "unregister") return do_unregister(request);
  if (op == "set_information") return do_set_information(request);
  if (op == "query_enabled") return do_query_enabled(request);
  if (op == "write") return do_write(request);
  if (op == "consume_start") return do_consume_start(request);
  if (op == "consume_stop") return do_consume_stop(request);
  if (op == "consume_process") return do_consume_process(request);
  if (op == "last_error") {
    RequestFields f(request);
    const std::string api = f.string("api");
    f.reject_unknown();
    json reply = call_and_read_last_error(api);
    if (reply.empty()) f.fail("api", "unknown api \"" + api + "\"");
    return reply;
  }
  if (op == "start_session") return controller_.start_session(request);
  if (op == "enable") return controller_.enable(request);
  if (op == "control") return controller_.control(request);
  if (op == "sleep") {
    RequestFields f(request);
    auto ms = f.unsigned_int("ms", 3'600'000);
    f.reject_unknown();
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    return json::object();
  }
  if (op == "exit") {
    RequestFields f(request);
    exit_code = static_cast<int>(f.optional_unsigned_int("code", 255).value_or(0));
    f.reject_unknown();
    next = Next::kExit;
    return json::object();
  }
  if (op == "crash") {
    RequestFields(request).reject_unknown();
    next = Next::kCrash;
    return json::object();
  }
  throw BadRequest("op: unknown op \"" + op + "\"");
}

Agent::Registration& Agent::registration(const std::string& label) {
  auto it = registrations_.find(label);
  if (it == registrations_.end()) {
    throw BadRequest("provider: no provider labelled \"" + label + "\" is registered");
  }
  return it->second;
}

json Agent::do_register(const json& request) {
  RequestFields f(request);
  std::string label = f.string("provider");
  GUID guid = f.guid("guid");
  std::uint64_t context = f.optional_hex("context").value_or(0);
  std::string callback = f.optional_string("callback").value_or("record");
  if (callback != "record" && callback != "none") {
    f.fail("callback", "must be \"record\" or \"none\", got \"" + callback + "\"");
  }
  std::uint32_t delay_ms = 0;
  if (const json* behavior = f.optional_object("behavior")) {
    RequestFields b(*behavior, "behavior.");
    delay_ms =
        static_cast<std::uint32_t>(b.optional_unsigned_int("delay_ms", 3'600'000).value_or(0));
    b.reject_unknown();
  }
  f.reject_unknown();
  if (registrations_.count(label) != 0) {
    f.fail("provider", "label \"" + label + "\" is already registered in this agent");
  }

  Registration reg;
  if (callback == "record") {
    auto state = std::make_unique<CallbackState>();
    state->label = label;
    state->delay_ms = delay_ms;
    state->out = &out_;
    // The slot is filled before EventRegister: the platform may call back from inside it.
    reg.slot = take_slot(state.get());
    if (reg.slot < 0) {
      f.fail("provider", "no callback slot left (" + std::to_string(kSlots) +
                             " live registrations with callbacks at most)");
    }
    reg.state = state.get();
    states_.push_back(std::move(state));
  }
  ULONG status =
      EventRegister(&guid, reg.slot >= 0 ? kCallbacks[static_cast<std::size_t>(reg.slot)] : nullptr,
                    reinterpret_cast<PVOID>(static_cast<std::uintptr_t>(context)), &reg.handle);
  json reply = {{"status", status}, {"handle", format_hex(reg.handle)}};
  if (status == ERROR_SUCCESS) {
    registrations_[label] = reg;
  } else {
    release_slot(reg.slot);
  }
  return reply;
}

json Agent::do_unregister(const json& request) {
  RequestFields f(request);
  std::string label = f.string("provider");
  f.reject_unknown();
  Registration& reg = registration(label);
  ULONG status = EventUnregister(reg.handle);
  if (status == ERROR_SUCCESS) {
    // EventUnregister has waited for running callbacks, so the slot is free from now on.
    release_slot(reg.slot);
    registrations_.erase(label);
  }
  return {{"status", status}};
}

json Agent::do_set_information(const json& request) {
  RequestFields f(request);
  Registration& reg = registration(f.string("provider"));
  // At most 4, the Windows SDK's MaxEventInfo (mingw-w64's header declares fewer classes): C++
  // cannot form an EVENT_INFO_CLASS outside its enumerators' range without undefined behaviour,
  // so a larger value is a bad request, not a probe.
  auto info_class = static_cast<EVENT_INFO_CLASS>(f.unsigned_int("class", 4));
  std::vector<std::uint8_t> data = f.bytes("data");
  // A length other than the data's own lets a case probe how the platform checks it; the
  // buffer is padded with zeros so that the platform never reads past our allocation.
  auto length = f.optional_unsigned_int("length", 0xFFFFFFFF).value_or(data.size());
  f.reject_unknown();
  if (data.size() < length) data.resize(static_cast<std::size_t>(length));
  ULONG status = EventSetInformation(reg.handle, info_class, data.empty() ? nullptr : data.data(),
                                     static_cast<ULONG>(length));
  return {{"status", status}};
}

json Agent::do_query_enabled(const json& request) {
  RequestFields f(request);
  Registration& reg = registration(f.string("provider"));
  auto level = static_cast<UCHAR>(f.unsigned_int("level", 255));
  ULONGLONG keyword = f.hex("keyword");
  const json* descriptor = f.optional_object("descriptor");
  f.reject_unknown();
  json reply = {{"provider_enabled", EventProviderEnabled(reg.handle, level, keyword) != 0}};
  if (descriptor != nullptr) {
    EVENT_DESCRIPTOR d = read_descriptor(*descriptor);
    reply["event_enabled"] = EventEnabled(reg.handle, &d) != 0;
  }
  return reply;
}

json Agent::do_write(const json& request) {
  RequestFields f(request);
  Registration& reg = registration(f.string("provider"));
  const json* descriptor = f.optional_object("descriptor");
  if (descriptor == nullptr) f.fail("descriptor", "missing");
  EVENT_DESCRIPTOR d = read_descriptor(*descriptor);
  std::vector<std::uint8_t> payload =
      f.optional_bytes("payload").value_or(std::vector<std::uint8_t>{});
  auto count = f.optional_unsigned_int("count", 1'000'000'000).value_or(1);
  // A sequence number in the first 8 payload bytes (little-endian) lets the driver judge order,
  // loss and duplicates exactly.
  auto sequence = f.optional_unsigned_int("sequence", 0xFFFFFFFFFFFFull);
  // Descriptors with a Type (EVENT_DATA_DESCRIPTOR page), after the payload's.
  std::vector<std::vector<std::uint8_t>> typed_bytes;
  std::vector<UCHAR> typed_types;
  if (const json* typed = f.optional_array("typed")) {
    for (const json& t : *typed) {
      RequestFields tf(t);
      typed_types.push_back(static_cast<UCHAR>(tf.unsigned_int("type", 255)));
      typed_bytes.push_back(tf.bytes("data"));
      tf.reject_unknown();
    }
  }
  f.reject_unknown();
  if (sequence) payload.insert(payload.begin(), 8, 0);
  std::vector<EVENT_DATA_DESCRIPTOR> data(1 + typed_bytes.size());
  EventDataDescCreate(&data[0], payload.data(), static_cast<ULONG>(payload.size()));
  for (std::size_t i = 0; i < typed_bytes.size(); ++i) {
    EventDataDescCreate(&data[i + 1], typed_bytes[i].data(),
                        static_cast<ULONG>(typed_bytes[i].size()));
    // Type is Reserved's low byte; older mingw-w64 headers know only Reserved.
    data[i + 1].Reserved = typed_types[i];
  }
  // No payload: only the typed descriptors (none at all when there are none either).
  const ULONG first = payload.empty() ? 1 : 0;
  const auto count_of = static_cast<ULONG>(data.size() - first);
  ULONG first_error = ERROR_SUCCESS;
  std::uint64_t failed = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    if (sequence) {
      std::uint64_t v = *sequence + i;
      for (int b = 0; b < 8; ++b)
        payload[static_cast<std::size_t>(b)] = static_cast<std::uint8_t>(v >> (8 * b));
    }
    ULONG status = EventWrite(reg.handle, &d, count_of, count_of == 0 ? nullptr : &data[first]);
    if (status != ERROR_SUCCESS) {
      if (failed == 0) first_error = status;
      ++failed;
    }
  }
  return {{"status", first_error}, {"failed", failed}};
}

json Agent::do_consume_start(const json& request) {
  RequestFields f(request);
  std::string label = f.string("consumer");
  std::string name = f.string("name");
  std::string mode = f.optional_string("mode").value_or("event_record");
  if (mode != "event_record" && mode != "event_trace") {
    f.fail("mode", "must be \"event_record\" or \"event_trace\", got \"" + mode + "\"");
  }
  std::uint64_t context = f.optional_hex("context").value_or(0);
  auto delay_us =
      static_cast<std::uint32_t>(f.optional_unsigned_int("delay_us", 1'000'000).value_or(0));
  auto wait_ms = f.optional_unsigned_int("wait_ms", 600'000).value_or(5000);
  auto decode_skip = f.optional_unsigned_int("decode_skip", 65535).value_or(0);
  std::string manifest = f.optional_string("manifest").value_or("");
  // process false: OpenTrace alone (the session may not run yet), ProcessTrace at
  // consume_process.
  const bool process = f.optional_bool("process", true);
  const bool overwrite = f.optional_bool("overwrite_logfile", false);
  f.reject_unknown();
  if (consumers_.count(label) != 0) f.fail("consumer", "label \"" + label + "\" is already in use");
  auto c = std::make_unique<Consumer>(
      name, mode == "event_record" ? Consumer::Mode::kEventRecord : Consumer::Mode::kEventTrace,
      context, delay_us);
  if (const ULONG s = c->decode(decode_skip, manifest); s != ERROR_SUCCESS) {
    return {{"status", s}, {"attached", false}, {"manifest_status", s}};
  }
  json reply = c->open(overwrite);
  if (reply.value("status", 1) == 0 && process) {
    reply = c->process(std::chrono::milliseconds(wait_ms));
  }
  consumers_[label] = std::move(c);
  return reply;
}

std::map<std::string, std::unique_ptr<Consumer>>::iterator Agent::named_consumer(
    const json& request, std::chrono::milliseconds& wait) {
  RequestFields f(request);
  std::string label = f.string("consumer");
  wait = std::chrono::milliseconds(f.optional_unsigned_int("wait_ms", 600'000).value_or(5000));
  f.reject_unknown();
  auto it = consumers_.find(label);
  if (it == consumers_.end()) f.fail("consumer", "no consumer labelled \"" + label + "\"");
  return it;
}

json Agent::do_consume_process(const json& request) {
  std::chrono::milliseconds wait{};
  return named_consumer(request, wait)->second->process(wait);
}

json Agent::do_consume_stop(const json& request) {
  std::chrono::milliseconds wait{};
  auto it = named_consumer(request, wait);
  json reply = it->second->stop(wait);
  consumers_.erase(it);
  return reply;
}

}  // namespace etwh::agent
