// Janitor: the runner of a launch that died between its delivery and its commit (issue 53, item
// 3). Its claim names its runner and VM but was never committed, and once the claim is older than
// the takeover age the VM is unmapped: the orphan reaper would strike and kill it while its runner
// runs a job (a job the runner took itself is no longer queued, so nothing takes the claim over).
// The evidence the mapped path weighs (GitHub's listing, the jobs API, the VM's supervisor)
// decides: a runner that runs a job is adopted, so its job's terminate intent ends the VM.
#include "runnerset/adopt/dead_launch.h"
#include "runnerset/janitor/janitor.h"

namespace mvr::runnerset {

bool Janitor::AdoptDeadLaunch(const Inventory& inv, const std::string& microvm_id,
                              SweepReport& report) {
  if (!deps_.adopt_dead_launches) return false;
  const Claim* dead = nullptr;
  for (const Claim& c : inv.claims) {
    if (c.microvm_id.empty() && c.pending_microvm_id == microvm_id && c.pending_runner_id > 0) {
      dead = &c;
    }
  }
  if (dead == nullptr || inv.pool_vms.count(microvm_id)) return false;  // a member: the sweeper's
  const std::string runner = DeadLaunchRunnerName(config_.runner_name_prefix, *dead);
  DeadLaunchEvidence evidence;
  evidence.has_runner = true;
  auto listed = inv.runners.find(runner);
  evidence.listed_busy = inv.runners_ok && listed != inv.runners.end() && listed->second.busy;
  if (!evidence.listed_busy) {
    Result<bool> works = RunsAJob(inv, runner);
    evidence.jobs_api_runs = works.ok() && *works;
  }
  if (!evidence.listed_busy && !evidence.jobs_api_runs) {
    evidence.supervisor_runs = SupervisorRunsAJob(microvm_id) == VmWork::kRunsAJob;
  }
  if (DecideDeadLaunch(evidence) != DeadLaunchStep::kAdopt) return false;
  const MappingRow row = AdoptedRow(*dead, runner, "", nullptr);
  Status s = deps_.table.Commit(RunnerTable::ClaimKey(dead->repository, dead->job_id),
                                dead->attempt_token, row);
  if (!s.ok() && s.code() != Code::kConflict) {
    Error(report, "adopting runner " + runner + " of a launch that died before its commit", s);
    return true;  // not an orphan either way: the next sweep tries again
  }
  report.Add(Swept::kBusySpared);
  deps_.seam.logger.Info(
      "janitor: the runner of a launch that died before its commit runs a job; "
      "adopted, its VM kept",
      {{"microvm_id", microvm_id}, {"runner_name", runner}});
  return true;
}

}  // namespace mvr::runnerset
