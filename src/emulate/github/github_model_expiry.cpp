// GithubModel: idle JIT registrations do not live long (issue 55, item 1). GitHub removes a
// registration that listens without a job for minutes (actions/runner #4726: 2-6 min), a JIT
// config never used within 5 minutes (ubicloud #2957), and a once-connected registration offline
// long enough (unpublished; actions/runner #4191 saw one collected after ~51 min). A runner whose
// registration is gone is answered 404 "Registration … was not found." A job handed to a runner
// that does not pick it up within a minute goes back to the queue. docs/emulate-github.md.
// Runners lost mid-job, re-runs and wedged runners (issue 55, items 4 and 5) are at the end.
#include <algorithm>

#include "base/encoding.h"
#include "emulate/github/github_model.h"

namespace mvr::emulate::github {

bool GithubModel::ExpiredLocked(const RunnerState& r) const {
  if (r.runner.busy || r.runner.job_id) return false;  // a runner with a job keeps it
  const TimePoint now = seam_.clock.Now();
  const Duration idle = options_.registration_idle_expiry;
  const Duration offline = options_.offline_registration_expiry;
  if (!r.runner.last_seen) {
    // Never connected: its JIT config is only valid so long (the stricter reading folds this
    // into the idle limit rather than a third knob).
    return idle.count() > 0 && now - r.runner.created_at >= idle;
  }
  if (OnlineLocked(r)) {
    return idle.count() > 0 && r.online_since && now - *r.online_since >= idle;
  }
  return offline.count() > 0 && now - *r.runner.last_seen >= offline;
}

TimePoint GithubModel::ExpiryTimeLocked(const RunnerState& r) const {
  const Duration idle = options_.registration_idle_expiry;
  if (!r.runner.last_seen) return r.runner.created_at + idle;
  if (OnlineLocked(r) && r.online_since) return *r.online_since + idle;
  return *r.runner.last_seen + options_.offline_registration_expiry;
}

std::optional<TimePoint> GithubModel::RegistrationExpiredAt(int64_t runner_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto r = runners_.find(runner_id);
  if (r != runners_.end()) {
    if (!ExpiredLocked(r->second)) return std::nullopt;
    return ExpiryTimeLocked(r->second);
  }
  auto e = expired_at_.find(runner_id);
  if (e == expired_at_.end()) return std::nullopt;
  return e->second;
}

void GithubModel::ExpireRegistrationsLocked() {
  if (options_.registration_idle_expiry.count() <= 0 &&
      options_.offline_registration_expiry.count() <= 0) {
    return;
  }
  for (auto it = runners_.begin(); it != runners_.end();) {
    if (!ExpiredLocked(it->second)) {
      ++it;
      continue;
    }
    expired_credentials_[it->second.credential_hash] = it->first;
    expired_at_[it->first] = ExpiryTimeLocked(it->second);
    it = runners_.erase(it);
  }
}

void GithubModel::NoteContactLocked(RunnerState& r) {
  if (!OnlineLocked(r)) r.online_since = seam_.clock.Now();
  r.session_lost = false;
  r.runner.last_seen = seam_.clock.Now();
}

Status GithubModel::ExpiredRegistrationLocked(const Secret& credential) const {
  auto it = expired_credentials_.find(Sha256Hex(credential.Reveal()));
  if (it == expired_credentials_.end()) return Status::Ok();
  // The runner's id stands for the registration's GUID GitHub names here.
  return NotFound("Registration " + std::to_string(it->second) + " was not found.")
      .WithErrorType(kRegistrationNotFound);
}

void GithubModel::RequeueUnpickedLocked() {
  const Duration limit = options_.assignment_pickup_timeout;
  if (limit.count() <= 0) return;
  const TimePoint now = seam_.clock.Now();
  for (const auto& [id, unfinished_job] : unfinished_) {
    Job& job = *unfinished_job;
    if (job.status != "in_progress" || !job.runner_id) continue;
    auto r = runners_.find(*job.runner_id);
    if (r == runners_.end()) continue;
    Runner& runner = r->second.runner;
    if (runner.job_id != job.id || r->second.job_picked_up || !runner.busy_since ||
        now - *runner.busy_since < limit) {
      continue;
    }
    // Back to the queue, for any runner; this one stays registered, idle, and counts as offline
    // until it makes contact again (so the job is not handed straight back). No webhook says so.
    r->second.session_lost = true;
    runner.busy = false;
    runner.job_id.reset();
    runner.busy_since.reset();
    job.status = "queued";
    job.started_at.reset();
    job.runner_id.reset();
    job.runner_name.clear();
    job.runner_group_id.reset();
    job.runner_group_name.clear();
    job.timeline.push_back(TimelineEntry{now, "requeued", "not picked up by " + runner.name});
    auto ss = scale_set_jobs_.find(job.id);  // a scale set's job stays the set's, for another
    if (ss != scale_set_jobs_.end() && ss->second.state == "running") {
      ss->second.state = "acquired";
      ss->second.since = now;
    }
  }
}

}  // namespace mvr::emulate::github

