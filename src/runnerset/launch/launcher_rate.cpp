// Launcher: GitHub's rate limits. A launch that GitHub's rate limits hold back is deferred until
// they allow it, never failed, so its message never dead-letters (issue 30, item 4). The wait is
// recorded in the table (RunnerTable::HoldForRateLimit) for the set's other processes: the other
// launchers then wait without asking GitHub (a deferred message that came back would otherwise
// spend a GET on the still-queued check only to be deferred again), and the janitor does not
// take the launches waiting on the queue for lost ones.
#include <algorithm>

#include "runnerset/launch/launcher.h"

namespace mvr::runnerset {

bool Launcher::IsGitHubRateLimit(const Status& failure) const {
  if (!deps_.defer_rate_limited) return false;
  const std::string& type = failure.error_type();
  return failure.code() == Code::kThrottled &&
         (type == "RateBudget" || type == "PrimaryRateLimit" || type == "SecondaryRateLimit");
}

LaunchOutcome Launcher::DeferForRateLimit(int64_t job_id, const Status& failure,
                                          LaunchOutcome out) {
  const Seam& seam = deps_.seam;
  const Duration wait = failure.retry_after().value_or(Duration(60'000));
  out.decision = LaunchDecision::kDeferred;
  out.retry_after = std::max(out.retry_after, wait);
  if (out.detail.empty()) out.detail = failure.ToString();
  deps_.metrics.AddDeferral("github_rate_limit");
  // A hold that cannot be written costs the others a GET each; the deferral stands anyway.
  Status held = deps_.table.HoldForRateLimit(seam.clock.Now() + wait);
  seam.logger.Debug("launch deferred: GitHub's rate limit",
                    {{"job_id", job_id},
                     {"retry_after_ms", out.retry_after.count()},
                     {"hold_recorded", held.ok()},
                     {"error", out.detail}});
  return out;
}

LaunchEvidence::RateRoom Launcher::RateRoomNow() {
  const TimePoint now = deps_.seam.clock.Now();
  LaunchEvidence::RateRoom room;
  room.at = now;
  if (std::optional<github::RateBudgetSnapshot> budget = deps_.github.RateBudgetNow()) {
    room.own = budget->content_wait;
  }
  // The hold is a hint: a store that cannot answer does not stop the launch.
  if (Result<std::optional<TimePoint>> hold = deps_.table.RateLimitHold(); hold.ok() && *hold) {
    room.held = std::chrono::duration_cast<Duration>(**hold - now);
  }
  // The set's JIT pace: a slot further off than the attempt would wait for defers the launch
  // before it reads the job on GitHub (a read the wait would make stale).
  if (Result<TimePoint> slot = jit_pace_.Peek(); slot.ok() && *slot - now > kLongestPaceWait) {
    room.paced = std::chrono::duration_cast<Duration>(*slot - now);
  }
  return room;
}

Status Launcher::WaitForPace(SharedRate& pace, Duration longest, Pacer* fallback,
                             const std::string& error_type) {
  const Seam& seam = deps_.seam;
  Result<TimePoint> slot = pace.Reserve();
  if (!slot.ok()) {
    seam.logger.Debug("the set's shared pace is unreadable: pacing this process alone",
                      {{"pace", pace.name()}, {"error", slot.status().ToString()}});
    if (fallback) fallback->Wait();
    return Status::Ok();
  }
  const Duration wait = std::chrono::duration_cast<Duration>(*slot - seam.clock.Now());
  if (wait > longest) {
    Status refused(Code::kThrottled, "the set's " + pace.name() + " pace has no slot for " +
                                         std::to_string((wait.count() + 999) / 1000) + " s");
    refused.WithErrorType(error_type).WithRetryAfter(wait);
    return refused;
  }
  if (wait > Duration(0)) seam.sleeper.Sleep(wait);
  return Status::Ok();
}

LaunchOutcome Launcher::DeferForRateRoom(const LaunchIntent& in,
                                         const LaunchEvidence::RateRoom& room) {
  Duration wait = std::max(room.held, room.paced);
  if (room.own > wait) {
    // Tell the others (a hint).
    deps_.table.HoldForRateLimit(room.at + room.own).IgnoreError();
    wait = room.own;
  }
  LaunchOutcome out;
  out.decision = LaunchDecision::kDeferred;
  out.retry_after = wait;
  out.detail = "GitHub's rate limits leave no room for a JIT runner for " +
               std::to_string((wait.count() + 999) / 1000) + " s";
  deps_.metrics.AddDeferral("github_rate_limit");
  deps_.seam.logger.Debug("launch deferred: GitHub's rate limit",
                          {{"job_id", in.job_id}, {"retry_after_ms", wait.count()}});
  return out;
}

}  // namespace mvr::runnerset
