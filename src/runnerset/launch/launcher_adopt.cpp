// Launcher: the takeover of a claim whose launch died (issue 53, item 3). The dead attempt may
// have delivered its runner's config and died before its commit; that runner may be running a job
// by now. It is adopted then (its mapping row written, so the job's terminate intent ends its VM
// as for any launch), never left an orphan for the janitor to strike; otherwise it is removed and
// its VM terminated.
#include "fleet/microvm_lifecycle.h"
#include "runnerset/adopt/dead_launch.h"
#include "runnerset/launch/launcher.h"
#include "runnerset/launch/launcher_attempt.h"

namespace mvr::runnerset {

Launcher::TakenOverLeft Launcher::CleanUpTakenOver(const Claim& previous, TimePoint deadline) {
  const Seam& seam = deps_.seam;
  TakenOverLeft left;
  std::optional<PoolMember> member;
  if (deps_.pool && !previous.pending_microvm_id.empty()) {
    Result<std::optional<PoolMember>> read = deps_.pool->ReadMember(previous.pending_microvm_id);
    if (read.ok()) member = *read;
  }
  const bool hot = member && member->kind == PoolMember::Kind::kHot;
  const std::string runner_name =
      hot ? member->runner_name : DeadLaunchRunnerName(config_.runner_name_prefix, previous);
  DeadLaunchEvidence evidence;
  if (deps_.adopt_dead_launches) {
    evidence = ProbeDeadLaunch(seam, deps_.github, scope_, previous, runner_name, deadline);
  } else if (previous.pending_runner_id > 0) {
    // The planted bug: the release this replaced (a busy runner's VM left to the orphan reaper).
    fleet::RunnerRegistration runners(seam, deps_.github, scope_);
    evidence.has_runner = true;
    evidence.removal = RemovalOf(runners.Remove(previous.pending_runner_id, deadline));
    if (evidence.removal == RunnerRemoval::kFailed) evidence.removal = RunnerRemoval::kRemoved;
  }
  const DeadLaunchStep step = DecideDeadLaunch(evidence);
  const LogFields ids = {{"runner_id", previous.pending_runner_id},
                         {"runner_name", runner_name},
                         {"microvm_id", previous.pending_microvm_id},
                         {"step", DeadLaunchStepName(step)}};
  if (step == DeadLaunchStep::kAdopt || step == DeadLaunchStep::kWait) {
    // Running a job, or not known: its VM is left alone (a VM left unmapped is the janitor's,
    // which asks its supervisor before it strikes).
    left.runner_busy = step == DeadLaunchStep::kAdopt;
    if (left.runner_busy && deps_.adopt_dead_launches && !previous.pending_microvm_id.empty()) {
      left.adopt = AdoptedRow(previous, runner_name, "", member ? &*member : nullptr);
      if (member) left.also.push_back(WarmPoolTable::RemoveMemberOp(member->microvm_id));
    }
    seam.logger.Info(
        "the runner of a launch attempt that died is running a job (or cannot be "
        "removed); its VM is left alone",
        ids);
    return left;
  }
  if (!previous.pending_microvm_id.empty()) {
    fleet::MicrovmLifecycle vms(seam, deps_.microvms);
    Status s = vms.Terminate(previous.pending_microvm_id, deadline);
    seam.logger.Info("terminated the MicroVM of a launch attempt that died",
                     {{"microvm_id", previous.pending_microvm_id}, {"ok", s.ok()}});
  }
  return left;
}

std::optional<LaunchOutcome> Launcher::SettleTakenOver(Attempt& a, const Claim& previous) {
  const TakenOverLeft left = CleanUpTakenOver(previous, a.deadline);
  if (!left.runner_busy) return std::nullopt;
  const bool needed = StillNeeded(a.intent).value_or(Need::kUnknown) != Need::kNo;
  LaunchOutcome out;
  if (left.adopt && !needed) {
    // The dead attempt's runner took this job (or the job needs no runner any more): the claim
    // is committed with that runner's row, as if the attempt had lived.
    Status s = deps_.table.Commit(a.claim, a.token, *left.adopt, left.also);
    if (!s.ok()) {
      return CommitRefused(a, s.Annotate("adopting the runner of the attempt that died"),
                           *left.adopt);
    }
    deps_.seam.logger.Info("adopted the runner of a launch attempt that died before its commit",
                           {{"runner_name", left.adopt->runner_name},
                            {"microvm_id", left.adopt->microvm_id},
                            {"job_id", a.intent.job_id}});
    out.decision = LaunchDecision::kLaunched;
    out.microvm_id = left.adopt->microvm_id;
    out.runner_name = left.adopt->runner_name;
    out.detail = "adopted the runner of an earlier attempt that died before its commit";
    return out;
  }
  if (left.adopt) {
    // Its runner runs another job, and this one still waits: the row ends that VM after that job
    // (a row written meanwhile is as good), and this attempt launches for this job.
    Status s = deps_.table.Adopt(*left.adopt, left.also);
    if (!s.ok() && s.code() != Code::kConflict) {
      deps_.seam.logger.Warn("adopting the runner of a launch attempt that died",
                             {{"runner_name", left.adopt->runner_name}, {"error", s.ToString()}});
    }
    return std::nullopt;
  }
  if (needed) return std::nullopt;
  // The dead attempt's runner took this very job.
  deps_.table.Release(a.claim, a.token).IgnoreError();
  out.decision = LaunchDecision::kDroppedNotQueued;
  out.detail = "the job runs on the runner of an earlier attempt";
  return out;
}

LaunchOutcome Launcher::CommitRefused(Attempt& a, const Status& refused, const MappingRow& row) {
  if (refused.code() != Code::kConflict) return Fail(a, refused);
  // A hot member whose claim looked abandoned (its launch slow past claimTakeoverSeconds, or dead
  // and taken over meanwhile) is adopted by the pool sweeper when its runner is busy or cannot be
  // removed; the janitor adopts a dead launch's busy runner. The commit then finds that row.
  Result<std::optional<MappingRow>> there = deps_.table.GetMapping(row.runner_name);
  if (!there.ok() || !*there || (*there)->microvm_id != row.microvm_id) return Fail(a, refused);
  // Not a failure: the runner is mapped on its VM, which its job's end terminates. Failing would
  // remove that runner (unless busy) and end its VM under the row.
  deps_.table.Release(a.claim, a.token).IgnoreError();
  deps_.seam.logger.Info(
      "the runner of this launch was adopted first (by the pool sweeper or the janitor); the "
      "launch stands on that mapping row",
      {{"runner_name", row.runner_name}, {"microvm_id", row.microvm_id}, {"job_id", row.job_id}});
  LaunchOutcome out;
  out.decision = LaunchDecision::kLaunched;
  out.microvm_id = row.microvm_id;
  out.runner_name = row.runner_name;
  out.detail = "its runner was adopted first on MicroVM " + row.microvm_id +
               " (by the pool sweeper or the janitor); the launch stands on that mapping row";
  return out;
}

}  // namespace mvr::runnerset
