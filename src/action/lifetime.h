// Lifetime of a warm MicroVM: platformExpiresAt = startedAt + max lifetime (the platform kills
// the VM then), reuseDeadline = platformExpiresAt − safety margin (the last moment another job may
// be given to it). Nothing happens at the reuse deadline by itself: it is a decision boundary for
// the next start or stop.
// Thread-safety: plain values.
#pragma once

#include "base/clock.h"
#include "base/status.h"

namespace mvr::action {

inline constexpr int64_t kDefaultMaxLifetimeSeconds = 7'200;
inline constexpr int64_t kMaxLifetimeCeilingSeconds = 28'800;  // the platform's 8 hours
inline constexpr int64_t kDefaultReuseMarginSeconds = 1'800;

struct LifetimePolicy {
  int64_t max_lifetime_seconds = kDefaultMaxLifetimeSeconds;
  int64_t reuse_margin_seconds = kDefaultReuseMarginSeconds;
};

// max lifetime in [1, 28800]; margin in [0, max lifetime). The error names the input.
Status ValidateLifetimePolicy(const LifetimePolicy& policy);

struct Lifetime {
  TimePoint started_at;
  TimePoint platform_expires_at;
  TimePoint reuse_deadline;

  // A VM may take another job only strictly before its reuse deadline.
  bool ReusableAt(TimePoint now) const { return now < reuse_deadline; }
};

Lifetime ComputeLifetime(TimePoint started_at, const LifetimePolicy& policy);

// An ephemeral VM whose stop step never runs (a cancelled workflow, a crashed runner) and which
// cannot end itself lives until its maximumDurationInSeconds. By default that follows the job:
// GitHub ends a job at its timeout-minutes (360 unless the workflow says), so the VM needs the
// start's own wait for its runner, the job's timeout and a slack for the job to be assigned and
// its cancellation to finish, and no more (at most the platform's 8 hours).
inline constexpr int64_t kDefaultJobTimeoutMinutes = 360;  // GitHub's default timeout-minutes
inline constexpr int64_t kEphemeralSlackSeconds = 300;
int64_t EphemeralMaxLifetimeSeconds(int64_t job_timeout_minutes, int64_t startup_timeout_seconds);

}  // namespace mvr::action
