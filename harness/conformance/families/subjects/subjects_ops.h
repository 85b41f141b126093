// The ops of the providers under test family (families/subjects/subject_oracle.h): subject_write,
// inject_callback.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace etwh {

// The ops' names, as in scenario files (Step::op; the registrations are keyed by them).
namespace ops {
inline constexpr std::string_view kSubjectWrite = "subject_write";
inline constexpr std::string_view kInjectCallback = "inject_callback";
}  // namespace ops

// subject_write: the subject writes its test events, or its state events.
struct SubjectWriteStep {
  std::string provider;
  bool state_events = false;
};

// inject_callback: the subject's callback is called directly with these arguments.
struct InjectCallbackStep {
  std::string provider;
  std::uint32_t is_enabled = 0;
  std::uint8_t level = 0;
  std::uint64_t match_any = 0;
  std::uint64_t match_all = 0;
};

}  // namespace etwh
