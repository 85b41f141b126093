// Steps built in code for the unit tests: the body each op has, with its session and provider
// set where the op has them.
#pragma once

#include "harness/conformance/scenario.h"

#include <string>
#include <variant>

namespace etwh::test {

inline StepBody body_for(StepOp op, const std::string& session, const std::string& provider) {
  switch (op) {
    case StepOp::kStart:
    case StepOp::kStop:
    case StepOp::kFlush: return SessionStep{session};
    case StepOp::kEnable:
    case StepOp::kDisable:
    case StepOp::kCaptureState: {
      ControlStep call;
      call.session = session;
      call.provider = provider;
      return call;
    }
    case StepOp::kDisallow: return DisallowStep{session, {}};
    case StepOp::kRegister:
    case StepOp::kUnregister: return ProviderStep{provider};
    case StepOp::kQueryEnabled: return QueryEnabledStep{provider, 0, 0};
    case StepOp::kExitAgent:
    case StepOp::kKillAgent: return AgentStep{};
    case StepOp::kSetTraits: return TraitsStep{provider, false, {}, {}, {}, {}};
    case StepOp::kConsume: {
      ConsumeStep cs;
      cs.session = session;
      return cs;
    }
    case StepOp::kWrite: return WriteStep{provider, {}, false, std::nullopt};
    case StepOp::kCollect: return CollectStep{};
    case StepOp::kLastError: return LastErrorStep{"OpenTrace", ""};
    case StepOp::kSubjectWrite: return SubjectWriteStep{provider, false};
    case StepOp::kInjectCallback: return InjectCallbackStep{provider, 0, 0, 0, 0};
    case StepOp::kRegisterClassic:
    case StepOp::kUnregisterClassic:
    case StepOp::kTraceEvent:
    case StepOp::kTraceMessage: return ClassicStep{provider, nlohmann::json::object()};
  }
  return CollectStep{};
}

inline Step make_step(StepOp op, const std::string& session = "",
                      const std::string& provider = "") {
  Step s;
  s.op = op;
  s.body = body_for(op, session, provider);
  return s;
}

// The body of a test's step, to set or read its fields (throws if it has another).
template <class T>
T& body(Step& s) {
  return std::get<T>(s.body);
}
template <class T>
const T& body(const Step& s) {
  return std::get<T>(s.body);
}

}  // namespace etwh::test
