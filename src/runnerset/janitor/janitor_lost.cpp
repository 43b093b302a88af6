// Janitor: the job of a VM lost mid-job (issue 55, item 4). A row whose VM is gone is removed by
// RemoveIfVmGone once its runner is; before that, the job it was launched for is read: GitHub
// completed it after the VM ended when the VM was lost under it (a platform error, the 8-hour
// limit, capacity), and the set re-runs it once through POST .../actions/jobs/{id}/rerun when
// janitor.rerunLostJobs allows (lifecycle/lost_job.h decides). docs/runner-set-lost-jobs.md.
#include <algorithm>
#include <cctype>

#include "runnerset/janitor/janitor.h"
#include "runnerset/lifecycle/lost_job.h"

namespace mvr::runnerset {
namespace {

// GitHub refuses a re-run while the job's run has other jobs in progress: the row stays and the
// re-run is asked again each sweep, for at most this long after the job failed.
constexpr Duration kRerunRetryWindow{3'600'000};

// GitHub's 403 for credentials without `actions: write` ("Resource not accessible by
// integration"), as against its 403 for a run with jobs still in progress, which passes.
bool RerunNotPermitted(const Status& s) {
  if (s.ok() || s.error_type() != "Forbidden") return false;
  std::string m = s.message();
  std::transform(m.begin(), m.end(), m.begin(), [](unsigned char c) { return std::tolower(c); });
  return m.find("not accessible by integration") != std::string::npos;
}

}  // namespace

LostJobRef Janitor::JobRanBy(const MappingRow& row) {
  const LostJobRef own{row.repository, row.job_id};
  Result<std::optional<Claim>> claim = deps_.table.GetClaim(row.repository, row.job_id);
  if (!claim.ok() || !*claim) return own;  // no record of another job: the row's own
  const Claim& c = **claim;
  return JobTheRunnerRan(own, row.runner_name, c.took_runner, {c.took_repository, c.took_job_id});
}

void Janitor::NoteLostVm(const MappingRow& row) {
  // The class's circuit breaker counts the loss (once per VM: the launcher may count it too).
  const RunnerClass* cls = config_.FindClass(row.class_label);
  if (deps_.health == nullptr || cls == nullptr) return;
  Result<BreakerVerdict> b =
      deps_.health->breaker().RecordFailure(*cls, row.microvm_id, "lost_mid_job");
  if (!b.ok()) {
    deps_.seam.logger.Warn("janitor: recording a loss for the class's circuit breaker",
                           {{"class", row.class_label}, {"error", b.status().ToString()}});
  }
}

bool Janitor::SettleLostJob(const MappingRow& row, const aws::Microvm* vm, SweepReport& report) {
  if (row.job_id <= 0 || row.repository.empty()) return true;  // a pool member's row
  // The job its runner ran: the row's, or another it took (lost with the VM all the same).
  const LostJobRef ran = JobRanBy(row);
  auto repo = github::RepositoryRef::Parse(ran.repository);
  if (!repo.ok()) return true;
  Result<github::Job> job = deps_.github.GetJob(*repo, ran.job_id);
  if (!job.ok()) {
    if (job.status().code() == Code::kNotFound) return true;
    Error(report, "reading job " + std::to_string(ran.job_id), job.status());
    return false;
  }
  const LostJobVerdict verdict = DecideLostJob(LostJobEvidenceOf(
      *job, row.runner_name, vm != nullptr ? vm->terminated_at : std::nullopt,
      config_.janitor.rerun_lost_jobs, Duration(config_.janitor.rerun_max_minutes * 60'000LL)));
  if (verdict == LostJobVerdict::kNotLost) return true;
  if (verdict == LostJobVerdict::kWait) return false;
  NoteLostVm(row);
  const LogFields fields = {{"job_id", ran.job_id},
                            {"repository", ran.repository},
                            {"runner_name", row.runner_name},
                            {"microvm_id", row.microvm_id},
                            {"verdict", LostJobVerdictName(verdict)}};
  if (verdict != LostJobVerdict::kRerun) {
    deps_.metrics.AddJanitor(std::string("lost_jobs_") + LostJobVerdictName(verdict));
    deps_.seam.logger.Warn("janitor: a job was lost with its MicroVM; not re-run", fields);
    return true;
  }
  Status rerun = deps_.github.RerunJob(*repo, ran.job_id);
  if (RerunNotPermitted(rerun)) {
    // Asking again changes nothing until someone grants the permission: counted, logged with
    // the fix, and the row goes.
    deps_.metrics.AddJanitor("lost_jobs_rerun_forbidden");
    LogFields refused = fields;
    refused.push_back({"error", rerun.ToString()});
    deps_.seam.logger.Error(
        "janitor: GitHub refuses to re-run a job lost with its MicroVM: the credentials lack "
        "actions: write (grant the App \"Actions: Read and write\" and accept it in the "
        "installation, or turn janitor.rerunLostJobs off)",
        refused);
    return true;
  }
  if (!rerun.ok()) {
    Error(report, "re-running job " + std::to_string(ran.job_id), rerun);
    const bool give_up =
        job->completed_at && deps_.seam.clock.Now() - *job->completed_at >= kRerunRetryWindow;
    if (give_up) deps_.metrics.AddJanitor("lost_jobs_rerun_refused");
    return give_up;
  }
  deps_.metrics.AddJanitor("lost_jobs_rerun");
  deps_.seam.logger.Warn("janitor: a job was lost with its MicroVM; GitHub re-runs it", fields);
  return true;
}

}  // namespace mvr::runnerset
