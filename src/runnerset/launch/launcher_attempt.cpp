// Launcher::Attempt (launcher_attempt.h): one launch on one class, from the job's claim to its
// commit (steps 3-7 in launcher.h). The claim's answer and the path (hot, warm, cold) are the
// launch's decision (launch_decision.h); this carries them out, and Fail undoes what a failed
// attempt made.
#include "runnerset/launch/launcher_attempt.h"

#include <algorithm>

#include "fleet/control_delivery.h"
#include "fleet/network_connectors.h"
#include "github/platform_labels.h"
#include "runnerset/classes/class_resolve.h"
#include "runnerset/config/runner_name.h"
#include "supervisor/run_payload.h"

namespace mvr::runnerset {
namespace {

// Whether RunMicrovm's failure says no VM was made: the request was refused as invalid,
// unauthorized, for an unknown image, for want of capacity or quota, or for a clientToken reused
// with other parameters. A timeout, a 5xx or a throttle after retries leaves the outcome unknown.
bool RefusedToRun(const Status& s) {
  switch (s.code()) {
    case Code::kInvalidArgument:
    case Code::kUnauthorized:
    case Code::kNotFound:
    case Code::kConflict:
    case Code::kQuotaExceeded:
      return true;
    default:
      return IsOutOfCapacity(s);
  }
}

// The labels a cold runner registers with: an ARM64 MicroVM's (self-hosted, linux, ARM64), the
// class label and the job's own (so GitHub hands the job to it; the class took it, so they are
// among what the class offers, and never another platform's: github/platform_labels.h).
std::vector<std::string> RunnerLabels(const LaunchIntent& in) {
  std::vector<std::string> custom{in.class_label};
  custom.insert(custom.end(), in.labels.begin(), in.labels.end());
  return github::Arm64RunnerLabels(custom);
}

}  // namespace

LaunchOutcome Launcher::Run(Attempt& a, LaunchEvidence e) {
  const Seam& seam = deps_.seam;
  const LaunchIntent& in = a.intent;
  LaunchOutcome out;
  // (3) The claim: one VM per job, whatever the duplicates.
  e.launch_class = &a.runner_class;
  e.has_pool_table = deps_.pool != nullptr;
  if (std::optional<LaunchOutcome> served = SetJobStarted(in)) return *served;
  Result<RunnerTable::ClaimResult> claim = deps_.table.ClaimJob(in.repository, in.job_id);
  if (claim.ok() && claim->outcome == RunnerTable::ClaimOutcome::kLaunched &&
      ReleaseIfItsRunnerTookAnother(in)) {
    claim = deps_.table.ClaimJob(in.repository, in.job_id);
  }
  e.claim = !claim.ok()                                              ? ClaimEvidence::kUnreadable
            : claim->outcome == RunnerTable::ClaimOutcome::kLaunched ? ClaimEvidence::kLaunched
            : claim->outcome == RunnerTable::ClaimOutcome::kBusy     ? ClaimEvidence::kBusy
                                                                     : ClaimEvidence::kWon;
  const LaunchVerdict verdict = DecideLaunch(e);
  if (verdict.step == LaunchStep::kFail) return Fail(a, claim.status());
  if (verdict.step == LaunchStep::kDuplicate) {
    out.decision = LaunchDecision::kDuplicate;
    out.microvm_id = claim->microvm_id;
    out.detail = "the job already has MicroVM " + claim->microvm_id;
    return out;
  }
  if (verdict.step == LaunchStep::kDefer) {
    out.decision = LaunchDecision::kDeferred;
    out.retry_after = WaitOnClaim(claim->held_since_ms, config_.claim_takeover_after());
    out.detail = "another attempt holds the job's claim";
    deps_.metrics.AddDeferral("claimed_elsewhere");
    return out;
  }
  a.claim = RunnerTable::ClaimKey(in.repository, in.job_id);
  a.token = claim->attempt_token;
  // The job's state again, the claim won: a `completed` the set recorded since the launch first
  // read it (its GitHub read and its seat take seconds) stops it as it stops a launch that begins
  // after the record. Deferred, not dropped: the intent's next look follows the runner's chain.
  if (!claim->taken_over && e.job && !e.job->stale && StaleSinceGathered(in)) {
    deps_.table.Release(a.claim, a.token).IgnoreError();  // else a takeover settles it
    out.decision = LaunchDecision::kDeferred;
    out.retry_after = config_.defer_delay();
    out.detail = "the job's state changed while the launch claimed it: looked at again";
    deps_.metrics.AddDeferral("job_state_changed");
    return out;
  }
  a.times.claimed_ms = ToUnixMillis(seam.clock.Now());
  a.job_key = RunnerTable::JobKey(in.repository, in.job_id);
  deps_.metrics.Observe(a.job_key, Milestone::kClaimed, a.times.received_ms, a.times.claimed_ms);
  if (a.counts_for && deps_.arrivals && !claim->taken_over) CountArrival(*a.counts_for, in);
  if (claim->taken_over) {
    if (std::optional<LaunchOutcome> settled = SettleTakenOver(a, *claim->taken_over)) {
      return *settled;
    }
  }

  // (4)-(6) A VM with a runner for the job: a hot-pool member resumed (its runner registered
  // and connected long ago), or a warm-pool member resumed and then registered against and
  // delivered to, or a cold launch registered before the VM exists.
  Result<aws::Microvm> vm = TakeMemberOnPath(a, e);
  if (!vm.ok()) return Fail(a, vm.status());
  if (!a.hot) {
    if (Status s = Register(a); !s.ok()) return Fail(a, s);
  }
  if (!a.warm) {
    vm = LaunchCold(a);
    if (!vm.ok()) return Fail(a, vm.status());
  }
  a.times.running_ms = ToUnixMillis(seam.clock.Now());
  deps_.metrics.Observe(a.job_key, Milestone::kVmRunning, a.times.received_ms, a.times.running_ms);
  if (!a.hot) {
    if (Status s = Deliver(a, *vm); !s.ok()) return Fail(a, s);
  }
  // A hot runner's config went in when its member was made: it counts as delivered on resume.
  a.times.delivered_ms = ToUnixMillis(seam.clock.Now());
  deps_.metrics.Observe(a.job_key, Milestone::kConfigDelivered, a.times.received_ms,
                        a.times.delivered_ms);
  return Commit(a, *vm);
}

Result<aws::Microvm> Launcher::TakeMemberOnPath(Attempt& a, LaunchEvidence& e) {
  for (;;) {
    const LaunchVerdict verdict = DecideLaunch(e);
    switch (verdict.step) {
      case LaunchStep::kGather:  // the pools' health: their members hold the class's runner
        e.pool_usable = !deps_.health || deps_.health->Of(a.runner_class.label).healthy;
        break;
      case LaunchStep::kTakeHot: {
        Result<aws::Microvm> vm = TakePoolMember(a, PoolMember::Kind::kHot);
        if (!vm.ok() || a.hot) return vm;
        e.hot_tried = true;
        e.pool_usable.reset();  // asked again for the warm pool, after the hot one's I/O
        break;
      }
      case LaunchStep::kTakeWarm:
        return TakePoolMember(a, PoolMember::Kind::kWarm);
      default:  // kLaunchCold
        return aws::Microvm{};
    }
  }
}

Status Launcher::Deliver(Attempt& a, const aws::Microvm& vm) {
  const Seam& seam = deps_.seam;
  // A claim this old may have been taken over by another launcher, and a runner delivered now
  // would be the job's second (the delivery's retries still make one attempt past the deadline,
  // which a claimTakeoverSeconds no shorter than the launch timeout cannot cover).
  if (ToUnixMillis(seam.clock.Now()) - a.times.claimed_ms >=
      config_.claim_takeover_after().count()) {
    return Transient(
        "the launch outlasted claimTakeoverSeconds before its runner was delivered; another "
        "attempt may hold the job");
  }
  Result<Secret> token = a.vms.ControlToken(a.microvm_id, fleet::kControlPort,
                                            fleet::kControlTokenMinutes, a.deadline);
  if (!token.ok()) return token.status();
  fleet::RunnerStartDelivery delivery{vm.endpoint,
                                      *token,
                                      fleet::RunnerRequestId(a.runner_id),
                                      a.microvm_id,
                                      a.jit->encoded_jit_config,
                                      a.nonce};
  return fleet::DeliverRunnerStart(deps_.http, seam, delivery, a.deadline);
}

LaunchOutcome Launcher::Commit(Attempt& a, const aws::Microvm& vm) {
  const LaunchIntent& in = a.intent;
  MappingRow row;
  row.runner_name = a.runner_name;
  row.runner_id = a.runner_id;
  row.microvm_id = a.microvm_id;
  row.repository = in.repository;
  row.job_id = in.job_id;
  row.class_label = a.runner_class.label;
  row.image_version = vm.image_version;
  row.path = a.hot ? "hot" : a.warm ? "warm" : "cold";
  row.times = a.times;
  std::vector<store::WriteOp> also;
  if (a.warm) also.push_back(WarmPoolTable::RemoveMemberOp(a.microvm_id));
  // The fence (FenceOf): a launch serving another job its runner's chain left waiting commits
  // only while that job is not recorded in progress or over. A delivery recorded between the
  // decision and here, on any launcher, refuses it in the same transaction: no re-read leaves a
  // window. The claim names the job served.
  std::optional<JobRef> serves;
  if (a.fence) {
    also.push_back(
        JobStateLedger::Fence(a.fence->repository, a.fence->job_id, JobPhase::kInProgress));
    serves = JobRef{a.fence->repository, a.fence->job_id};
  }
  if (Status s = deps_.table.Commit(a.claim, a.token, row, also, serves); !s.ok()) {
    if (s.error_type() == RunnerTable::kCheckFailed && a.fence) {
      // The launch's own runner took a job meanwhile: most often the served job itself, whose
      // in_progress is what refused the commit (a short one can even be over, a hot runner's
      // above all). Its VM is at work and cannot be undone: the launch stands, as
      // launcher_warm.cpp's does when its VM is not yet seen RUNNING, committed without the
      // fence, and the still-queued check follows that runner to the job it ran.
      if (!RunnerTookAJob(a)) return Fenced(a, s);
      a.fence.reset();
      return Commit(a, vm);
    }
    return CommitRefused(a, s, row);
  }
  if (deps_.watch) deps_.watch->Await(a.runner_name, a.job_key, a.times.received_ms);
  LaunchOutcome out;
  out.decision = LaunchDecision::kLaunched;
  out.microvm_id = a.microvm_id;
  out.runner_name = a.runner_name;
  return out;
}

Status Launcher::Register(Attempt& a) {
  const LaunchIntent& in = a.intent;
  a.runner_name = JobRunnerName(config_.runner_name_prefix, in.job_id, a.token.substr(0, 8));
  github::JitConfigRequest jit_request;
  jit_request.name = a.runner_name;
  // The repository's own runner group, if it has one: only its jobs may take the runner its seat
  // was dealt for (launcher.fairShare; GitHub hands a runner the oldest job it may serve).
  jit_request.runner_group_id =
      config_.launcher.fair_share.RunnerGroupOf(in.repository, config_.github.runner_group_id);
  jit_request.labels = RunnerLabels(in);
  jit_request.scale_set_id = in.scale_set_id;
  // The set's JIT pace first (its processes together stay under GitHub's secondary limit, which
  // refused half the JIT configs of a 1,000-job burst when each process kept its own), then this
  // process's client budget. A longer wait for either would eat the launch's deadline: the launch
  // is deferred instead (launcher_rate.cpp), and the launcher takes the next message.
  MVR_RETURN_IF_ERROR(WaitForPace(jit_pace_, kLongestPaceWait, nullptr, "RateBudget"));
  a.runners.WaitForRateLimitsUpTo(Duration(5'000));
  Result<github::JitConfig> jit = a.runners.Register(jit_request, a.deadline);
  if (!jit.ok()) return jit.status();
  // Per-job secrets (this JIT config, the control token) are not added to the logger's redactor:
  // a long-running server would keep every one forever and scan each log line for all of them.
  // They stay in Secret, which prints ***, and no error message carries them.
  a.runner_id = jit->runner.id;
  a.jit = std::move(*jit);
  if (Status s = deps_.table.RecordRunner(a.claim, a.token, a.runner_id); !s.ok()) {
    return s.Annotate("recording the runner on the claim");
  }
  return Status::Ok();
}

Result<aws::Microvm> Launcher::LaunchCold(Attempt& a) {
  const Seam& seam = deps_.seam;
  // RunMicrovm, paced to the platform's rate, idempotent per claim attempt. The nonce is this
  // launch's, for its one delivery below; it is never stored.
  a.nonce = supervisor::NewControlNonce(seam.secure_random);
  MVR_ASSIGN_OR_RETURN(std::string payload,
                       supervisor::EncodeRunPayload(supervisor::RunPayload::Delivered(a.nonce)));
  aws::RunMicrovmRequest run;
  run.image_identifier = a.runner_class.RunImage();
  fleet::ApplyConnectors(ConnectorsOf(a.runner_class), run);
  run.image_version = a.runner_class.image_version;
  run.execution_role_arn = config_.launcher.execution_role_arn;
  run.run_hook_payload = Secret(payload);
  run.maximum_duration_in_seconds = a.runner_class.max_duration_seconds;
  run.client_token = "mvr-launch-" + a.token;
  // The set's RunMicrovm pace, kept by all its processes together: paced per process, 50
  // launchers sent up to ten times the platform's rate and each launch took 2.2 tries at 1,000
  // jobs. The wait is bounded by the launch's concurrency; one past half the time left fails the
  // attempt (no VM exists yet) and the message comes back.
  const Duration left = std::chrono::duration_cast<Duration>(a.deadline - seam.clock.Now());
  MVR_RETURN_IF_ERROR(WaitForPace(run_pace_, left / 2, &run_pacer_, "RunMicrovmPace"));
  Result<aws::Microvm> launched = a.vms.Launch(run, a.deadline);
  const TimePoint launched_at = seam.clock.Now();
  if (!launched.ok()) {
    a.out_of_capacity = IsOutOfCapacity(launched.status());
    a.vm_failed = launched.status().code() == Code::kInternal;
    // Unless the platform refused the request, a VM may exist that no answer named: its seat
    // stays until a reconciliation settles it (cap_count.h).
    a.keep_seat = a.keep_seat || !RefusedToRun(launched.status());
    return launched.status();
  }
  const aws::Microvm& vm = *launched;
  a.microvm_id = vm.microvm_id;
  NameSeat(a);
  if (Status s = deps_.table.RecordMicrovm(a.claim, a.token, a.microvm_id); !s.ok()) {
    return s.Annotate("recording the MicroVM on the claim");
  }
  seam.logger.Info(
      "MicroVM launched",
      {{"microvm_id", a.microvm_id}, {"runner_name", a.runner_name}, {"job_id", a.intent.job_id}});
  // RUNNING, then the runner's config goes through the control port. Internal: the VM ended
  // while it booted. Polled from the boot this launcher expects (fleet/boot_schedule.h).
  Result<aws::Microvm> running = a.vms.WaitBooted(a.microvm_id, launched_at, a.deadline, boots_);
  a.vm_failed = !running.ok() && running.status().code() == Code::kInternal;
  return running;
}

LaunchOutcome Launcher::Fenced(Attempt& a, const Status& refused) {
  const ServedJob& served = *a.fence;
  LaunchOutcome out;
  out.decision = LaunchDecision::kDeferred;
  out.retry_after = config_.defer_delay();
  out.detail = "job " + std::to_string(served.job_id) +
               " was recorded in progress or completed after the launch decided; its commit was "
               "refused (" +
               refused.message() + ")";
  Undo(a, out);
  // Deferred, not dropped: the intent's next look decides on the job's state as it is now (a
  // late queued follows its runner's chain). One line per refused commit.
  deps_.metrics.AddDeferral("commit_fenced");
  deps_.seam.logger.Info("launch refused at its commit: the job it serves moved on meanwhile",
                         {{"job_id", a.intent.job_id},
                          {"served_job_id", served.job_id},
                          {"runner_name", a.runner_name},
                          {"microvm_id", a.microvm_id},
                          {"detail", out.detail}});
  return out;
}

void Launcher::Undo(Attempt& a, LaunchOutcome& out) {
  const Seam& seam = deps_.seam;
  const TimePoint cleanup_deadline = std::max(a.deadline, seam.clock.Now()) + kLaunchCleanupTime;
  // The runner goes first: GitHub refuses to remove one that is running a job, and a busy
  // runner is never terminated. A resumed hot runner takes a job within a second of its thaw,
  // before the launch commits; if the commit then fails, that job is running on this VM (found
  // by the simulation: docs/simulation.md). The VM ends itself after the job; the claim stays
  // for a takeover to settle (it finds the runner busy and leaves the VM alone).
  bool runner_busy = false;
  if (a.runner_id > 0) {
    Status r = a.runners.Remove(a.runner_id, cleanup_deadline);
    runner_busy = r.code() == Code::kConflict || r.code() == Code::kInvalidArgument;
    if (!r.ok()) out.detail += "; removing runner " + a.runner_name + " failed: " + r.message();
  }
  bool vm_gone = true;
  if (!a.microvm_id.empty() && runner_busy) {
    vm_gone = false;
    out.detail += "; MicroVM " + a.microvm_id + " left running: its runner is running a job";
  } else if (!a.microvm_id.empty()) {
    Status t = a.vms.Terminate(a.microvm_id, cleanup_deadline);
    vm_gone = t.ok();
    if (vm_gone && a.warm && deps_.pool) deps_.pool->RemoveMember(a.microvm_id).IgnoreError();
    if (!t.ok()) out.detail += "; terminating MicroVM " + a.microvm_id + " failed: " + t.message();
  }
  // The claim goes only once the VM is confirmed gone; otherwise a takeover cleans up later.
  if (!a.token.empty() && vm_gone) {
    Status r = deps_.table.Release(a.claim, a.token);
    if (!r.ok()) out.detail += "; releasing the claim failed: " + r.message();
  }
  if (!vm_gone) a.keep_seat = true;  // the seat names it (NameSeat) and counts it until it ends
}

LaunchOutcome Launcher::Fail(Attempt& a, const Status& failure) {
  const Seam& seam = deps_.seam;
  LaunchOutcome out;
  out.decision = LaunchDecision::kFailed;
  out.retry_after = config_.defer_delay();
  out.detail = failure.ToString();
  Undo(a, out);
  if (a.vm_failed) NoteVmFailure(a.runner_class.label, a.microvm_id, "launch_failed");
  if (failure.code() == Code::kUnauthorized &&
      (failure.error_type() == "AuthFailing" || failure.error_type() == "BadCredentials")) {
    // GitHub refuses the set's credentials: no launch can succeed until the secret is fixed, and
    // the GitHub client logs the outage once. Wait for its next probe; a deferral never
    // dead-letters the job, so it runs once the credentials work again.
    out.decision = LaunchDecision::kDeferred;
    out.retry_after = std::max(out.retry_after, failure.retry_after().value_or(Duration(0)));
    deps_.metrics.AddDeferral("github_auth");
    seam.logger.Debug("launch deferred: GitHub refuses the credentials",
                      {{"job_id", a.intent.job_id}, {"error", out.detail}});
    return out;
  }
  if (IsGitHubRateLimit(failure))
    return DeferForRateLimit(a.intent.job_id, failure, std::move(out));
  seam.logger.Warn(
      "launch failed",
      {{"job_id", a.intent.job_id}, {"runner_name", a.runner_name}, {"error", out.detail}});
  JobRecord record;
  record.repository = a.intent.repository;
  record.job_id = a.intent.job_id;
  record.job_name = a.intent.job_name;
  record.class_label = a.runner_class.label;
  record.path = a.hot ? "hot" : a.warm ? "warm" : "cold";
  record.runner_name = a.runner_name;
  record.times = a.times;
  record.ended_ms = ToUnixMillis(seam.clock.Now());
  record.failure = failure.ToString();
  KeepJobRecord(record);
  return out;
}

}  // namespace mvr::runnerset
