// HookBudgets: how long Lambda waits for each lifecycle hook (the `*TimeoutInSeconds` fields of
// image/hooks.json, given to CreateMicrovmImage), and the one place the supervisor's internal
// timeouts for those hooks are derived from them, so that every hook answers within its budget in
// the worst case (daemons that ignore SIGTERM, a `sync` or a `docker info` that hangs).
// Thread-safety: plain values and pure functions.
#pragma once

#include <string>

#include "base/clock.h"
#include "base/status.h"

namespace mvr {
class JsonFields;
}  // namespace mvr

namespace mvr::supervisor {

struct SupervisorConfig;

// Defaults equal image/hooks.json (a test checks that they agree).
struct HookBudgets {
  Duration run{10'000};
  Duration resume{60'000};
  Duration suspend{60'000};
  Duration terminate{30'000};
};

// Reads microvmHooks.{run,resume,suspend,terminate}TimeoutInSeconds from the `hooks` JSON of
// CreateMicrovmImage; a missing field keeps its default. InvalidArgument for malformed JSON or a
// value outside the service's 1-60 s.
Result<HookBudgets> ParseHookBudgets(const std::string& hooks_json);
// The same from an already parsed `hooks` object (the supervisor config's "hooks" member).
Result<HookBudgets> ReadHookBudgets(const JsonFields& hooks);

// Time kept back from every hook for answering and for the platform's own network time:
// a tenth of the budget, at least 0.5 s.
Duration SafetyMargin(Duration budget);

// The longest single `docker info` call while probing a storage driver: a daemon that accepted
// the connection and hangs must not hold a terminate that cancels the start.
inline constexpr Duration kDockerInfoCallCap{5'000};

// /suspend: stop dockerd, stop containerd (each: SIGTERM, wait daemon_stop, SIGKILL), then sync.
struct SuspendPlan {
  Duration daemon_stop;
  Duration sync;
};
// /resume: containerd, then each storage driver in turn (per_driver each), stopping containerd
// again (daemon_stop) when none works, then the network check.
struct ResumePlan {
  Duration per_driver;
  Duration daemon_stop;
  Duration network_check;
};
// /terminate: let an in-flight Docker start notice the cancel (kDockerInfoCallCap), stop the
// runner, stop dockerd and containerd, sync.
struct TerminatePlan {
  Duration runner_stop;
  Duration daemon_stop;
  Duration sync;
};

// Each plan's steps, with the margin, add up to at most the hook's budget; a configured timeout
// that is shorter than its share is kept. `drivers` is the number of storage drivers tried.
// Terminate needs a budget above kDockerInfoCallCap plus a poll interval plus the margin to
// also cover a Docker start it cancels.
SuspendPlan PlanSuspend(Duration budget, const SupervisorConfig& config);
ResumePlan PlanResume(Duration budget, const SupervisorConfig& config, size_t drivers);
TerminatePlan PlanTerminate(Duration budget, const SupervisorConfig& config);

// The worst-case time each plan can take (every step using its whole share; polls included),
// for tests and the docs.
Duration WorstCase(const SuspendPlan& plan, const SupervisorConfig& config);
Duration WorstCase(const ResumePlan& plan, const SupervisorConfig& config, size_t drivers);
Duration WorstCase(const TerminatePlan& plan, const SupervisorConfig& config);

}  // namespace mvr::supervisor
