// Janitor: the queued jobs of a repository, listed once a sweep for both of the sweep's questions
// about them (is a job of an idle runner's class waiting; which queued jobs never got their
// runner). GitHub lists a repository's queued runs newest first, so the oldest are found only on
// the last page: a listing reads every page of the backlog, then a GET per run it reads.
#include "runnerset/janitor/janitor.h"

namespace mvr::runnerset {

bool Janitor::RecoveryLists(const Inventory& inv, bool* held) {
  if (held) *held = false;
  if (!config_.janitor.recover_stuck_launches) return false;
  // At the cap every launch is deferred anyway and its message waits on the queue.
  int live = 0;
  for (const auto& [id, vm] : inv.vms) live += vm.state != aws::MicrovmState::kTerminated;
  if (inv.vms_ok && live >= config_.max_concurrent_vms) return false;
  // While GitHub's rate limits hold launches back, the jobs still queued are mostly launches
  // deferred on the queue, not lost ones; listing them would cost a GET per queued run of the
  // budget the launches wait for. Recovery resumes once the hold has been over for as long as a
  // launch may take to look stuck.
  const Duration stuck_grace(config_.janitor.stuck_launch_seconds * 1000LL);
  if (Result<std::optional<TimePoint>> hold = deps_.table.RateLimitHold(stuck_grace);
      hold.ok() && *hold) {
    if (held) *held = true;
    return false;
  }
  return true;
}

Result<std::vector<github::Job>> Janitor::QueuedJobsOf(const Inventory& inv,
                                                       const std::string& repository, int max_runs,
                                                       bool retry, int* unread) {
  // A listing of this sweep that read at least as many of the oldest runs answers (the jobs of
  // the runs past `max_runs` it also holds are queued jobs all the same: a spare-runner question
  // answered from more runs is answered better). The listing lags the jobs by the sweep's own
  // length at most; both readers already take it as GitHub's lag (a job started since is
  // re-read by the launcher before anything is launched for it).
  if (auto kept = inv.queued.find(repository);
      kept != inv.queued.end() && (kept->second.max_runs >= max_runs || kept->second.unread == 0)) {
    if (unread) *unread = kept->second.unread;
    return kept->second.jobs;
  }
  MVR_ASSIGN_OR_RETURN(github::RepositoryRef repo, github::RepositoryRef::Parse(repository));
  Inventory::QueuedListed listed;
  // Read once for both: the runs recovery reads, when it will list this sweep.
  listed.max_runs = max_runs;
  if (inv.queued.count(repository) == 0 && max_runs < kRecoverRunsPerSweep && RecoveryLists(inv)) {
    listed.max_runs = kRecoverRunsPerSweep;
  }
  github::QueuedRunsFilter filter;
  filter.max_runs = listed.max_runs;
  filter.runs_unread = &listed.unread;
  auto list = [&] { return deps_.github.ListQueuedJobs(repo, filter); };
  Result<std::vector<github::Job>> jobs =
      retry ? Retry<std::vector<github::Job>>(kJanitorReadRetry, deps_.seam, list) : list();
  if (!jobs.ok()) return jobs;
  listed.jobs = *jobs;
  if (unread) *unread = listed.unread;
  inv.queued.insert_or_assign(repository, std::move(listed));
  return jobs;
}

}  // namespace mvr::runnerset
