// sim::World under GitHub's rate limits (issue 30, item 4): the invariant that no launch fails
// for them, and the figures of the burst (how long it took in virtual time, what GitHub refused,
// how full the content-creation windows got).
#include <algorithm>
#include <optional>
#include <tuple>
#include <vector>

#include "sim/world.h"

namespace mvr::sim {

void World::CheckRateLimits(WorldReport& report) {
  if (!options_.github_rate_limits) return;
  report.rate_limited = true;
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
  report.github_apps = options_.github_apps;
  if (std::optional<TimePoint> jit = github_->rate_limits().LastContentAt(); jit && first) {
    report.jit_seconds = std::chrono::duration<double>(*jit - *first).count();
  }
  std::vector<double> wanted;
  for (const auto& [id, at] : queued_at_) {
    wanted.push_back(std::chrono::duration<double>(at - *first).count());
  }
  std::sort(wanted.begin(), wanted.end());
  report.jit_bound_seconds = ContentBoundSeconds(wanted, options_.github_apps);
  // Under GitHub's limits a launch waits; it never fails for them (and so never dead-letters).
  // A launch that fails logs "launch failed"; any other intent the launchers failed (a terminate
  // whose TerminateMicrovm calls were throttled past its deadline by the burst's 1,000 ends, on a
  // seed that drew a short launch timeout) is counted apart. Both are retried from the queue.
  int64_t launch_failures = 0, rate_failures = 0;
  std::string first_failure;
  for (const auto& p : processes_) {
    for (const std::string& line : p->seam.sink.lines()) {
      if (line.find("\"launch failed\"") == std::string::npos) continue;
      ++launch_failures;
      if (line.find("rate limit") == std::string::npos) continue;
      if (rate_failures++ == 0) first_failure = line.substr(0, 300);
    }
  }
  report.failed_launches = launch_failures;
  report.failed_other_intents = metrics_.Get(runnerset::Counter::kFailed) - launch_failures;
  report.rate_limit_failures = rate_failures;
  if (rate_failures > 0) {
    report.violations.push_back(std::to_string(rate_failures) +
                                " launches failed for GitHub's rate limits (a rate-limited "
                                "launch must be deferred, never failed); the first: " +
                                first_failure);
  }
}

double ContentBoundSeconds(const std::vector<double>& wanted_at, int apps, int per_minute,
                           int per_hour) {
  if (apps <= 0 || per_minute <= 0 || per_hour <= 0) return 0;
  // at[a]: when App a's JIT configs go, each as early as its job and both windows let it.
  std::vector<std::vector<double>> at(static_cast<size_t>(apps));
  double last = 0;
  for (size_t k = 0; k < wanted_at.size(); ++k) {
    std::vector<double>& mine = at[k % static_cast<size_t>(apps)];
    const size_t i = mine.size();
    double t = std::max(wanted_at[k], i > 0 ? mine[i - 1] : 0.0);
    if (i >= static_cast<size_t>(per_minute)) t = std::max(t, mine[i - per_minute] + 60);
    if (i >= static_cast<size_t>(per_hour)) t = std::max(t, mine[i - per_hour] + 3600);
    mine.push_back(t);
    last = std::max(last, t);
  }
  return last;
}

}  // namespace mvr::sim
