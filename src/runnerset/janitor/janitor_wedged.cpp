// Janitor: wedged runners (issue 55, item 5). A runner whose process exited without a job, whose
// worker hangs before reading its job (actions/runner #4598, #4418), or that has had no job for
// janitor.wedgedRunnerSeconds since its config was delivered is deregistered, its VM ended and,
// while its job is still queued, the job launched again at once rather than after the stuck-launch
// recovery and the idle reaping's grace and strikes. The supervisor's /v1/status says what it saw
// (jobStarted, runnerExitedWithoutJob); lifecycle/wedged_runner.h decides.
// docs/runner-set-lost-jobs.md.
#include <algorithm>

#include "fleet/microvm_lifecycle.h"
#include "runnerset/janitor/janitor.h"
#include "runnerset/jobs/intent.h"
#include "runnerset/lifecycle/wedged_runner.h"

namespace mvr::runnerset {

Result<fleet::SupervisorStatus> Janitor::ReadSupervisor(const std::string& microvm_id) {
  const TimePoint deadline = deps_.seam.clock.Now() + kSupervisorStatusTime;
  fleet::MicrovmLifecycle vms(deps_.seam, deps_.microvms);
  if (deps_.ingress == nullptr) return NotFound("no ingress to reach the supervisor through");
  MVR_ASSIGN_OR_RETURN(aws::Microvm vm, vms.Get(microvm_id, deadline));
  if (vm.state != aws::MicrovmState::kRunning || vm.endpoint.empty()) {
    return NotFound("MicroVM " + microvm_id + " is not RUNNING");
  }
  MVR_ASSIGN_OR_RETURN(Secret token, vms.ControlToken(microvm_id, fleet::kControlPort,
                                                      fleet::kControlTokenMinutes, deadline));
  return fleet::ReadSupervisorStatus(*deps_.ingress, deps_.seam, vm.endpoint, token, deadline);
}

void Janitor::EndWedged(Inventory& inv, SweepReport& report) {
  std::vector<MappingRow> kept;
  for (const MappingRow& row : inv.rows) {
    if (!EndWedgedOne(inv, row, report)) kept.push_back(row);
  }
  inv.rows = std::move(kept);
}

bool Janitor::EndWedgedOne(Inventory& inv, const MappingRow& row, SweepReport& report) {
  const TimePoint now = deps_.seam.clock.Now();
  WedgedEvidence e;
  e.wedged_after = Duration(config_.janitor.wedged_runner_seconds * 1000LL);
  if (row.job_id <= 0 || row.times.delivered_ms <= 0 || row.repository.empty()) return false;
  auto vm = inv.vms.find(row.microvm_id);
  if (vm == inv.vms.end() || vm->second.state != aws::MicrovmState::kRunning) return false;
  e.since_delivered = now - TimePoint(Duration(row.times.delivered_ms));
  if (e.since_delivered < e.wedged_after) return false;  // nothing read for a young runner
  Result<fleet::SupervisorStatus> status = ReadSupervisor(row.microvm_id);
  if (!status.ok()) return false;
  e.supervisor_answered = true;
  e.supervisor_state = status->state;
  e.job_started = status->job_started;
  e.exited_without_job = status->exited_without_job;
  if (e.job_started) return false;
  auto repo = github::RepositoryRef::Parse(row.repository);
  if (!repo.ok()) return false;
  Result<github::Job> job = deps_.github.GetJob(*repo, row.job_id);
  if (job.ok()) {
    e.job = job->status == github::JobStatus::kQueued ? WedgedJobState::kQueued
            : job->status == github::JobStatus::kInProgress && job->runner_name == row.runner_name
                ? WedgedJobState::kOnItsRunner
                : WedgedJobState::kEnded;
  }
  const WedgedVerdict verdict = DecideWedged(e);
  if (verdict == WedgedVerdict::kLeave) return false;
  deps_.seam.logger.Warn("janitor: a wedged runner: deregistered and its MicroVM ended",
                         {{"runner_name", row.runner_name},
                          {"microvm_id", row.microvm_id},
                          {"job_id", row.job_id},
                          {"exited_without_job", e.exited_without_job},
                          {"verdict", WedgedVerdictName(verdict)}});
  // GitHub may refuse while it still leases the job to the runner (#4598); the VM goes anyway,
  // and the unmapped-runner reaping removes the registration once GitHub lets go of it.
  Status removed = deps_.github.DeleteRunner(scope_, row.runner_id);
  if (removed.ok()) report.Add(Swept::kRunnersRemoved);
  Status terminated = TerminateVm(row.microvm_id);
  if (!terminated.ok()) {
    Error(report, "terminating wedged MicroVM " + row.microvm_id, terminated);
    return false;
  }
  report.Add(Swept::kVmsTerminated);
  deps_.metrics.AddJanitor("wedged_runners_ended");
  if (Status deleted = deps_.table.DeleteMapping(row.runner_name, row.microvm_id); deleted.ok()) {
    report.Add(Swept::kRowsRemoved);
  } else {
    Error(report, "deleting the row of " + row.runner_name, deleted);
  }
  if (verdict != WedgedVerdict::kEndAndRelaunch) return true;
  const RunnerClass* cls = config_.FindClass(row.class_label);
  auto claim = std::find_if(inv.claims.begin(), inv.claims.end(), [&](const Claim& c) {
    return c.repository == row.repository && c.job_id == row.job_id;
  });
  if (cls == nullptr || claim == inv.claims.end()) return true;  // the recovery's to find
  Status released = deps_.table.ReleaseCommitted(row.repository, row.job_id, claim->attempt_token);
  inv.claims.erase(claim);
  if (!released.ok()) {
    Error(report, "releasing the claim of job " + std::to_string(row.job_id), released);
    return true;
  }
  const LaunchIntent intent = LaunchIntentForJob(row.repository, *job, cls->label, now, "janitor");
  Result<std::string> sent = deps_.queue.Send(queue::OutgoingMessage{EncodeIntent(intent)});
  if (!sent.ok()) {
    Error(report, "queueing the launch of job " + std::to_string(row.job_id), sent.status());
    return true;
  }
  report.Add(Swept::kLaunchesRecovered);
  deps_.metrics.AddJanitor("wedged_jobs_relaunched");
  return true;
}

}  // namespace mvr::runnerset
