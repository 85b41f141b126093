// `etwh observe`'s schedule: the session configurations each provider is walked through as it
// registers (scenarios/observe/default.json; schemas/observe_schedule.schema.json). Data only:
// the controller (controller.h) carries the actions out, the judge (judge.h) reads the limits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace etwh::observe {

// What one action does to one of the observer's sessions (EnableTraceEx2's control codes).
enum class ActionOp { kEnable, kDisable, kCaptureState };

// An EVENT_FILTER_TYPE_EVENT_ID filter (EVENT_FILTER_EVENT_ID): FilterIn keeps only `ids`,
// otherwise drops them.
struct EventIdFilter {
  bool filter_in = true;
  std::vector<std::uint16_t> ids;  // 1..64 of them
  bool excludes(std::uint16_t id) const;
  bool operator==(const EventIdFilter&) const = default;
};

struct Action {
  ActionOp op = ActionOp::kEnable;
  std::size_t session = 0;  // index of the observer's session (0..7)
  std::uint8_t level = 0;
  std::uint64_t match_any = 0;
  std::uint64_t match_all = 0;
  std::optional<EventIdFilter> event_ids;  // enable only: FilterData of EnableTraceEx2
};

struct Step {
  std::string name;
  std::vector<Action> actions;
};

struct Schedule {
  std::uint32_t step_ms = 150;            // how long each step lasts before the next
  std::uint32_t callback_limit_ms = 100;  // an enable callback longer than this fails CB-FAST
  std::size_t sessions = 0;               // how many sessions the steps use (highest index + 1)
  std::vector<Step> steps;
};

inline constexpr std::size_t kMaxSessions = 8;

// The first step after which no session enables the provider while one did before (the step
// that tests PROV-RECORD's "on DISABLE it writes nothing"); none: the schedule never disables all.
std::optional<std::size_t> first_step_disabling_all(const Schedule& schedule);

// Reads and checks a schedule; throws InputError (file, line:col, JSON pointer, reason).
Schedule load_schedule(const std::filesystem::path& file);
Schedule parse_schedule(const std::string& text, const std::string& file);

}  // namespace etwh::observe
