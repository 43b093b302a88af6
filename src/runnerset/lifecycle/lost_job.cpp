#include "runnerset/lifecycle/lost_job.h"

#include <algorithm>

namespace mvr::runnerset {

LostJobVerdict DecideLostJob(const LostJobEvidence& e) {
  switch (e.state) {
    case LostJobState::kUnknown:
    case LostJobState::kElsewhere:
      return LostJobVerdict::kNotLost;
    case LostJobState::kOnItsRunner:
      // The VM that ran it is gone; GitHub fails the job once it gives up on the runner, and
      // only a completed job can be re-run.
      return e.vm_ended_at ? LostJobVerdict::kWait : LostJobVerdict::kNotLost;
    case LostJobState::kCompleted:
      break;
  }
  if (!e.vm_ended_at || !e.job_completed_at ||
      *e.job_completed_at < *e.vm_ended_at + kLostJobMargin) {
    return LostJobVerdict::kNotLost;
  }
  if (e.conclusion != "failure") return LostJobVerdict::kNotFailed;
  if (!e.rerun_enabled) return LostJobVerdict::kRerunOff;
  if (e.run_attempt > 1) return LostJobVerdict::kAlreadyRerun;
  const TimePoint ran_until = std::min(*e.vm_ended_at, *e.job_completed_at);
  if (e.job_started_at && ran_until - *e.job_started_at >= e.rerun_max_ran) {
    return LostJobVerdict::kRanTooLong;
  }
  return LostJobVerdict::kRerun;
}

LostJobEvidence LostJobEvidenceOf(const github::Job& job, const std::string& runner_name,
                                  std::optional<TimePoint> vm_ended_at, bool rerun_enabled,
                                  Duration rerun_max_ran) {
  LostJobEvidence e;
  e.rerun_enabled = rerun_enabled;
  e.rerun_max_ran = rerun_max_ran;
  const bool on_its_runner = !runner_name.empty() && job.runner_name == runner_name;
  e.state = !on_its_runner                                ? LostJobState::kElsewhere
            : job.status == github::JobStatus::kCompleted ? LostJobState::kCompleted
                                                          : LostJobState::kOnItsRunner;
  e.conclusion = job.conclusion;
  e.vm_ended_at = vm_ended_at;
  e.job_started_at = job.started_at;
  e.job_completed_at = job.completed_at;
  e.run_attempt = job.run_attempt;
  return e;
}

LostJobRef JobTheRunnerRan(const LostJobRef& row_job, const std::string& runner_name,
                           const std::string& took_runner, const LostJobRef& took_job) {
  const bool took_another = !runner_name.empty() && took_runner == runner_name &&
                            took_job.job_id > 0 && !took_job.repository.empty();
  return took_another ? took_job : row_job;
}

const char* LostJobVerdictName(LostJobVerdict v) {
  switch (v) {
    case LostJobVerdict::kNotLost:
      return "not_lost";
    case LostJobVerdict::kWait:
      return "wait";
    case LostJobVerdict::kRerun:
      return "rerun";
    case LostJobVerdict::kRerunOff:
      return "rerun_off";
    case LostJobVerdict::kRanTooLong:
      return "ran_too_long";
    case LostJobVerdict::kAlreadyRerun:
      return "already_rerun";
    case LostJobVerdict::kNotFailed:
      return "not_failed";
  }
  return "unknown";
}

}  // namespace mvr::runnerset
