// sim::World for issue 56, item 4: the fair share of the cap between repositories. The last job
// of a fair-share world is another repository's, queued behind a backlog of hundreds that holds
// every seat; it must start within one launch slot of its arrival: once the first seat frees
// after it was queued (a backlog's job finished; its terminate intent frees the seat), within one
// deferral (its intent comes back) and one launch (FairShareBound).
#include <algorithm>

#include "sim/world.h"

namespace mvr::sim {

namespace gh = emulate::github;

void World::CheckFairShare(WorldReport& report) {
  const std::vector<gh::Job> jobs = github_->model().ListAllJobs();
  if (jobs.empty()) return;
  const std::string last_repository = JobRepository(options_.jobs - 1);
  const gh::Job* late = nullptr;
  for (const gh::Job& job : jobs) {
    if (job.repository == last_repository) late = &job;
  }
  const std::map<int64_t, JobTimes> times = guest_.jobs();
  auto queued = late ? queued_at_.find(late->id) : queued_at_.end();
  auto started = late ? times.find(late->id) : times.end();
  if (queued == queued_at_.end() || started == times.end() || !started->second.started) {
    report.violations.push_back("fair share: the other repository's job never started");
    return;
  }
  // The first seat that frees after it was queued: the backlog's first job to finish after it.
  std::optional<TimePoint> freed;
  int backlog_started_meanwhile = 0;
  for (const gh::Job& job : jobs) {
    if (job.repository == last_repository) continue;
    auto t = times.find(job.id);
    if (t == times.end()) continue;
    if (t->second.finished && *t->second.finished >= queued->second) {
      freed = freed ? std::min(*freed, *t->second.finished) : *t->second.finished;
    }
    if (t->second.started && *t->second.started > queued->second &&
        *t->second.started < *started->second.started) {
      ++backlog_started_meanwhile;
    }
  }
  const TimePoint from = std::max(queued->second, freed.value_or(queued->second));
  const Duration waited = *started->second.started - from;
  report.fair_share_wait_seconds = static_cast<double>(waited.count()) / 1000.0;
  report.fair_share_overtaken = backlog_started_meanwhile;
  const Duration bound = config_.defer_delay() + kFairShareLaunch;
  if (waited > bound) {
    report.violations.push_back(
        "fair share: the other repository's job started " + std::to_string(waited.count() / 1000) +
        " s after the first seat freed once it was queued, past one deferral and one launch (" +
        std::to_string(bound.count() / 1000) + " s); " + std::to_string(backlog_started_meanwhile) +
        " jobs of the backlog started meanwhile");
  }
}

}  // namespace mvr::sim
