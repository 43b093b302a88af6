// Launcher::Terminate: the terminate intent (001, duty 4) and the end of the job's timeline.
#include <string>

#include "fleet/microvm_lifecycle.h"
#include "runnerset/launcher.h"

namespace mvr::runnerset {
LaunchOutcome Launcher::Terminate(const TerminateIntent& in) {
  const Seam& seam = deps_.seam;
  LaunchOutcome out;
  out.runner_name = in.runner_name;
  Result<std::optional<MappingRow>> row = deps_.table.GetMapping(in.runner_name);
  if (!row.ok()) {
    out.decision = LaunchDecision::kFailed;
    out.retry_after = Duration(config_.launcher.defer_seconds * 1000LL);
    out.detail = row.status().ToString();
    return out;
  }
  if (!*row) {
    out.decision = LaunchDecision::kIgnored;
    out.detail = "no mapping row for runner " + in.runner_name;
    return out;
  }
  const MappingRow& r = **row;
  fleet::MicrovmLifecycle vms(seam, deps_.microvms);
  Status t = vms.Terminate(r.microvm_id, seam.clock.Now() + config_.launch_timeout());
  if (!t.ok()) {
    out.decision = LaunchDecision::kFailed;
    out.retry_after = Duration(config_.launcher.defer_seconds * 1000LL);
    out.detail = t.ToString();
    return out;
  }
  if (Status d = deps_.table.DeleteMapping(r.runner_name, r.microvm_id); !d.ok()) {
    out.decision = LaunchDecision::kFailed;
    out.retry_after = Duration(config_.launcher.defer_seconds * 1000LL);
    out.detail = d.ToString();
    return out;
  }
  // The timeline's end: when GitHub says the job started and completed. A runner that took
  // another job than the one it was launched for ends no timeline: its own job runs elsewhere.
  const bool own_job = in.job_id == 0 || in.job_id == r.job_id;
  if (r.times.received_ms > 0 && own_job) {
    auto repo = github::RepositoryRef::Parse(r.repository);
    Result<github::Job> job =
        repo.ok() ? deps_.github.GetJob(*repo, r.job_id) : Result<github::Job>(repo.status());
    const std::string key = RunnerTable::JobKey(r.repository, r.job_id);
    if (job.ok() && job->started_at) {
      if (deps_.watch) deps_.watch->JobStarted(r.runner_name, *job->started_at);
      deps_.metrics.Observe(key, Milestone::kJobStarted, r.times.received_ms,
                            ToUnixMillis(*job->started_at));
    }
    TimePoint done = in.completed_at.time_since_epoch().count() > 0 ? in.completed_at
                     : (job.ok() && job->completed_at)              ? *job->completed_at
                                                                    : seam.clock.Now();
    deps_.metrics.Observe(key, Milestone::kCompleted, r.times.received_ms, ToUnixMillis(done));
  }
  out.decision = LaunchDecision::kTerminated;
  out.microvm_id = r.microvm_id;
  return out;
}

}  // namespace mvr::runnerset
