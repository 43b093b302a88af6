#include "runnerset/adopt/dead_launch.h"

#include "fleet/runner_registration.h"
#include "runnerset/config/runner_name.h"

namespace mvr::runnerset {

RunnerRemoval RemovalOf(const Status& removed) {
  if (removed.ok()) return RunnerRemoval::kRemoved;
  switch (removed.code()) {
    case Code::kNotFound:
      return RunnerRemoval::kGone;
    case Code::kConflict:
    case Code::kInvalidArgument:
      return RunnerRemoval::kRefusedBusy;
    default:
      return RunnerRemoval::kFailed;
  }
}

const char* DeadLaunchStepName(DeadLaunchStep step) {
  switch (step) {
    case DeadLaunchStep::kAdopt:
      return "adopt";
    case DeadLaunchStep::kEnd:
      return "end";
    case DeadLaunchStep::kWait:
      return "wait";
    case DeadLaunchStep::kLeave:
      return "leave";
  }
  return "?";
}

DeadLaunchStep DecideDeadLaunch(const DeadLaunchEvidence& e) {
  if (!e.has_runner) return DeadLaunchStep::kEnd;  // no runner, so no config went in
  if (e.removal == RunnerRemoval::kRefusedBusy || e.listed_busy || e.jobs_api_runs ||
      e.supervisor_runs) {
    return DeadLaunchStep::kAdopt;
  }
  switch (e.removal) {
    case RunnerRemoval::kRemoved:
    case RunnerRemoval::kGone:
      return DeadLaunchStep::kEnd;
    case RunnerRemoval::kFailed:
      return DeadLaunchStep::kWait;
    default:
      return DeadLaunchStep::kLeave;
  }
}

DeadLaunchEvidence ProbeDeadLaunch(const Seam& seam, github::GitHub& github,
                                   const github::RunnerScope& scope, const Claim& claim,
                                   const std::string& runner_name, TimePoint deadline) {
  DeadLaunchEvidence e;
  e.has_runner = claim.pending_runner_id > 0;
  if (!e.has_runner) return e;
  if (Result<github::RepositoryRef> repo = github::RepositoryRef::Parse(claim.repository);
      repo.ok()) {
    Result<github::Job> job = github.GetJob(*repo, claim.job_id);
    e.jobs_api_runs = job.ok() && job->status == github::JobStatus::kInProgress &&
                      job->runner_name == runner_name;
  }
  if (e.jobs_api_runs) return e;  // not removed: it runs the job, and a DELETE may believe a lie
  fleet::RunnerRegistration runners(seam, github, scope);
  e.removal = RemovalOf(runners.Remove(claim.pending_runner_id, deadline));
  return e;
}

std::string DeadLaunchRunnerName(const std::string& prefix, const Claim& claim) {
  return JobRunnerName(prefix, claim.job_id, claim.attempt_token.substr(0, 8));
}

MappingRow AdoptedRow(const Claim& claim, const std::string& runner_name,
                      const std::string& class_label, const PoolMember* member) {
  MappingRow row;
  row.runner_name = runner_name;
  row.runner_id = claim.pending_runner_id;
  row.microvm_id = claim.pending_microvm_id;
  row.repository = claim.repository;
  row.job_id = claim.job_id;
  row.class_label = member ? member->class_label : class_label;
  row.path = !member ? "cold" : member->kind == PoolMember::Kind::kHot ? "hot" : "warm";
  row.times.claimed_ms = claim.claimed_ms;
  if (member) {
    row.image_version = member->image_version;
    row.times.member_created_ms = member->created_ms;
    row.times.member_parked_ms = member->parked_ms;
  }
  return row;
}

}  // namespace mvr::runnerset
