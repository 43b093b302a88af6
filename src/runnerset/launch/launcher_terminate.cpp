// Launcher::Terminate: the terminate intent (001, duty 4) and the end of the job's timeline.
#include <string>

#include "fleet/microvm_lifecycle.h"
#include "runnerset/launch/launcher.h"

namespace mvr::runnerset {
LaunchOutcome Launcher::Terminate(const TerminateIntent& in) {
  const Seam& seam = deps_.seam;
  if (!in.repository.empty() && in.job_id > 0) {
    NoteJobAction(in.repository, in.job_id, JobAction::kCompleted);
  }
  LaunchOutcome out;
  out.runner_name = in.runner_name;
  Result<std::optional<MappingRow>> row = deps_.table.GetMapping(in.runner_name);
  if (!row.ok()) {
    out.decision = LaunchDecision::kFailed;
    out.retry_after = config_.defer_delay();
    out.detail = row.status().ToString();
    return out;
  }
  if (!*row) {
    out.decision = LaunchDecision::kIgnored;
    out.detail = "no mapping row for runner " + in.runner_name;
    return out;
  }
  const MappingRow& r = **row;
  if (config_.janitor.rerun_lost_jobs && !RerunIfLost(in, r)) {
    out.decision = LaunchDecision::kIgnored;
    out.detail =
        "the re-run of the job lost with MicroVM " + r.microvm_id + " waits for the janitor";
    return out;
  }
  // Once the service has taken TerminateMicrovm the VM ends on its own: the row and the seat go
  // now, without polling GetMicrovm until TERMINATED (two or three calls a job, issue 56). A VM
  // that somehow stayed RUNNING has no row, and the janitor's unmapped-VM sweep ends it.
  fleet::MicrovmLifecycle vms(seam, deps_.microvms);
  Status t = vms.RequestTerminate(r.microvm_id, seam.clock.Now() + config_.launch_timeout());
  if (!t.ok()) {
    out.decision = LaunchDecision::kFailed;
    out.retry_after = config_.defer_delay();
    out.detail = t.ToString();
    return out;
  }
  if (Status d = deps_.table.DeleteMapping(r.runner_name, r.microvm_id); !d.ok()) {
    out.decision = LaunchDecision::kFailed;
    out.retry_after = config_.defer_delay();
    out.detail = d.ToString();
    return out;
  }
  // Its seat of the cap is free again (one left behind is freed by the next reconciliation).
  if (Status f = cap_.FreeVm(r.microvm_id); !f.ok()) {
    seam.logger.Warn("freeing the MicroVM's seat of the cap",
                     {{"microvm_id", r.microvm_id}, {"error", f.ToString()}});
  }
  EndJob(in, r);
  out.decision = LaunchDecision::kTerminated;
  out.microvm_id = r.microvm_id;
  return out;
}

Result<github::Job> Launcher::JobAsCompleted(const TerminateIntent& in,
                                             const std::string& repository, int64_t job_id) {
  // GitHub's `completed` delivery carries the job's times, conclusion and name: the record is
  // written from them. A GET per job was a fifth of the set's GitHub calls, and at 1,000 jobs
  // it spent the hourly budget the last launches needed (issue 56; docs/runner-set-cost.md).
  if (in.started_at.time_since_epoch().count() > 0) {
    github::Job job;
    job.id = job_id;
    job.name = in.job_name;
    job.status = github::JobStatus::kCompleted;
    job.conclusion = in.conclusion;
    job.runner_name = in.runner_name;
    if (in.created_at.time_since_epoch().count() > 0) job.created_at = in.created_at;
    job.started_at = in.started_at;
    if (in.completed_at.time_since_epoch().count() > 0) job.completed_at = in.completed_at;
    return job;
  }
  auto repo = github::RepositoryRef::Parse(repository);
  return repo.ok() ? deps_.github.GetJob(*repo, job_id) : Result<github::Job>(repo.status());
}

void Launcher::EndJob(const TerminateIntent& in, const MappingRow& r) {
  // The timeline's end: when GitHub says the job started and completed. A runner that took
  // another job than the one it was launched for ends no timeline (its own job runs elsewhere),
  // but the job it ran is recorded, with GitHub's times only.
  const bool own_job = in.job_id == 0 || in.job_id == r.job_id;
  const std::string repository = own_job || in.repository.empty() ? r.repository : in.repository;
  const int64_t job_id = own_job ? r.job_id : in.job_id;
  if (job_id <= 0) return;
  Result<github::Job> job = JobAsCompleted(in, repository, job_id);
  const TimePoint done = in.completed_at.time_since_epoch().count() > 0 ? in.completed_at
                         : (job.ok() && job->completed_at)              ? *job->completed_at
                                                                        : deps_.seam.clock.Now();
  const std::string key = RunnerTable::JobKey(repository, job_id);
  JobRecord record;
  record.repository = repository;
  record.job_id = job_id;
  record.class_label = r.class_label;
  record.path = r.path;
  record.runner_name = r.runner_name;
  record.image_version = r.image_version;
  record.ended_ms = ToUnixMillis(done);
  // The VM just terminated ran this job, whichever job it was launched for.
  record.vm = {r.times.running_ms, r.times.member_created_ms, r.times.member_parked_ms,
               ToUnixMillis(deps_.seam.clock.Now())};
  if (job.ok()) {
    record.job_name = job->name;
    record.conclusion = job->conclusion;
    if (job->started_at) record.started_ms = ToUnixMillis(*job->started_at);
  }
  if (own_job && r.times.received_ms > 0) {
    if (job.ok() && job->started_at) {
      if (deps_.watch) deps_.watch->JobStarted(r.runner_name, *job->started_at);
      deps_.metrics.Observe(key, Milestone::kJobStarted, r.times.received_ms,
                            ToUnixMillis(*job->started_at));
    }
    deps_.metrics.Observe(key, Milestone::kCompleted, r.times.received_ms, ToUnixMillis(done));
    record.times = r.times;
    record.runner_online_ms = deps_.metrics.MarkOf(key, Milestone::kRunnerOnline).value_or(0);
  } else if (job.ok() && job->created_at) {
    record.times.received_ms = ToUnixMillis(*job->created_at);  // GitHub's, not the webhook's
  }
  KeepJobRecord(record);
}

void Launcher::KeepJobRecord(const JobRecord& record) {
  // The status page's history; losing one record is not worth failing the intent over. A
  // failure's text passes the log's redactor: no secret the process knows is stored.
  JobRecord kept = record;
  kept.failure = deps_.seam.logger.redactor().Redact(kept.failure);
  if (Status s = deps_.table.PutJobRecord(kept); !s.ok()) {
    deps_.seam.logger.Warn("recording the end of a job",
                           {{"job_id", record.job_id}, {"error", s.ToString()}});
  }
}

}  // namespace mvr::runnerset
