// The adapter's side of a provider under test: a Registrar that wraps the user's callbacks so
// that every invocation is reported (as the agent reports its own registrations' callbacks), and
// the subject_* ops of providers/PROTOCOL.md. main() is here too: linking this library with a
// user's make_provider_under_test() gives a complete agent.
#include "etwh/provider_under_test.h"

#include "agent.h"
#include "callback_slots.h"
#include "event_json.h"
#include "platform.h"
#include "request_fields.h"
#include "win32_text.h"

#include <array>
#include <atomic>
#include <chrono>
#include <string>
#include <utility>

namespace etwh {
namespace {

using agent::LineWriter;
using nlohmann::json;

// What one wrapped registration needs in its callback. Lives until the process ends, so that a
// late callback still finds it.
struct WrappedCallback {
  std::string label;
  PENABLECALLBACK user_callback = nullptr;
  PVOID user_context = nullptr;
  REGHANDLE handle = 0;
  std::atomic<std::uint64_t> invocations{0};
  LineWriter* out = nullptr;
};

// PENABLECALLBACK carries nothing but the user's CallbackContext, which must reach their
// callback unchanged; so each registration gets its own wrapper function, one of kSlots
// instantiations, which finds its state here.
constexpr int kSlots = 32;
std::array<std::atomic<WrappedCallback*>, kSlots> g_wrapped{};

std::int64_t steady_ns(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

void wrapped_callback(int slot, LPCGUID source_id, ULONG is_enabled, UCHAR level,
                      ULONGLONG match_any, ULONGLONG match_all, PEVENT_FILTER_DESCRIPTOR filter,
                      PVOID context) {
  WrappedCallback* w = g_wrapped[static_cast<std::size_t>(slot)].load();
  if (w == nullptr) return;  // unregistered: nothing of the user's to call
  // Everything is read before the user's callback runs: FilterData is only valid during the
  // callback, and the user's code is what is measured.
  json event =
      callback_arguments_json(source_id, is_enabled, level, match_any, match_all, filter, context);
  event["event"] = "callback";
  event["provider"] = w->label;
  event["n"] = w->invocations.fetch_add(1) + 1;
  const auto entered = std::chrono::steady_clock::now();
  w->user_callback(source_id, is_enabled, level, match_any, match_all, filter, context);
  const auto left = std::chrono::steady_clock::now();
  event["t_ns"] = steady_ns(entered);
  event["duration_ns"] = steady_ns(left) - steady_ns(entered);
  w->out->write(event);
}

constexpr auto kSlotCallbacks = agent::make_slot_callbacks<wrapped_callback, kSlots>();

class Subject final : public agent::AgentExtension, public Registrar {
 public:
  Subject(std::unique_ptr<ProviderUnderTest> provider, LineWriter& out)
      : provider_(std::move(provider)), out_(out) {}

  std::optional<json> handle(const std::string& op, const json& request) override {
    if (op == "subject_register") return do_register(request);
    if (op == "subject_unregister") return do_unregister(request);
    if (op == "subject_write") return do_write(request);
    if (op == "subject_inject") return do_inject(request);
    return std::nullopt;
  }

  ULONG event_register(LPCGUID provider_id, PENABLECALLBACK callback, PVOID context,
                       PREGHANDLE handle) override {
    if (callback == nullptr) return EventRegister(provider_id, nullptr, context, handle);
    auto w = std::make_unique<WrappedCallback>();
    w->label = wrapped_.empty() ? label_ : label_ + "/" + std::to_string(wrapped_.size());
    w->user_callback = callback;
    w->user_context = context;
    w->out = &out_;
    int slot = -1;
    for (int i = 0; i < kSlots && slot < 0; ++i) {
      WrappedCallback* expected = nullptr;
      if (g_wrapped[static_cast<std::size_t>(i)].compare_exchange_strong(expected, w.get()))
        slot = i;
    }
    if (slot < 0) return ERROR_NOT_ENOUGH_MEMORY;  // more live registrations than wrappers
    // The slot is filled first: the platform may call back from inside EventRegister.
    const ULONG status =
        EventRegister(provider_id, kSlotCallbacks[static_cast<std::size_t>(slot)], context, handle);
    if (status != ERROR_SUCCESS) {
      g_wrapped[static_cast<std::size_t>(slot)].store(nullptr);
      return status;
    }
    w->handle = *handle;
    if (first_guid_.empty()) first_guid_ = format_guid(*provider_id);
    slots_.push_back(slot);
    wrapped_.push_back(std::move(w));
    return status;
  }

  ULONG event_unregister(REGHANDLE handle) override {
    const ULONG status = EventUnregister(handle);
    if (status != ERROR_SUCCESS) return status;
    // EventUnregister has waited for running callbacks: the wrapper may go quiet now.
    for (std::size_t i = 0; i < wrapped_.size(); ++i) {
      if (wrapped_[i]->handle == handle && slots_[i] >= 0) {
        g_wrapped[static_cast<std::size_t>(slots_[i])].store(nullptr);
        slots_[i] = -1;
      }
    }
    return status;
  }

 private:
  json do_register(const json& request) {
    RequestFields f(request);
    label_ = f.string("provider");
    f.reject_unknown();
    if (registered_) f.fail("provider", "the subject is already registered");
    const ULONG status = provider_->register_providers(*this);
    registered_ = status == ERROR_SUCCESS;
    const SubjectDescription d = provider_->describe();
    json reply = {{"status", status},
                  {"guid", first_guid_.empty() ? json(nullptr) : json(first_guid_)},
                  {"test_events", json::array()},
                  {"state_events", json::array()},
                  {"id_filter", d.id_filter ? json(*d.id_filter) : json(nullptr)}};
    for (const EVENT_DESCRIPTOR& e : d.test_events)
      reply["test_events"].push_back(descriptor_json(e));
    for (const EVENT_DESCRIPTOR& e : d.state_events)
      reply["state_events"].push_back(descriptor_json(e));
    reply["intended_lint"] = json::array();
    for (const SubjectDescription::IntendedLint& l : d.intended_lint)
      reply["intended_lint"].push_back(
          {{"rule", l.rule}, {"event", descriptor_json(l.event)}, {"reason", l.reason}});
    return reply;
  }

  json do_unregister(const json& request) {
    RequestFields(request).reject_unknown();
    const ULONG status = provider_->unregister_providers(*this);
    if (status == ERROR_SUCCESS) registered_ = false;
    return {{"status", status}};
  }

  json do_write(const json& request) {
    RequestFields f(request);
    const std::string which = f.optional_string("which").value_or("test");
    f.reject_unknown();
    if (which == "test") {
      provider_->write_test_events();
    } else if (which == "state") {
      provider_->write_state_events();
    } else {
      f.fail("which", "must be \"test\" or \"state\", got \"" + which + "\"");
    }
    return json::object();
  }

  // Calls the user's callback directly, as the platform would: the harness cannot make a
  // platform send an unknown control code, nor filter values no session gave (a provider that
  // writes more than its callback allows is only visible when the sessions take more).
  json do_inject(const json& request) {
    RequestFields f(request);
    const auto is_enabled = static_cast<ULONG>(f.unsigned_int("is_enabled", 0xFFFFFFFF));
    const auto level = static_cast<UCHAR>(f.optional_unsigned_int("level", 255).value_or(0));
    const ULONGLONG any = f.optional_hex("match_any").value_or(0);
    const ULONGLONG all = f.optional_hex("match_all").value_or(0);
    f.reject_unknown();
    if (wrapped_.empty() || slots_.front() < 0) {
      f.fail("is_enabled", "the subject has no registered provider with a callback");
    }
    const WrappedCallback& w = *wrapped_.front();
    const GUID null_source{};
    const auto entered = std::chrono::steady_clock::now();
    w.user_callback(&null_source, is_enabled, level, any, all, nullptr, w.user_context);
    const auto left = std::chrono::steady_clock::now();
    return {{"provider", w.label}, {"duration_ns", steady_ns(left) - steady_ns(entered)}};
  }

  std::unique_ptr<ProviderUnderTest> provider_;
  LineWriter& out_;
  std::string label_ = "subject";
  std::string first_guid_;
  bool registered_ = false;
  std::vector<std::unique_ptr<WrappedCallback>> wrapped_;
  std::vector<int> slots_;  // per wrapped_ entry; -1 once unregistered
};

}  // namespace
}  // namespace etwh

int main() {
  etwh::agent::prepare_stdio();
  etwh::agent::LineWriter out(stdout);
  etwh::agent::Agent agent(out);
  etwh::Subject subject(etwh::make_provider_under_test(), out);
  agent.set_extension(&subject);
  etwh::agent::run_agent_loop(agent, out);
}
