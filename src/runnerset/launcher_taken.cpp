// Launcher::Taken: a runner this set launched for one job took another (issue 30, item 1).
// GitHub binds no job to the runner launched for it: any idle runner whose labels match may take
// any queued job, at organisation scope one of another repository. The `in_progress` webhook names
// the runner; when the job it was launched for still waits, that job's launch is spent (its
// runner is busy elsewhere), so its committed claim is released and it is launched again at once
// rather than at the janitor's next sweep past stuckLaunchSeconds.
#include <string>

#include "github/labels.h"
#include "runnerset/launcher.h"

namespace mvr::runnerset {

Launcher::TakenJobsLaunch Launcher::TakenJobsLaunchState(const TakenIntent& in) {
  // The job the runner took (A) and its own launch. Runners of a class are interchangeable: A's
  // runner takes the waiting job (or another, whose own runner then does), so a launch here is
  // needed only when A's runner will never come. A launch on any weaker evidence was a second VM
  // for one job (found end to end: a capped burst launched 6 VMs for 5 jobs, a burst 22 for 20).
  // - no claim: A's launch has not begun (deferred at the cap, say); when its intent comes round,
  //   the still-queued check follows A to the waiting job and launches for it;
  // - a claim not committed and younger than the launch timeout: under way; ask again later.
  //   Older: it may be hung, so launch (the claim's takeover cleans it up);
  // - committed: its runner serves unless GitHub no longer has it.
  // A failed read launches.
  Result<std::optional<Claim>> claim = deps_.table.GetClaim(in.repository, in.job_id);
  if (!claim.ok()) return TakenJobsLaunch::kNone;
  if (!*claim) return TakenJobsLaunch::kServes;
  const Claim& c = **claim;
  if (c.microvm_id.empty()) {
    const int64_t age_ms = ToUnixMillis(deps_.seam.clock.Now()) - c.claimed_ms;
    return age_ms < config_.launch_timeout().count() ? TakenJobsLaunch::kUnderWay
                                                     : TakenJobsLaunch::kNone;
  }
  if (c.pending_runner_id <= 0 || c.runner_name == in.runner_name) return TakenJobsLaunch::kNone;
  Result<github::Runner> runner = deps_.github.GetRunner(scope_, c.pending_runner_id);
  return runner.ok() ? TakenJobsLaunch::kServes : TakenJobsLaunch::kNone;
}

LaunchOutcome Launcher::Taken(const TakenIntent& in) {
  LaunchOutcome out;
  out.runner_name = in.runner_name;
  auto settle = [&](LaunchDecision decision, std::string detail) {
    out.decision = decision;
    out.detail = std::move(detail);
    if (decision == LaunchDecision::kFailed || decision == LaunchDecision::kDeferred) {
      out.retry_after = Duration(config_.launcher.defer_seconds * 1000LL);
    }
    return out;
  };
  // The job the runner was launched for, and its repository: the mapping row's (at organisation
  // scope it may be another repository than the job it took), else the runner's name and the
  // set's repository (or, for an organisation, the taken job's: the best guess until the row).
  Result<std::optional<MappingRow>> row = deps_.table.GetMapping(in.runner_name);
  if (!row.ok()) return settle(LaunchDecision::kFailed, row.status().ToString());
  std::optional<int64_t> launched_for = LaunchedFor(in.runner_name);
  std::string repository = scope_.is_organization() ? in.repository : config_.github.repository;
  if (*row && (*row)->job_id > 0) {
    launched_for = (*row)->job_id;
    if (!(*row)->repository.empty()) repository = (*row)->repository;
  }
  if (!launched_for || *launched_for <= 0) {
    return settle(LaunchDecision::kIgnored,
                  "runner " + in.runner_name + " was launched for no job");
  }
  if (*launched_for == in.job_id && github::LabelEquals(repository, in.repository)) {
    return settle(LaunchDecision::kIgnored, "runner " + in.runner_name + " took its own job");
  }
  auto repo = github::RepositoryRef::Parse(repository);
  if (!repo.ok()) return settle(LaunchDecision::kIgnored, repo.status().ToString());
  Result<github::Job> own = deps_.github.GetJob(*repo, *launched_for);
  if (!own.ok()) return settle(LaunchDecision::kFailed, own.status().ToString());
  if (own->status != github::JobStatus::kQueued) {
    return settle(LaunchDecision::kIgnored,
                  "job " + std::to_string(*launched_for) + " has a runner or has ended");
  }
  switch (TakenJobsLaunchState(in)) {
    case TakenJobsLaunch::kServes:
      return settle(LaunchDecision::kIgnored,
                    "the launch for job " + std::to_string(in.job_id) +
                        " has not begun or has a runner that is not busy: it serves the job");
    case TakenJobsLaunch::kUnderWay:
      return settle(LaunchDecision::kDeferred,
                    "the launch for job " + std::to_string(in.job_id) + " is under way");
    case TakenJobsLaunch::kNone:
      break;
  }
  const RunnerClass* cls = nullptr;
  for (const std::string& label : own->labels) {
    if ((cls = config_.FindClass(label))) break;
  }
  if (!cls) return settle(LaunchDecision::kIgnored, "job has none of the set's class labels");
  Result<std::optional<Claim>> claim = deps_.table.GetClaim(repository, *launched_for);
  if (!claim.ok()) return settle(LaunchDecision::kFailed, claim.status().ToString());
  if (*claim) {
    const Claim& c = **claim;
    if (c.microvm_id.empty()) {
      // Its launch has not committed: the runner took a job before the launch wrote its row.
      // Come back once it has (a dead launch is taken over after claimTakeoverSeconds).
      return settle(LaunchDecision::kDeferred,
                    "the launch of job " + std::to_string(*launched_for) + " has not committed");
    }
    if (c.runner_name != in.runner_name) {
      return settle(LaunchDecision::kIgnored,
                    "job " + std::to_string(*launched_for) + " was launched again already");
    }
    if (Status s = deps_.table.ReleaseCommitted(repository, *launched_for, c.attempt_token);
        !s.ok()) {
      return settle(LaunchDecision::kFailed, s.ToString());
    }
  }
  deps_.seam.logger.Info("a runner took another job; launching again for the job it was for",
                         {{"runner_name", in.runner_name},
                          {"took_job_id", in.job_id},
                          {"took_repository", in.repository},
                          {"job_id", *launched_for},
                          {"repository", repository}});
  deps_.metrics.Add(Counter::kRelaunchedTaken);
  return Launch(LaunchIntentForJob(repository, *own, cls->label, deps_.seam.clock.Now(),
                                   in.delivery_id.empty() ? "taken" : in.delivery_id));
}

}  // namespace mvr::runnerset
