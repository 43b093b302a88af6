// sim::World under GitHub's rate limits (issue 30, item 4): the invariant that no launch fails
// for them, and the figures of the burst (how long it took in virtual time, what GitHub refused,
// how full the content-creation windows got).
#include <algorithm>
#include <optional>
#include <tuple>

#include "sim/world.h"

namespace mvr::sim {

void World::CheckRateLimits(WorldReport& report) {
  if (!options_.github_rate_limits) return;
  report.rate_limited = true;
  report.failed_launches = metrics_.Get(runnerset::Counter::kFailed);
  report.rate_deferrals = metrics_.GetDeferrals("github_rate_limit");
  report.github_rate_refusals = github_->rate_limits().Refusals();
  std::tie(report.content_minute_peak, report.content_hour_peak) =
      github_->rate_limits().ContentPeaks();
  std::optional<TimePoint> first, last;
  for (const auto& [id, at] : queued_at_) first = first ? std::min(*first, at) : at;
  for (const emulate::github::Job& job : github_->model().ListAllJobs()) {
    if (job.completed_at) last = last ? std::max(*last, *job.completed_at) : *job.completed_at;
  }
  if (first && last) {
    report.burst_seconds = std::chrono::duration<double>(*last - *first).count();
  }
  // Under GitHub's limits a launch waits; it never fails for them (and so never dead-letters).
  // Launches that fail for another reason (a launch timeout the seed drew too short for a burst)
  // are counted in failed_launches and retried as always.
  int64_t rate_failures = 0;
  std::string first_failure;
  for (const auto& p : processes_) {
    for (const std::string& line : p->seam.sink.lines()) {
      if (line.find("\"launch failed\"") == std::string::npos) continue;
      if (line.find("rate limit") == std::string::npos) continue;
      if (rate_failures++ == 0) first_failure = line.substr(0, 300);
    }
  }
  report.rate_limit_failures = rate_failures;
  if (rate_failures > 0) {
    report.violations.push_back(std::to_string(rate_failures) +
                                " launches failed for GitHub's rate limits (a rate-limited "
                                "launch must be deferred, never failed); the first: " +
                                first_failure);
  }
}

}  // namespace mvr::sim
