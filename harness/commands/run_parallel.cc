#include "harness/commands/run_parallel.h"
#include "harness/conformance/families/sessions/sessions_ops.h"
#include "harness/conformance/families/traits/traits_ops.h"

#include "etwh/stop_signals.h"
#include "win32_text.h"

#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

namespace etwh::cli {

std::set<std::string> machine_wide_resources(const Case& c) {
  std::set<std::string> held;
  for (const auto& [label, p] : c.providers)
    held.insert(p.subject ? "subject" : format_guid(p.guid));
  for (const Step& step : c.steps) {
    std::optional<GUID> group;
    if (const auto* control = step.body.get_if<ControlStep>()) group = control->group;
    if (const auto* traits = step.body.get_if<TraitsStep>()) group = traits->group;
    if (group) held.insert(format_guid(*group));
  }
  return held;
}

namespace {

// Hands out the runs, in order, to the workers: a run whose case shares a resource with a
// running one waits; the runs after it may go first.
class Scheduler {
 public:
  explicit Scheduler(const Selection& selection) : selection_(selection) {
    for (const Case& c : selection.cases) resources_.push_back(machine_wide_resources(c));
    started_.assign(selection.runs.size(), false);
    results_.resize(selection.runs.size());
  }

  // The index of the next run to start; nullopt when none is left, a stop was requested or a
  // worker failed. Waits while every remaining run conflicts with a running one.
  std::optional<std::size_t> take() {
    std::unique_lock lock(mutex_);
    while (!stop_requested() && !error_) {
      bool left = false;
      for (std::size_t i = first_open_; i < started_.size(); ++i) {
        if (started_[i]) continue;
        left = true;
        if (!free(i)) continue;
        started_[i] = true;
        for (const std::string& r : resources_of(i)) held_.insert(r);
        while (first_open_ < started_.size() && started_[first_open_]) ++first_open_;
        return i;
      }
      if (!left) return std::nullopt;
      // Polls, so that a stop request ends the wait too.
      changed_.wait_for(lock, std::chrono::milliseconds(100));
    }
    return std::nullopt;
  }

  void finish(std::size_t run, CaseResult result, const RunFinished& finished) {
    std::lock_guard lock(mutex_);
    for (const std::string& r : resources_of(run)) held_.erase(r);
    finished(result, selection_.runs[run]);
    results_[run] = std::move(result);
    changed_.notify_all();
  }

  void fail(std::exception_ptr error) {
    std::lock_guard lock(mutex_);
    if (!error_) error_ = error;
    changed_.notify_all();
  }

  std::vector<std::optional<CaseResult>> results() {
    if (error_) std::rethrow_exception(error_);
    return std::move(results_);
  }

 private:
  const std::set<std::string>& resources_of(std::size_t run) const {
    return resources_[selection_.runs[run].case_index];
  }
  bool free(std::size_t run) const {
    for (const std::string& r : resources_of(run)) {
      if (held_.count(r)) return false;
    }
    return true;
  }

  const Selection& selection_;
  std::vector<std::set<std::string>> resources_;  // per case
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<bool> started_;
  std::size_t first_open_ = 0;  // no run before it is still to start
  std::set<std::string> held_;
  std::vector<std::optional<CaseResult>> results_;
  std::exception_ptr error_;
};

void work(Scheduler& scheduler, const Selection& selection, const DriverOptions& options,
          const RunCase& run_case, const RunFinished& finished) {
  try {
    Driver driver(options);
    while (auto run = scheduler.take()) {
      const Case& c = selection.cases[selection.runs[*run].case_index];
      scheduler.finish(*run, run_case(driver, c), finished);
    }
  } catch (...) {
    scheduler.fail(std::current_exception());
  }
}

}  // namespace

std::vector<std::optional<CaseResult>> run_in_parallel(const Selection& selection, int jobs,
                                                       const DriverOptions& driver,
                                                       const RunCase& run_case,
                                                       const RunFinished& finished) {
  Scheduler scheduler(selection);
  if (jobs <= 1) {
    work(scheduler, selection, driver, run_case, finished);
    return scheduler.results();
  }
  std::vector<std::thread> workers;
  for (int k = 0; k < jobs; ++k) {
    DriverOptions own = driver;
    own.session_prefix += fmt::format("w{}-", k);
    workers.emplace_back([&, own] { work(scheduler, selection, own, run_case, finished); });
  }
  for (std::thread& w : workers) w.join();
  return scheduler.results();
}

}  // namespace etwh::cli
