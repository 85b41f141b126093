#include "harness/observe/observe_run.h"

#include "harness/observe/channel.h"
#include "etwh/child_process.h"
#include "etwh/platform.h"
#include "etwh/stop_signals.h"
#include "harness/observe/filter_judge.h"
#include "harness/observe/judge.h"
#include "harness/observe/sessions.h"
#include "win32_text.h"

#include <fmt/format.h>

#include <boost/asio/io_context.hpp>

#include <cstdint>
#include <deque>
#include <fstream>
#include <map>
#include <thread>

namespace etwh::observe {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

Finding note(std::string text) {
  Finding f;
  f.check = kCheckObserved;
  f.text = std::move(text);
  f.severity = Severity::kNote;
  return f;
}

Finding harness_fault(std::string text) {
  Finding f;
  f.check = "harness";
  f.text = std::move(text);
  return f;
}

// The last `lines` lines of the program's output.
std::string tail_of(const fs::path& log, std::size_t lines) {
  std::ifstream in(log);
  std::deque<std::string> last;
  for (std::string line; std::getline(in, line);) {
    last.push_back(line);
    if (last.size() > lines) last.pop_front();
  }
  std::string out;
  for (const auto& l : last) out += l + "\n";
  return out;
}

// Everything that happens while the program runs.
class Observation {
 public:
  Observation(const ObserveOptions& o, Channel& channel, ChildProcess& child)
      : o_(o),
        channel_(channel),
        child_(child),
        sessions_(fmt::format("etwh-observe-{}", process_id())),
        deadline_(Clock::now() + o.timeout) {}

  // Runs until the program ends or the deadline; false when the deadline came first.
  bool run();
  std::vector<SessionAccount> stop_sessions() { return sessions_.stop_all(); }
  const std::vector<StepMark>& marks() const { return marks_; }
  std::vector<Finding>& faults() { return faults_; }
  std::optional<ExitStatus> exit;

 private:
  bool ended() {
    if (!exit) exit = child_.try_wait();
    return exit.has_value() || stop_requested();
  }
  void walk(std::uint64_t handle, const std::string& guid_text);

