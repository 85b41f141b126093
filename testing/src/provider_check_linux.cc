// The provider check on etwrt (provider_check.h): `etwh observe`'s schedule, channel, sessions
// and judge (harness/observe/), in this process. The observation is switched on for the check
// (etwrt/observation.h) and off after it; a controller thread walks each provider that
// registers while the calling thread runs the code under test.
#include "etwh/testing/provider_check.h"

#include "harness/model/catalog.h"
#include "embedded_data.h"
#include "etwrt/observation.h"
#include "harness/observe/channel.h"
#include "harness/observe/judge.h"
#include "harness/observe/schedule.h"
#include "harness/observe/sessions.h"
#include "platform_home.h"
#include "win32_text.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <thread>

namespace etwh::testing {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
constexpr char kScheduleFile[] = "scenarios/observe/default.json";

std::atomic<unsigned> g_checks{0};

// Walks every provider that registers through the schedule, one after the other, until no
// provider is left to walk (or the deadline).
class Walker {
 public:
  Walker(observe::Channel& channel, const observe::Schedule& schedule, const std::string& prefix,
         Clock::time_point deadline)
      : channel_(channel), schedule_(schedule), sessions_(prefix), deadline_(deadline) {}

  void run(const std::atomic<bool>& registered, const std::atomic<bool>& abort) {
    std::size_t seen = 0;
    auto quiet_since = Clock::now();
    while (!abort && Clock::now() < deadline_) {
      const std::size_t now = channel_.wait_beyond(seen, std::chrono::milliseconds(20));
      for (const json& r : channel_.records(seen)) {
        if (r.value("kind", "") == "register") {
          walk(r.value("handle", std::uint64_t{0}), r.value("guid", ""), abort);
          quiet_since = Clock::now();
        }
      }
      seen = now;
      // Every register record of register_provider() arrived by now: it returned a while ago.
      if (registered && Clock::now() - quiet_since > std::chrono::milliseconds(200)) break;
    }
  }
  std::vector<observe::SessionAccount> stop() { return sessions_.stop_all(); }
  const std::vector<observe::StepMark>& marks() const { return marks_; }
  std::vector<std::string>& faults() { return faults_; }
  std::size_t walked() const { return walked_; }

 private:
  std::size_t records_now() { return channel_.wait_beyond(SIZE_MAX, std::chrono::milliseconds(0)); }

