// Launcher: step (1) of a launch, whether the job still needs a runner. GitHub hands a queued job
// to any idle runner whose labels match, so the answer follows the chain of jobs taken by
// runners this set launched for other jobs (by their names, or a hot runner's mapping row).
#include <algorithm>
#include <set>
#include <string>

#include "runnerset/config/runner_name.h"
#include "runnerset/launch/launcher.h"

namespace mvr::runnerset {

std::optional<int64_t> Launcher::LaunchedFor(const std::string& runner) {
  const RunnerNameParts parts = ParseRunnerName(config_.runner_name_prefix, runner);
  if (parts.kind == RunnerNameParts::Kind::kForeign) return std::nullopt;
  if (parts.kind == RunnerNameParts::Kind::kJob) return parts.job_id;
  // A hot-pool runner carries no job id: the launch that resumed it names its job on the mapping
  // row, once the resume is done. The runner takes a job within a second of waking, before
  // that: with no row yet, the job it was resumed for may be waiting.
  Result<std::optional<MappingRow>> row = deps_.table.GetMapping(runner);
  if (row.ok() && !*row && parts.kind == RunnerNameParts::Kind::kHot && HotLaunchInFlight(runner)) {
    return kLaunchInFlight;
  }
  // No row (a parked runner handed a job, which the sweeper adopts), or a row for no job (one
  // it adopted): nobody waits for it.
  if (!row.ok() || !*row || (*row)->job_id <= 0) return std::nullopt;
  return (*row)->job_id;
}

Result<github::Job> Launcher::ReadJob(const github::RepositoryRef& repo, int64_t job_id,
                                      bool fresh) {
  const std::string repository = repo.FullName();
  if (!fresh) {
    if (std::optional<github::Job> known = assigned_.Find(repository, job_id)) return *known;
  }
  Result<github::Job> job = deps_.github.GetJob(repo, job_id);
  if (job.ok()) assigned_.Remember(repository, *job);
  return job;
}

bool Launcher::HotLaunchInFlight(const std::string& runner) {
  if (deps_.pool == nullptr) return false;
  Result<std::vector<PoolMember>> members = deps_.pool->ScanMembers();
  if (!members.ok()) return true;  // fail open, as StillNeeded does
  for (const PoolMember& m : *members) {
    if (m.runner_name == runner) return m.claimed_by && *m.claimed_by != kSweeperHolder;
  }
  return false;
}

Result<Launcher::Need> Launcher::StillNeeded(const LaunchIntent& in, bool own_job_over,
                                             bool requeued, std::optional<ServedJob>* head,
                                             const github::Job* just_read) {
  // A scale set's job was acquired for the set, and only the set's runners can take it: there is
  // no REST job to read (its id is a runnerRequestId) and no other runner to have taken it.
  if (in.scale_set_id != 0) return Need::kYes;
  auto repo = github::RepositoryRef::Parse(in.repository);
  if (!repo.ok()) return Need::kUnknown;
  // GitHub hands a queued job to any idle runner whose labels match, so a runner this set
  // launched for job K may have taken this job: K then waits for a runner, and this launch
  // provides it. K may in turn have been taken by the runner of job L, and so on: follow that
  // chain to a job still waiting (this launch is needed), or back to a runner launched for this
  // very job (everyone in the chain has a runner: it is not). Jobs and runners stay one to one.
  std::set<int64_t> seen;
  int64_t job_id = in.job_id;
  github::RepositoryRef job_repo = *repo;
  for (int step = 0; step < kMaxChain; ++step) {
    seen.insert(job_id);
    // A job GitHub lists as queued again (the janitor's launch, a taken job's relaunch) was
    // taken back from the runner it was handed (one that never picked it up: issue 55, items 1
    // and 5): the answer kept from when it was in progress is stale, so its own job is read anew.
    // A caller that read the job itself a moment ago (a taken job's relaunch) hands its answer
    // on: read at most once a launch.
    Result<github::Job> job = step == 0 && just_read != nullptr
                                  ? Result<github::Job>(*just_read)
                                  : ReadJob(job_repo, job_id, step == 0 && requeued);
    // GitHub's rate limits hold the read back: the launch waits for them rather than spend a
    // JIT config (the scarcest of them) on a job that may have its runner already.
    if (!job.ok() && IsGitHubRateLimit(job.status())) return job.status();
    if (!job.ok()) {
      // While GitHub refuses the credentials the client has logged the outage once; a line per
      // launch attempt would bury it.
      const bool auth = job.status().code() == Code::kUnauthorized;
      deps_.seam.logger.Log(auth ? LogLevel::kDebug : LogLevel::kWarn,
                            "could not tell whether the job is still queued; launching anyway",
                            {{"job_id", job_id}, {"error", job.status().ToString()}});
      return Need::kUnknown;  // fail open: dropping a live job is far worse than an unneeded VM
    }
    // The job itself waits for an environment's approval (issue 55, item 3): no VM until GitHub
    // says it is queued.
    if (step == 0 && job->status == github::JobStatus::kWaiting && deps_.wait_for_approval) {
      return Need::kAwaitsApproval;
    }
    if (job->status != github::JobStatus::kInProgress &&
        job->status != github::JobStatus::kCompleted) {
      // Still waiting for a runner; but GitHub's jobs API lags the set's own record (RunsOn
      // #429): no launch on its word for a job the set knows in progress or over.
      JobPhase recorded = JobPhase::kNone;
      if (step > 0) {
        // A failed read counts as no record: the launch fails open, as on GitHub's failure.
        Result<JobState> own = jobs_.Get(job_repo.FullName(), job_id);
        if (own.ok()) recorded = own->phase;
      }
      const Need need = NeedOfListedQueued(step == 0, own_job_over, recorded);
      if (head && need == Need::kYes) *head = ServedJob{job_repo.FullName(), job_id};
      return need;
    }
    std::optional<int64_t> next = LaunchedFor(job->runner_name);
    if (!next) return Need::kNo;  // run by a runner this set did not launch (or by none)
    if (*next == kLaunchInFlight) return Need::kYes;
    if (*next == in.job_id) return Need::kNo;  // the chain closes: every job in it has a runner
    if (seen.count(*next)) return Need::kNo;
    job_id = *next;
    // At organisation scope the runner may have been launched for a job of another repository:
    // its mapping row says which.
    if (scope_.serves_many_repositories()) {
      Result<std::optional<MappingRow>> row = deps_.table.GetMapping(job->runner_name);
      if (row.ok() && *row) {
        auto other = github::RepositoryRef::Parse((*row)->repository);
        if (other.ok()) job_repo = *other;
      }
    }
  }
  return Need::kYes;
}

}  // namespace mvr::runnerset
