// RunnerRegistration: the GitHub half of a start. Registers one single-use JIT runner under a
// deterministic name (a name left over from an earlier attempt of the same start is removed and
// registered again), waits until GitHub shows that exact runner id and name online, and removes
// a runner that will never be used. Calls that GitHub throttles or fails transiently are retried
// with full jitter within the caller's deadline.
// Thread-safety: one per start or stop; not shared.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/retry.h"
#include "base/seam.h"
#include "github/github.h"

namespace mvr::fleet {

class RunnerRegistration {
 public:
  RunnerRegistration(const Seam& seam, github::GitHub& github, github::RunnerScope scope)
      : seam_(seam), github_(github), scope_(std::move(scope)) {}

  // Registers `request.name`. A runner of that name that is offline and idle (left by an earlier
  // attempt of the same start, or by a registration whose answer was lost) is deleted and the
  // registration made again, a few rounds at most; an online or busy one belongs to another start
  // with the same identity: Conflict, and it is left alone.
  Result<github::JitConfig> Register(const github::JitConfigRequest& request, TimePoint deadline);
  // A GitHub rate limit (Throttled: "RateBudget", "PrimaryRateLimit", "SecondaryRateLimit")
  // whose wait is longer than `wait` ends Register at once with that error, rather than sleeping
  // it out, so a caller that can defer the work (the runner set's launcher) does. Unset: waited
  // out like any throttling, within the deadline.
  void WaitForRateLimitsUpTo(Duration wait) { max_rate_limit_wait_ = wait; }

  // Polls until the runner `runner_id` named `name` is online (or already busy with its job).
  // NotFound when it disappears, Transient "timed out" at the deadline.
  Status WaitOnline(int64_t runner_id, const std::string& name, TimePoint deadline);

  // Removes the runner unless it is gone already. Busy runners are left alone (Conflict).
  Status Remove(int64_t runner_id, TimePoint deadline);

  // Whether the runner is gone or idle (not running a job).
  Result<bool> GoneOrIdle(int64_t runner_id, TimePoint deadline);

  const github::RunnerScope& scope() const { return scope_; }

 private:
  RetryPolicy PolicyUntil(TimePoint deadline) const;
  // Removes the offline, idle runners named `name`; Conflict when one is online or busy.
  Status RemoveLeftRunners(const std::string& name, TimePoint deadline);

  Seam seam_;
  github::GitHub& github_;
  github::RunnerScope scope_;
  std::optional<Duration> max_rate_limit_wait_;
};

}  // namespace mvr::fleet
