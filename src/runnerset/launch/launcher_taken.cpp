// Launcher::Taken: a runner this set launched for one job took another (issue 30, item 1).
// GitHub binds no job to the runner launched for it: any idle runner whose labels match may take
// any queued job, at organisation scope one of another repository. The `in_progress` webhook names
// the runner; when the job it was launched for still waits, that job's launch is spent (its
// runner is busy elsewhere), so its committed claim is released and it is launched again at once
// rather than at the janitor's next sweep past stuckLaunchSeconds.
#include <algorithm>
#include <set>
#include <string>

#include "github/labels.h"
#include "runnerset/launch/launcher.h"

namespace mvr::runnerset {
namespace {

// `out` with `decision` and `detail`; a failure or a deferral comes back after `defer_delay`.
LaunchOutcome Settled(LaunchOutcome& out, LaunchDecision decision, std::string detail,
                      Duration defer_delay) {
  out.decision = decision;
  out.detail = std::move(detail);
  if (decision == LaunchDecision::kFailed || decision == LaunchDecision::kDeferred) {
    out.retry_after = defer_delay;
  }
  return out;
}

}  // namespace

Duration Launcher::WaitOnClaim(int64_t claimed_ms, Duration horizon) const {
  const Duration floor = config_.defer_delay();
  const int64_t now_ms = ToUnixMillis(deps_.seam.clock.Now());
  const Duration half_age((now_ms - claimed_ms) / 2);
  const Duration left(claimed_ms + horizon.count() - now_ms);
  return std::max(floor, std::min(half_age, left));
}

Launcher::TakenJobsLaunch Launcher::TakenJobsLaunchState(const TakenIntent& in,
                                                         int64_t* under_way_since_ms) {
  // The job the runner took (A) and its own launch. Runners of a class are interchangeable: A's
  // runner takes the waiting job, or another job B whose own runner then does, and so on, so a
  // launch here is needed only when the launch at the end of that chain will bring no runner.
  // A launch on any weaker evidence was a second VM for one job (found end to end: a capped
  // burst launched 6 VMs for 5 jobs, a burst 22 and then 21 for 20). Along the chain:
  // - no claim: the launch has not begun (deferred at the cap, say); when its intent comes
  //   round, the still-queued check follows the chain to the waiting job and launches for it;
  // - a claim not committed and younger than the launch timeout: under way; ask again later.
  //   Older: it may be hung, so launch (the claim's takeover cleans it up);
  // - committed, and its runner took another job (RecordTook): follow on to that job's launch;
  // - committed, otherwise: its runner serves. Registered, it is starting or idle, or busy on
  //   a job whose `in_progress` webhook is yet to come (whose taken intent then follows the
  //   chain back to the waiting job and on from there). Gone with no job recorded, it ran one
  //   whose webhook is yet to come, or died idle; that VM is the janitor's (strikes), and so is
  //   the waiting job (stuck-launch recovery).
  // A failed read launches.
  std::string repository = in.repository;
  int64_t job_id = in.job_id;
  std::set<std::string> seen;
  for (int step = 0; step < kMaxChain; ++step) {
    if (!seen.insert(RunnerTable::JobKey(repository, job_id)).second) break;
    Result<std::optional<Claim>> claim = deps_.table.GetClaim(repository, job_id);
    if (!claim.ok()) return TakenJobsLaunch::kNone;
    if (!*claim) return TakenJobsLaunch::kServes;
    const Claim& c = **claim;
    if (c.microvm_id.empty()) {
      const int64_t age_ms = ToUnixMillis(deps_.seam.clock.Now()) - c.claimed_ms;
      if (age_ms >= config_.launch_timeout().count()) return TakenJobsLaunch::kNone;
      if (under_way_since_ms) *under_way_since_ms = c.claimed_ms;
      return TakenJobsLaunch::kUnderWay;
    }
    if (c.pending_runner_id <= 0 || c.runner_name == in.runner_name) return TakenJobsLaunch::kNone;
    if (c.took_job_id <= 0 || c.took_runner != c.runner_name) return TakenJobsLaunch::kServes;
    repository = c.took_repository;
    job_id = c.took_job_id;
  }
  // A chain longer than this, or one that loops (inconsistent records): leave it to the janitor.
  return TakenJobsLaunch::kServes;
}

Result<std::optional<Launcher::WaitingHead>> Launcher::FindWaitingHead(std::string repository,
                                                                       int64_t job_id,
                                                                       std::string runner_name) {
  // The runner was launched for `job_id`. If that job still waits, it is the head. If another
  // runner of the set took it, the job that runner was launched for may wait instead, and so on.
  std::set<std::string> seen;
  for (int step = 0; step < kMaxChain; ++step) {
    if (!seen.insert(RunnerTable::JobKey(repository, job_id)).second) break;
    MVR_ASSIGN_OR_RETURN(github::RepositoryRef repo, github::RepositoryRef::Parse(repository));
    MVR_ASSIGN_OR_RETURN(github::Job job, ReadJob(repo, job_id));
    if (job.status == github::JobStatus::kQueued) {
      return std::optional<WaitingHead>(WaitingHead{repository, std::move(job), runner_name});
    }
    // A job that ran and ended still names its runner: the job that runner was launched for
    // may wait (stolen-runners seed 632: the middle of a chain completed before the intent
    // that passed through it came round, and the waiting job was left to the janitor).
    const bool ran = job.status == github::JobStatus::kInProgress ||
                     (job.status == github::JobStatus::kCompleted && !job.runner_name.empty());
    if (!ran) break;
    std::optional<int64_t> next = LaunchedFor(job.runner_name);
    if (!next || *next <= 0) break;  // its runner is none of the set's launches for a job
    runner_name = job.runner_name;
    job_id = *next;
    if (scope_.serves_many_repositories()) {
      Result<std::optional<MappingRow>> row = deps_.table.GetMapping(runner_name);
      if (row.ok() && *row && !(*row)->repository.empty()) repository = (*row)->repository;
    }
  }
  return std::optional<WaitingHead>();  // every job in the chain has its runner, or has ended
}

Status Launcher::NoteTook(const TakenIntent& in, const std::string& repository,
                          int64_t launched_for) {
  // The webhook says which runner took the job: a chain walk through it needs no GET.
  github::Job took;
  took.id = in.job_id;
  took.status = github::JobStatus::kInProgress;
  took.runner_name = in.runner_name;
  assigned_.Remember(in.repository, took);
  // Where this runner went: a later taken intent whose chain passes through this launch follows
  // it on from here.
  return deps_.table.RecordTook(repository, launched_for, in.runner_name, in.repository, in.job_id);
}

LaunchOutcome Launcher::Taken(const TakenIntent& in) {
  NoteJobAction(in.repository, in.job_id, JobAction::kInProgress);
  LaunchOutcome out;
  out.runner_name = in.runner_name;
  auto settle = [&](LaunchDecision decision, std::string detail) {
    return Settled(out, decision, std::move(detail), config_.defer_delay());
  };
  // The job the runner was launched for, and its repository: the mapping row's (at organisation
  // scope it may be another repository than the job it took), else the runner's name and the
  // set's repository (or, for an organisation, the taken job's: the best guess until the row).
  Result<std::optional<MappingRow>> row = deps_.table.GetMapping(in.runner_name);
  if (!row.ok()) return settle(LaunchDecision::kFailed, row.status().ToString());
  std::optional<int64_t> launched_for = LaunchedFor(in.runner_name);
  std::string repository =
      scope_.serves_many_repositories() ? in.repository : config_.github.repository;
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
  if (Status s = NoteTook(in, repository, *launched_for); !s.ok()) {
    return settle(LaunchDecision::kFailed, s.ToString());
  }
  // What the taken job's own launch means first: it reads the store only. A launch that has not
  // begun, or whose runner is not busy elsewhere, serves whichever job is left waiting, so no
  // GitHub read is needed to know the intent has nothing to do (in a burst nearly every runner
  // takes another job than its own, and reading the waiting job first cost a GET a job).
  int64_t under_way_since_ms = 0;
  const TakenJobsLaunch launch = TakenJobsLaunchState(in, &under_way_since_ms);
  if (launch == TakenJobsLaunch::kServes) {
    return settle(LaunchDecision::kIgnored,
                  "the launch for job " + std::to_string(in.job_id) +
                      " has not begun or has a runner that is not busy: it serves the job");
  }
  // The job left waiting: the one this runner was launched for, or, when another of the set's
  // runners took that one, the one that runner was launched for, and so on (the intents of a
  // chain arrive in any order; whichever comes last finds the job still waiting).
  Result<std::optional<WaitingHead>> head =
      FindWaitingHead(repository, *launched_for, in.runner_name);
  if (!head.ok() && IsGitHubRateLimit(head.status())) {
    // The chain is read again once GitHub's limits allow: waiting is no failure.
    return DeferForRateLimit(in.job_id, head.status(), std::move(out));
  }
  if (!head.ok()) return settle(LaunchDecision::kFailed, head.status().ToString());
  if (!*head) {
    return settle(LaunchDecision::kIgnored,
                  "job " + std::to_string(*launched_for) + " has a runner or has ended");
  }
  const WaitingHead& w = **head;
  if (launch == TakenJobsLaunch::kUnderWay) {
    settle(LaunchDecision::kDeferred,
           "the launch for job " + std::to_string(in.job_id) + " is under way");
    out.retry_after = WaitOnClaim(under_way_since_ms, config_.launch_timeout());
    return out;
  }
  return RelaunchWaiting(in, w);
}

LaunchOutcome Launcher::RelaunchWaiting(const TakenIntent& in, const WaitingHead& w) {
  LaunchOutcome out;
  out.runner_name = in.runner_name;
  auto settle = [&](LaunchDecision decision, std::string detail) {
    return Settled(out, decision, std::move(detail), config_.defer_delay());
  };
  const RunnerClass* cls = config_.ClassForJob(w.job.labels);
  if (!cls) return settle(LaunchDecision::kIgnored, "no class of the set takes the job's labels");
  const std::string waiting = std::to_string(w.job.id);
  Result<std::optional<Claim>> claim = deps_.table.GetClaim(w.repository, w.job.id);
  if (!claim.ok()) return settle(LaunchDecision::kFailed, claim.status().ToString());
  if (*claim) {
    const Claim& c = **claim;
    if (c.microvm_id.empty()) {
      // Its launch has not committed: the runner took a job before the launch wrote its row.
      // Come back once it has (a dead launch is taken over after claimTakeoverSeconds).
      settle(LaunchDecision::kDeferred, "the launch of job " + waiting + " has not committed");
      out.retry_after = WaitOnClaim(c.claimed_ms, config_.claim_takeover_after());
      return out;
    }
    if (c.runner_name != w.runner_name) {
      return settle(LaunchDecision::kIgnored, "job " + waiting + " was launched again already");
    }
    if (Status s = deps_.table.ReleaseCommitted(w.repository, w.job.id, c.attempt_token); !s.ok()) {
      return settle(LaunchDecision::kFailed, s.ToString());
    }
  }
  deps_.seam.logger.Info("a runner took another job; launching again for the job left waiting",
                         {{"runner_name", in.runner_name},
                          {"took_job_id", in.job_id},
                          {"took_repository", in.repository},
                          {"job_id", w.job.id},
                          {"repository", w.repository}});
  deps_.metrics.Add(Counter::kRelaunchedTaken);
  // GitHub's jobs API says that job still waits: its word, newer than any delivery, and the
  // launch's still-queued check (FindWaitingHead read it a moment ago, never from what was kept:
  // a queued answer is not kept).
  return LaunchAs(LaunchIntentForJob(w.repository, w.job, cls->label, deps_.seam.clock.Now(),
                                     in.delivery_id.empty() ? "taken" : in.delivery_id),
                  JobAction::kRequeued, &w.job);
}

// Within a scale set any runner takes any of the set's jobs, so the runner launched for this job
// may have taken another; GitHub then offers this one again once its start timeout passes, and
// the committed claim made the new JobAssigned launch nothing: the job waited until GitHub
// abandoned it (the `scaleset` simulation, seed 1). The binding JobStarted wrote says which job
// the runner took; a runner bound to this job, or not yet bound, still serves it.
std::optional<LaunchOutcome> Launcher::SetJobStarted(const LaunchIntent& in) {
  if (in.scale_set_id == 0) return std::nullopt;
  Result<std::optional<std::string>> on = deps_.table.SetJobStartedOn(in.repository, in.job_id);
  LaunchOutcome out;
  if (!on.ok()) {
    // Unreadable: looked at again shortly, not launched. The claim does not keep a job another
    // runner of the set took to no VM (a dead launch's claim is taken over), and launching anyway
    // booted VMs for jobs already running elsewhere (the `scaleset-chaos` simulation, seed 10).
    out.decision = LaunchDecision::kDeferred;
    out.retry_after = config_.defer_delay();
    out.detail =
        "cannot tell whether another runner of the set started the job: " + on.status().ToString();
    deps_.metrics.AddDeferral("job_started_unreadable");
    return out;
  }
  if (!*on) return std::nullopt;
  out.decision = LaunchDecision::kDuplicate;
  out.runner_name = **on;
  out.detail = "GitHub started the job on runner " + **on;
  return out;
}

bool Launcher::ReleaseIfItsRunnerTookAnother(const LaunchIntent& in) {
  if (in.scale_set_id == 0) return false;
  Result<std::optional<Claim>> claim = deps_.table.GetClaim(in.repository, in.job_id);
  if (!claim.ok() || !*claim || (*claim)->runner_name.empty()) return false;
  Result<std::optional<JobBinding>> bound = deps_.table.GetJobBinding((*claim)->runner_name);
  if (!bound.ok()) return false;  // unreadable: the launch is kept, as before
  const std::optional<int64_t> bound_job =
      *bound ? std::optional<int64_t>((*bound)->job_id) : std::nullopt;
  if (!SetLaunchServesAnother(in.job_id, (*claim)->runner_name, bound_job)) return false;
  if (!deps_.table.ReleaseCommitted(in.repository, in.job_id, (*claim)->attempt_token).ok()) {
    return false;
  }
  deps_.seam.logger.Info(
      "scale set job offered again: its runner took another job; launching again",
      {{"runner_request_id", in.job_id},
       {"runner_name", (*claim)->runner_name},
       {"took", *bound_job}});
  return true;
}

}  // namespace mvr::runnerset
