// Janitor: whether a runner is running a job, on evidence other than its `busy` flag. GitHub's
// REST API has answered busy:false for a runner running a job (actions/runner #4422), and a
// DELETE may believe the same lie, so before the janitor deregisters a runner or terminates its
// VM it asks the jobs API, whose in-progress jobs name their runner.
#include <set>
#include <string>

#include "base/retry.h"
#include "runnerset/janitor.h"

namespace mvr::runnerset {
Result<bool> Janitor::RunsAJob(const Inventory& inv, const std::string& runner_name) {
  // The repositories to ask: the set's own and those of its rows and claims. Asked afresh each
  // time, just before the janitor acts, so that a job the runner took since is seen.
  std::set<std::string> repositories;
  if (!config_.github.repository.empty()) repositories.insert(config_.github.repository);
  for (const MappingRow& r : inv.rows) {
    if (!r.repository.empty()) repositories.insert(r.repository);
  }
  for (const Claim& c : inv.claims) {
    if (!c.repository.empty()) repositories.insert(c.repository);
  }
  for (const std::string& repository : repositories) {
    MVR_ASSIGN_OR_RETURN(github::RepositoryRef repo, github::RepositoryRef::Parse(repository));
    Result<std::vector<github::Job>> jobs = Retry<std::vector<github::Job>>(
        kJanitorReadRetry, deps_.seam, [&] { return deps_.github.ListInProgressJobs(repo); });
    if (!jobs.ok()) return jobs.status().Annotate("listing the jobs in progress of " + repository);
    for (const github::Job& job : *jobs) {
      if (job.runner_name == runner_name) return true;
    }
  }
  return false;
}

bool Janitor::OwnJobEnded(const MappingRow& row) {
  if (row.job_id <= 0 || row.repository.empty()) return false;  // a pool member's row
  auto repo = github::RepositoryRef::Parse(row.repository);
  if (!repo.ok()) return false;
  Result<github::Job> job = deps_.github.GetJob(*repo, row.job_id);
  return job.ok() && job->status == github::JobStatus::kCompleted;
}

}  // namespace mvr::runnerset