  void walk(std::uint64_t handle, const std::string& guid_text, const std::atomic<bool>& abort) {
    const std::optional<GUID> guid = parse_guid(guid_text);
    if (!guid) {
      faults_.push_back("a register record with an unreadable GUID: " + guid_text);
      return;
    }
    ++walked_;
    for (std::size_t i = 0; i < schedule_.steps.size(); ++i) {
      if (abort || Clock::now() > deadline_) return;
      marks_.push_back({handle, i, records_now()});
      for (const observe::Action& a : schedule_.steps[i].actions) {
        if (ULONG st = sessions_.apply(a, *guid); st != ERROR_SUCCESS) {
          faults_.push_back("step \"" + schedule_.steps[i].name +
                            "\": the check's session call failed with " + std::to_string(st));
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(schedule_.step_ms));
    }
    marks_.push_back({handle, schedule_.steps.size(), records_now()});
  }

  observe::Channel& channel_;
  const observe::Schedule& schedule_;
  observe::Sessions sessions_;
  Clock::time_point deadline_;
  std::vector<observe::StepMark> marks_;
  std::vector<std::string> faults_;
  std::size_t walked_ = 0;
};

ProviderFinding finding_of(const std::string& guid, const Finding& f) {
  ProviderFinding p;
  p.provider = "{" + guid + "}";
  p.rule = f.rule;
  p.check = f.check;
  p.expected = f.expected;
  p.observed = f.observed;
  p.step = f.step.op;
  p.text = f.text;
  return p;
}

// The judge's cases as the report's findings: failures, and the rules not judged.
void report_cases(const std::vector<CaseResult>& cases, ProviderReport& report) {
  const std::string prefix = "observe/";
  for (const CaseResult& c : cases) {
    std::string guid = c.id.substr(prefix.size());
    const bool not_judged_case = guid.find('/') != std::string::npos;
    guid = guid.substr(0, guid.find('/'));
    if (!not_judged_case) report.providers.push_back("{" + guid + "}");
    for (const Finding& f : c.findings) {
      if (f.check == observe::kNotJudgedCheck) {
        report.not_judged.push_back(finding_of(guid, f));
      } else if (f.severity == Severity::kFailure) {
        report.failures.push_back(finding_of(guid, f));
      }
    }
  }
}

struct Observation {
  std::unique_ptr<observe::Channel> channel;
  std::string error;
};

Observation open_observation() {
  Observation o;
  // Beside the private home, in the folder made for it (0700, this process's); with an
  // inherited home, in the temporary folder.
  const std::string home = private_home();
  const std::filesystem::path dir = home.empty() ? std::filesystem::temp_directory_path()
                                                 : std::filesystem::path(home).parent_path();
  const std::filesystem::path path = dir / ("check-" + std::to_string(::getpid()) + "-" +
                                            std::to_string(g_checks.fetch_add(1) + 1) + ".sock");
  try {
    o.channel = std::make_unique<observe::Channel>(path);
  } catch (const std::exception& e) {
    o.error = e.what();
    return o;
  }
  if (ULONG st = EtwrtObserveStart(path.c_str()); st != ERROR_SUCCESS) {
    o.error = "EtwrtObserveStart(" + path.string() + ") failed with " + std::to_string(st);
  } else if (!o.channel->accept(std::chrono::milliseconds(2000))) {
    o.error = "the observation did not connect";
    EtwrtObserveStop();
  }
  if (!o.error.empty()) o.channel.reset();
  return o;
}

}  // namespace

ProviderReport check_provider(const std::function<void()>& register_provider,
                              const std::function<void()>& work,
                              const std::function<void()>& unregister_provider,
                              const ProviderCheckOptions& options) {
  ProviderReport report;
  if (std::optional<std::string> problem = prepare_platform()) {
    report.errors.push_back(*problem);
    return report;
  }
  Catalog catalog;
  observe::Schedule schedule;
  try {
    catalog = load_catalog_text(kCatalogJson, "catalog/rules.json");
    schedule = observe::parse_schedule(kScheduleJson, kScheduleFile);
  } catch (const std::exception& e) {
    report.errors.push_back(std::string("the built-in catalog or schedule: ") + e.what());
    return report;
  }
  if (options.step.count() > 0) schedule.step_ms = static_cast<std::uint32_t>(options.step.count());
  // The providers register inside the check: its sessions get a broker of their own.
  enter_home(HomeScope::capture);
  Observation observation = open_observation();
  if (!observation.channel) {
    report.errors.push_back(observation.error);
    leave_home(HomeScope::capture);
    return report;
  }
  observe::Channel& channel = *observation.channel;
  Walker walker(channel, schedule, session_prefix() + "check" + std::to_string(g_checks.load()),
                Clock::now() + options.timeout);
  std::atomic<bool> registered{false}, abort{false}, walked{false};
  std::thread controller([&] {
    walker.run(registered, abort);
    walked = true;
  });
  try {
    register_provider();
    registered = true;
    while (!walked) {
      work();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  } catch (const std::exception& e) {
    report.errors.push_back(std::string("the code under test threw: ") + e.what());
    abort = true;
  }
  controller.join();
  try {
    unregister_provider();
  } catch (const std::exception& e) {
    report.errors.push_back(std::string("unregister_provider threw: ") + e.what());
  }
  const std::vector<observe::SessionAccount> accounts = walker.stop();
  EtwrtObserveStop();
  const auto until = Clock::now() + std::chrono::seconds(2);
  while (!channel.closed() && Clock::now() < until) {
    channel.wait_beyond(SIZE_MAX, std::chrono::milliseconds(50));
  }
  leave_home(HomeScope::capture);
  const std::vector<json> records = channel.records();
  for (std::string& f : walker.faults()) report.errors.push_back(std::move(f));
  if (walker.walked() == 0) {
    report.errors.push_back(
        "no provider registered inside register_provider (one registered "
        "before the check is not observed)");
  }
  observe::DecodedKinds decoded;
  for (const observe::SessionAccount& a : accounts)
    decoded.insert(a.decoded.begin(), a.decoded.end());
  const observe::JudgeInput in{&records,      &walker.marks(), &schedule,
                               kScheduleFile, &catalog,        &decoded};
  report_cases(observe::judge_providers(in), report);
  return report;
}

}  // namespace etwh::testing
