// The driver's part of classic providers (classic_steps.h): agent requests and the check of
// the "classic_callback" events.
#include "harness/conformance/families/classic/classic_steps.h"

#include "agent_client.h"
#include "harness/conformance/oracle.h"
#include "harness/conformance/ordered_match.h"
#include "harness/model/rules.h"
#include "harness/conformance/scenario.h"
#include "harness/conformance/families/classic/classic_ops.h"
#include "win32_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace etwh::classic {

namespace {

using json = nlohmann::json;

constexpr std::uint32_t kWmiEnableEvents = 4;
constexpr auto kReplyWait = std::chrono::milliseconds(15000);

}  // namespace

json Run::run_step(const Case& c, const Step& step, const oracle::StepExpectation& e,
                   const DriverHooks& hooks) {
  const ClassicStep& cs = step_body<ClassicStep>(step);
  json request = cs.request;
  request["op"] = std::string(step.op);
  request["provider"] = cs.provider;
  if (step.op == ops::kRegisterClassic)
    request["guid"] = format_guid(c.providers.at(cs.provider).guid);
  if (step.op == ops::kTraceEvent || step.op == ops::kTraceMessage) {
    request["sequence"] = e.classic.first_seq;
  }
  const json reply = hooks.agent(c.providers.at(cs.provider).agent).call(request, kReplyWait);
  if (step.op == ops::kTraceEvent &&
      reply.value("skipped", std::uint64_t{0}) != e.classic.skipped) {
    const std::uint64_t skipped = reply.value("skipped", std::uint64_t{0});
    hooks.fail(failed_check(rules::kHdrClassicLevel, "skipped",
                            fmt::format("{}: the provider skipped {} events after reading its "
                                        "level with GetTraceEnableLevel; expected {}",
                                        cs.provider, skipped, e.classic.skipped),
                            std::to_string(e.classic.skipped), std::to_string(skipped)));
  }
  return reply;
}

void Run::compare(const std::string& label, const ExpectedControl& w, const json& ev,
                  const DriverHooks& hooks) {
  const std::string who = fmt::format("{} ControlCallback ({})", label, w.cause);
  if (const unsigned code = ev.value("request_code", 0u); code != w.code) {
    hooks.fail(
        failed_check(rules::kSesClassicOne, "RequestCode",
                     fmt::format("{}: RequestCode expected {}, observed {}", who, w.code, code),
                     std::to_string(w.code), std::to_string(code)));
    return;
  }
  const std::string logger = ev.value("logger", "");
  if (w.code == kWmiEnableEvents) {
    const char* values_rule = w.takeover ? rules::kSesClassicOne : rules::kHdrClassicLevel;
    if (const unsigned level = ev.value("level", 256u); level != w.level) {
      hooks.fail(failed_check(
          values_rule, "GetTraceEnableLevel",
          fmt::format("{}: GetTraceEnableLevel expected {}, observed {}", who, w.level, level),
          std::to_string(w.level), std::to_string(level)));
    }
    if (parse_hex(ev.value("flags", "")) != std::optional<std::uint64_t>(w.flags)) {
      const std::string flags = ev.value("flags", "?");
      hooks.fail(failed_check(values_rule, "GetTraceEnableFlags",
                              fmt::format("{}: GetTraceEnableFlags expected {}, observed {}", who,
                                          format_hex(w.flags), flags),
                              format_hex(w.flags), flags));
    }
    auto& loggers = loggers_[label];
    for (const auto& [session, seen] : loggers) {
      if (session != w.session && seen == logger) {
        hooks.fail(
            failed_check(rules::kSesClassicOne, "logger handle",
                         fmt::format("{}: logger handle {} is the one {} gave; expected {}'s own",
                                     who, logger, session, w.session),
                         w.session + "'s own", logger));
      }
    }
    if (loggers.count(w.session) && loggers[w.session] != logger) {
      hooks.note(fmt::format("{}: logger handle of {} changed from {} to {}", who, w.session,
                             loggers[w.session], logger));
    }
    loggers[w.session] = logger;
  }
}

void Run::check_callbacks(const Case& c, const oracle::StepExpectation& e,
                          const DriverHooks& hooks) {
  std::map<std::string, std::vector<const ExpectedControl*>> by_provider;
  for (const ExpectedControl& cb : e.classic.callbacks) by_provider[cb.provider].push_back(&cb);
  for (const auto& [label, want] : by_provider) {
    AgentProcess& a = hooks.agent(c.providers.at(label).agent);
    std::size_t& consumed = consumed_[label];
    auto mine = [&] {
      std::vector<json> out;
      for (const json& ev : a.events()) {
        if (ev.value("event", "") == "classic_callback" && ev.value("provider", "") == label) {
          out.push_back(ev);
        }
      }
      return out;
    };
    // Other providers of the agent count too; wait until ours are all there (or time out).
    const auto deadline = std::chrono::steady_clock::now() + hooks.callback_wait();
    std::vector<json> got = mine();
    while (got.size() < consumed + want.size() && std::chrono::steady_clock::now() < deadline) {
      a.wait_for_events("classic_callback", a.events().size() + 1, std::chrono::milliseconds(50));
      got = mine();
    }
    if (got.size() < consumed + want.size()) hooks.callback_missed();
    const OrderedMatch m = match_in_order(want.size(), got.size(), consumed);
    for (const auto& [w, g] : m.pairs) compare(label, *want[w], got[g], hooks);
    for (std::size_t w : m.missing) {
      hooks.fail(failed_check(rules::kSesClassicOne, "missing",
                              fmt::format("{} ControlCallback ({}): expected request {} never came",
                                          label, want[w]->cause, want[w]->code),
                              std::to_string(want[w]->code), "none"));
    }
    for (std::size_t g : m.extra) {
      hooks.fail(
          failed_check(rules::kSesClassicOne, "unexpected",
                       fmt::format("{}: unexpected ControlCallback {}", label, got[g].dump()),
                       "none", got[g].dump()));
    }
    consumed = got.size();
  }
  // Classic registrations with nothing expected at this step: anything new is unexpected.
  for (const auto& [label, def] : c.providers) {
    if (by_provider.count(label) || !consumed_.count(label)) continue;
    std::vector<json> events;
    try {
      events = hooks.agent(def.agent).events();
    } catch (const std::exception&) {
      continue;  // The agent ended on purpose earlier in the case.
    }
    std::size_t n = 0;
    for (const json& ev : events) {
      if (ev.value("event", "") != "classic_callback" || ev.value("provider", "") != label)
        continue;
      if (++n > consumed_[label]) {
        hooks.fail(failed_check(rules::kSesClassicOne, "unexpected",
                                fmt::format("{}: unexpected ControlCallback {}", label, ev.dump()),
                                "none", ev.dump()));
      }
    }
    consumed_[label] = std::max(consumed_[label], n);
  }
}

}  // namespace etwh::classic
