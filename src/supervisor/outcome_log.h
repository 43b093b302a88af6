// How the Supervisor logs a state-machine Outcome, and the follow-up it asks for; shared by the
// hook side (supervisor.cpp) and the job side (runner_job.cpp). Thread-safety: pure functions.
#pragma once

#include <variant>

#include "base/logger.h"
#include "supervisor/state_machine.h"

namespace mvr::supervisor {

inline void LogOutcome(const Logger& logger, const char* command, const Outcome& outcome) {
  if (const auto* a = std::get_if<Accepted>(&outcome)) {
    logger.Info("command accepted", {{"command", command},
                                     {"state", StateName(a->state)},
                                     {"action", FollowUpName(a->follow_up)},
                                     {"duplicate", a->duplicate}});
  } else {
    const auto& r = std::get<Refusal>(outcome);
    logger.Warn("command refused", {{"command", command},
                                    {"state", StateName(r.state)},
                                    {"reason", RefusalReasonName(r.reason)},
                                    {"detail", r.message}});
  }
}

inline FollowUp FollowUpOf(const Outcome& o) {
  const auto* a = std::get_if<Accepted>(&o);
  return a ? a->follow_up : FollowUp::kNone;
}

}  // namespace mvr::supervisor
