// Launcher: the `completed` of a job lost with its VM (issue 55, item 4). GitHub fails a job whose
// runner's VM ended under it once it gives up on the runner, and sends `completed`; the terminate
// intent then finds the VM already TERMINATED, earlier than the job completed. The job is re-run
// once when janitor.rerunLostJobs allows (lifecycle/lost_job.h decides, as in the janitor's
// janitor_lost.cpp for a `completed` that never came). docs/runner-set-lost-jobs.md.
#include "runnerset/launch/launcher.h"
#include "runnerset/lifecycle/lost_job.h"

namespace mvr::runnerset {

bool Launcher::RerunIfLost(const TerminateIntent& in, const MappingRow& r) {
  // The job the `completed` is for: the row's, or another its runner took (runners of a label
  // are interchangeable), lost with the VM all the same.
  const int64_t job_id = in.job_id > 0 ? in.job_id : r.job_id;
  const std::string& repository =
      in.job_id > 0 && !in.repository.empty() ? in.repository : r.repository;
  if (job_id <= 0 || repository.empty()) return true;
  Result<aws::Microvm> vm = deps_.microvms.GetMicrovm(r.microvm_id);
  if (!vm.ok() || vm->state != aws::MicrovmState::kTerminated || !vm->terminated_at) return true;
  auto repo = github::RepositoryRef::Parse(repository);
  if (!repo.ok()) return true;
  Result<github::Job> job = deps_.github.GetJob(*repo, job_id);
  if (!job.ok()) return true;  // the janitor's recovery is the floor under a lost job
  const LostJobVerdict verdict = DecideLostJob(
      LostJobEvidenceOf(*job, r.runner_name, vm->terminated_at, config_.janitor.rerun_lost_jobs,
                        Duration(config_.janitor.rerun_max_minutes * 60'000LL)));
  if (verdict == LostJobVerdict::kNotLost || verdict == LostJobVerdict::kWait) return true;
  NoteVmFailure(r.class_label, r.microvm_id, "lost_mid_job");
  const LogFields fields = {{"job_id", job_id},
                            {"repository", repository},
                            {"runner_name", r.runner_name},
                            {"microvm_id", r.microvm_id},
                            {"verdict", LostJobVerdictName(verdict)}};
  if (verdict != LostJobVerdict::kRerun) {
    deps_.metrics.AddJanitor(std::string("lost_jobs_") + LostJobVerdictName(verdict));
    deps_.seam.logger.Warn("a job was lost with its MicroVM; not re-run", fields);
    return true;
  }
  if (Status rerun = deps_.github.RerunJob(*repo, job_id); !rerun.ok()) {
    deps_.seam.logger.Warn(
        "GitHub refused to re-run a job lost with its MicroVM; the janitor asks "
        "again",
        {{"job_id", job_id}, {"error", rerun.ToString()}});
    return false;
  }
  deps_.metrics.AddJanitor("lost_jobs_rerun");
  deps_.seam.logger.Warn("a job was lost with its MicroVM; GitHub re-runs it", fields);
  return true;
}

}  // namespace mvr::runnerset
