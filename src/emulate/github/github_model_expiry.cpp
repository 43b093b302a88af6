// GithubModel: idle JIT registrations do not live long (issue 55, item 1). GitHub removes a
// registration that listens without a job for minutes (actions/runner #4726: 2-6 min), a JIT
// config never used within 5 minutes (ubicloud #2957), and a once-connected registration offline
// long enough (unpublished; actions/runner #4191 saw one collected after ~51 min). A runner whose
// registration is gone is answered 404 "Registration … was not found." A job handed to a runner
// that does not pick it up within a minute goes back to the queue. docs/emulate-github.md.
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
  for (int64_t id : unfinished_) {
    Job& job = jobs_.at(id);
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