// GithubModel: a runner lost mid-job, and the re-run of a job (issue 55, item 4). A job whose
// runner stops making contact (its VM failed or was terminated under it) stays in progress until
// GitHub gives up on the runner and fails it ("The self-hosted runner lost communication with the
// server"); how long that takes is not published, so it is a knob (lost_runner_fails_job_after).
// POST /repos/{owner}/{repo}/actions/jobs/{job_id}/rerun answers 201 and starts a new attempt of
// the job's run (run_attempt + 1) in which the job is queued again under a new id; GitHub
// documents 403 as its refusal. The stricter reading of when it refuses: while the run still has
// a job that has not completed, and for a job of an attempt that is not the run's latest (an
// older attempt's job was re-run already). docs/emulate-github.md, "Runners lost mid-job, re-runs
// and wedged runners".
namespace mvr::emulate::github {

void GithubModel::FailJobsOfLostRunnersLocked(Outbox& out) {
  const Duration limit = options_.lost_runner_fails_job_after;
  if (limit.count() <= 0) return;
  const TimePoint now = seam_.clock.Now();
  // Completing a job takes it out of unfinished_, so walk a copy.
  std::vector<Job*> unfinished;
  unfinished.reserve(unfinished_.size());
  for (const auto& [id, unfinished_job] : unfinished_) unfinished.push_back(unfinished_job);
  for (Job* unfinished_job : unfinished) {
    Job& job = *unfinished_job;
    if (job.status != "in_progress" || !job.runner_id) continue;
    auto r = runners_.find(*job.runner_id);
    // A runner removed while busy fails its job where it is removed; one never heard from since
    // the job was given counts from then.
    TimePoint heard = job.started_at.value_or(now);
    if (r != runners_.end() && r->second.runner.last_seen) {
      heard = std::max(heard, *r->second.runner.last_seen);
    }
    if (now - heard < limit) continue;
    job.timeline.push_back(TimelineEntry{now, "runner_lost", job.runner_name});
    CompleteLocked(job, "failure", out);
  }
}

Result<Job> GithubModel::RerunJob(const std::string& owner, const std::string& repo,
                                  int64_t job_id) {
  Outbox out;
  Job copy;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const Repository* r = FindRepoLocked(owner, repo);
    auto it = jobs_.find(job_id);
    if (!r || it == jobs_.end() || it->second.repository_id != r->id) {
      return NotFound("Not Found");
    }
    const Job& old = it->second;
    int latest = 0;
    for (const auto& [id, job] : jobs_) {
      if (job.run_id != old.run_id) continue;
      latest = std::max(latest, job.run_attempt);
      if (job.status != "completed") {
        return Conflict("Cannot re-run a job while its workflow run (" +
                        std::to_string(old.run_id) + ") is still in progress");
      }
    }
    if (old.run_attempt < latest) {
      return Conflict("Job " + std::to_string(job_id) + " is of attempt " +
                      std::to_string(old.run_attempt) + " of its run, which has attempt " +
                      std::to_string(latest) + " already: re-run the latest attempt's job");
    }
    Job job;
    job.id = next_job_id_++;
    job.run_id = old.run_id;
    job.run_attempt = latest + 1;
    job.repository_id = old.repository_id;
    job.repository = old.repository;
    job.name = old.name;
    job.workflow_name = old.workflow_name;
    job.head_branch = old.head_branch;
    job.head_sha = old.head_sha;
    job.labels = old.labels;
    job.env = old.env;
    job.timeout = old.timeout;
    job.drop_webhooks = old.drop_webhooks;
    job.created_at = seam_.clock.Now();
    for (const JobStep& step : old.steps) {
      JobStep fresh;
      fresh.number = step.number;
      fresh.name = step.name;
      fresh.command = step.command;
      job.steps.push_back(fresh);
    }
    job.timeline.push_back(
        TimelineEntry{job.created_at, "queued", "re-run of " + std::to_string(job_id)});
    jobs_.at(job_id).timeline.push_back(
        TimelineEntry{job.created_at, "rerun", "as job " + std::to_string(job.id)});
    auto [added, inserted] = jobs_.emplace(job.id, std::move(job));
    unfinished_.emplace(added->first, &added->second);
    EmitLocked(added->second, "queued", out);
    AssignLocked(out);
    copy = added->second;
  }
  Dispatch(std::move(out));
  return copy;
}

}  // namespace mvr::emulate::github

namespace mvr::emulate::github {

// Issue 55, item 5: a runner whose worker hangs before it reads its job (actions/runner #4598: the
// listener took the job, the worker never read it; #4418: a worker that hangs holding its slot).
// GitHub hears nothing more from it: the job was never picked up, so it goes back to the queue
// after assignment_pickup_timeout, and the runner shows offline from then on.
bool GithubModel::RunnerWedged(int64_t runner_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto r = runners_.find(runner_id);
  return r != runners_.end() && r->second.wedged;
}

bool GithubModel::WedgesLocked(Job& job) {
  if (job.wedged_once) return false;  // a job wedges one runner at most
  if (job.wedge_runner) {
    job.wedged_once = true;
    return true;
  }
  if (options_.wedged_runners <= 0) return false;
  if (seam_.random.UniformDouble() >= options_.wedged_runners) return false;
  job.wedged_once = true;
  job.timeline.push_back(TimelineEntry{seam_.clock.Now(), "runner_wedged", job.runner_name});
  return true;
}

}  // namespace mvr::emulate::github