  const ObserveOptions& o_;
  Channel& channel_;
  ChildProcess& child_;
  Sessions sessions_;
  Clock::time_point deadline_;
  std::vector<StepMark> marks_;
  std::vector<Finding> faults_;
};

void Observation::walk(std::uint64_t handle, const std::string& guid_text) {
  const std::optional<GUID> guid = parse_guid(guid_text);
  if (!guid) {
    faults_.push_back(harness_fault("a register record with an unreadable GUID: " + guid_text));
    return;
  }
  for (std::size_t i = 0; i < o_.schedule.steps.size(); ++i) {
    if (ended() || Clock::now() > deadline_) return;
    marks_.push_back({handle, i, channel_.wait_beyond(SIZE_MAX, std::chrono::milliseconds(0))});
    for (const Action& a : o_.schedule.steps[i].actions) {
      if (ULONG st = sessions_.apply(a, *guid); st != ERROR_SUCCESS) {
        faults_.push_back(
            harness_fault(fmt::format("step \"{}\": the observer's session call "
                                      "failed with {}",
                                      o_.schedule.steps[i].name, st)));
      }
    }
    const auto until = Clock::now() + std::chrono::milliseconds(o_.schedule.step_ms);
    while (Clock::now() < until && !ended())
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  // The whole schedule ran: its last step lasted step_ms (judge.h's end mark).
  if (!ended()) {
    marks_.push_back({handle, o_.schedule.steps.size(),
                      channel_.wait_beyond(SIZE_MAX, std::chrono::milliseconds(0))});
  }
}

bool Observation::run() {
  std::size_t seen = 0;
  while (!ended()) {
    if (Clock::now() > deadline_) return false;
    const std::size_t now = channel_.wait_beyond(seen, std::chrono::milliseconds(20));
    for (const json& r : channel_.records(seen)) {
      if (r.value("kind", "") == "register") {
        walk(r.value("handle", std::uint64_t{0}), r.value("guid", ""));
      }
    }
    seen = now;
  }
  return true;
}

// Every event accounted for, per session: written (the write records naming the session: the
// events it took, written into its buffers or lost there) = delivered to its consumer + lost.
// Not checkable when the observation is incomplete (records dropped, no end record) or whole
// realtime buffers were lost (their events are not counted); a mismatch is an accounting failure
// the harness reports.
std::vector<Finding> account_sessions(const std::vector<SessionAccount>& accounts,
                                      const std::vector<json>& records, std::uint64_t dropped,
                                      bool end_seen) {
  std::map<std::uint64_t, std::uint64_t> written;  // by session handle
  for (const json& r : records) {
    if (r.value("kind", "") != "write" || !r.contains("sessions")) continue;
    for (const json& s : r["sessions"]) ++written[s.get<std::uint64_t>()];
  }
  std::vector<Finding> out;
  for (const SessionAccount& a : accounts) {
    const std::uint64_t w = written[a.handle];
    const std::string figures =
        fmt::format("session {}: written {}, delivered {}, lost {} (stop status {})", a.name, w,
                    a.delivered, a.lost, a.stop_status);
    Finding f;
    f.check = kAccountingCheck;
    f.expected = std::to_string(w);
    f.observed = std::to_string(a.delivered + a.lost);
    f.evidence = a.name;
    if (dropped > 0 || !end_seen || a.buffers_lost > 0) {
      f.severity = Severity::kNote;
      f.observed.clear();
      f.text = fmt::format(
          "{}: not checked: {} observation records dropped, end record {}, "
          "{} realtime buffers lost",
          figures, dropped, end_seen ? "seen" : "missing", a.buffers_lost);
    } else if (w != a.delivered + a.lost) {
      f.text = fmt::format(
          "{}: written != delivered + lost, {} events {}", figures,
          w > a.delivered + a.lost ? w - a.delivered - a.lost : a.delivered + a.lost - w,
          w > a.delivered + a.lost ? "unaccounted for" : "too many");
    } else {
      f.severity = Severity::kNote;
      f.text = figures + ": written = delivered + lost";
    }
    out.push_back(std::move(f));
  }
  return out;
}

CaseResult program_case(const ObserveOptions& o, Observation& obs, bool connected, bool in_time,
                        const std::vector<json>& records, const fs::path& log,
                        const std::vector<SessionAccount>& accounts, double duration) {
  CaseResult c;
  c.id = "observe/program";
  c.file = o.schedule_file;
  c.duration_s = duration;
  std::vector<Finding>& f = c.findings;
  if (!connected) {
    f.push_back(harness_fault(o.program.string() + " never opened the observation channel "
                                                   "(is it linked against libetwrt?)"));
  }
  if (!in_time) {
    f.push_back(harness_fault(fmt::format("{} still ran after the {} ms timeout: stopped",
                                          o.program.string(), o.timeout.count())));
  } else if (obs.exit) {
    f.push_back(note(o.program.string() + " " + obs.exit->describe()));
  }
  for (Finding& fault : obs.faults()) f.push_back(fault);
  std::uint64_t dropped = 0;
  bool end_seen = false;
  for (const json& r : records) {
    dropped = std::max(dropped, r.value("dropped", std::uint64_t{0}));
    if (r.value("kind", "") == "end") {
      end_seen = true;
      dropped = std::max(dropped, r.value("total_dropped", std::uint64_t{0}));
    }
  }
  f.push_back(
      note(fmt::format("{} observation records received, {} dropped by the program's "
                       "side (channel full or broken)",
                       records.size(), dropped)));
  if (connected && !end_seen) {
    f.push_back(
        note("no end record: the program ended without its exit handlers (a crash, "
             "_exit, a signal) or the record was dropped; later records may be missing"));
  }
  for (Finding& a : account_sessions(accounts, records, dropped, end_seen))
    f.push_back(std::move(a));
  f.push_back(note("program output (last lines):\n" + tail_of(log, 20)));
  c.status = Status::kPass;
  for (const Finding& x : f) {
    if (x.severity == Severity::kFailure) c.status = Status::kHarnessError;
  }
  c.as_expected = c.status == Status::kPass;
  c.message = summarize(f, "");
  return c;
}

}  // namespace

std::vector<CaseResult> observe_program(const ObserveOptions& o) {
  const char* home = std::getenv("ETWRT_HOME");
  const fs::path dir = home != nullptr ? fs::path(home) : fs::temp_directory_path();
  const fs::path log = dir / fmt::format("observe-{}.log", process_id());
  Channel channel(dir / fmt::format("observe-{}.sock", process_id()));
  boost::asio::io_context io;
  ChildOptions co;
  co.executable = o.program;
  co.args = o.args;
  co.env["ETWRT_OBSERVE_SOCKET"] = channel.path().string();
  co.stdin_mode = Stdio::kNull;
  co.log_file = log;
  co.own_process_group = true;
  const auto start = Clock::now();
  ChildProcess child(io, co);  // ChildProcessError: the caller's harness error
  Observation obs(o, channel, child);
  bool connected = false;
  while (!connected && !obs.exit && Clock::now() - start < o.timeout) {
    connected = channel.accept(std::chrono::milliseconds(50));
    if (!connected) obs.exit = child.try_wait();
  }
  bool in_time = connected ? obs.run() : !!obs.exit;
  if (!obs.exit) {
    child.kill();
    obs.exit = child.wait();
  }
  const std::vector<SessionAccount> accounts = obs.stop_sessions();
  if (connected) {
    while (!channel.closed()) channel.wait_beyond(SIZE_MAX, std::chrono::milliseconds(100));
  }
  const std::vector<json> records = channel.records();
  const double duration = std::chrono::duration<double>(Clock::now() - start).count();
  std::vector<CaseResult> cases = {
      program_case(o, obs, connected, in_time, records, log, accounts, duration)};
  DecodedKinds decoded;
  for (const SessionAccount& a : accounts) decoded.insert(a.decoded.begin(), a.decoded.end());
  JudgeInput in{&records, &obs.marks(), &o.schedule, o.schedule_file, o.catalog, &decoded};
  for (CaseResult& c : judge_providers(in)) cases.push_back(std::move(c));
  const FilterJudgeInput filters{&o.schedule, o.schedule_file, &accounts, &records, &obs.marks()};
  if (cases.size() > 1) {
    if (std::optional<CaseResult> c = judge_event_id_filters(filters)) cases.push_back(*c);
  }
  if (cases.size() == 1 && connected) {
    cases[0].findings.push_back(note("no provider registered: nothing to judge"));
  }
  return cases;
}

}  // namespace etwh::observe
