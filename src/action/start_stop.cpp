// StartFlow::Run and the ephemeral start; StopFlow (ephemeral and warm). The warm starts are in
// warm_start.cpp.
#include "action/start_stop.h"

#include <algorithm>
#include <memory>

#include "action/ephemeral_records.h"
#include "action/identity.h"
#include "action/start_parts.h"
#include "action/trust.h"
#include "base/retry.h"
#include "fleet/control_delivery.h"
#include "supervisor/run_payload.h"

namespace mvr::action {

Result<StartResult> StartFlow::Run(const StartCommand& c) {
  TimePoint deadline = deps_.seam.clock.Now() + c.startup_timeout;
  if (!c.warm()) return Ephemeral(c, deadline);
  MVR_RETURN_IF_ERROR(CheckWarmTrust(c.event_name, c.event_json, c.endpoints.repository));
  MVR_RETURN_IF_ERROR(internal::RequireControlKey(deps_));
  if (c.pooled()) return Pooled(c, deadline);
  if (IsServerHandle(c.server)) return WarmResume(c, deadline);
  return WarmNew(c, deadline);
}

// With a state table, the ephemeral VM is recorded for `mvr sweep` (ephemeral_records.h) right
// after its launch (a failure to record ends the start: the VM is terminated).
Status StartFlow::RecordForSweep(internal::StartParts& parts, const StartCommand& c,
                                 const github::Runner& runner, const std::string& microvm_id) {
  if (deps_.pool_store == nullptr || c.state_table.empty()) return Status::Ok();
  // Taken after RunMicrovm answered, so the recorded deadline is not before the platform's.
  EphemeralRecord record = MakeEphemeralRecord(
      c.identity.repository_id, microvm_id, c.endpoints.repository, c.endpoints.region, runner.id,
      runner.name, deps_.seam.clock.Now(), c.ephemeral_max_lifetime_seconds);
  MVR_RETURN_IF_ERROR(deps_.pool_store->Put(EphemeralToItem(record))
                          .Annotate("recording MicroVM " + microvm_id + " in 'state-table'"));
  // The termination TerminateOnFailure added becomes one step that removes the record only once
  // the VM is gone: a VM whose termination failed keeps its record for the sweep.
  parts.cleanup.DropLast();
  parts.cleanup.Add(
      "terminated MicroVM " + microvm_id + " and removed its state-table record",
      [&parts, table = deps_.pool_store, microvm_id,
       key = EphemeralKey(c.identity.repository_id, microvm_id)] {
        MVR_RETURN_IF_ERROR(parts.vms.Terminate(microvm_id, internal::CleanupDeadline(parts.seam)));
        return table->Delete(key);
      });
  return Status::Ok();
}

Result<StartResult> StartFlow::Ephemeral(const StartCommand& c, TimePoint deadline) {
  MVR_ASSIGN_OR_RETURN(std::unique_ptr<internal::StartParts> parts,
                       internal::MakeStartParts(deps_, c));
  auto& [seam, id, runners, vms, cleanup] = *parts;

  MVR_ASSIGN_OR_RETURN(github::JitConfig jit, parts->RegisterRunner(deps_, c, deadline));
  const int64_t runner_id = jit.runner.id;

  Result<std::string> payload =
      supervisor::EncodeRunPayload(supervisor::RunPayload::Ephemeral(jit.encoded_jit_config));
  if (!payload.ok())
    return cleanup.Fail(payload.status().Annotate("building the run-hook payload"));

  // The payload carries this registration's JIT config, so the clientToken names the identity
  // and the runner: a retried RunMicrovm returns the same VM, and a later start with the same
  // identity (a new runner, a new payload) gets a new token instead of a ConflictException.
  Result<aws::RunMicrovmRequest> run = internal::LaunchRequest(
      deps_, c, LaunchClientToken(id, "runner:" + std::to_string(runner_id)), std::move(*payload),
      c.ephemeral_max_lifetime_seconds, deadline);
  if (!run.ok()) return cleanup.Fail(run.status());
  Result<aws::Microvm> vm = vms.Launch(*run, deadline);
  if (!vm.ok()) return cleanup.Fail(vm.status());
  const std::string microvm_id = vm->microvm_id;
  parts->TerminateOnFailure(microvm_id);
  seam.logger.Info("MicroVM launched", {{"microvm_id", microvm_id}, {"label", id.label}});
  if (Status recorded = RecordForSweep(*parts, c, jit.runner, microvm_id); !recorded.ok())
    return cleanup.Fail(recorded);

  vm = vms.WaitRunning(microvm_id, deadline);
  if (!vm.ok()) return cleanup.Fail(vm.status());
  internal::Milestone(deps_, "vm_running");

  Status online = runners.WaitOnline(runner_id, id.label, deadline);
  if (!online.ok()) return cleanup.Fail(online);
  internal::Milestone(deps_, "runner_online");

  cleanup.Forget();
  return internal::Outputs(id.label, jit.runner, *vm);
}

Result<StopResult> StopFlow::Run(const StopCommand& c) {
  if (c.empty()) {
    StopResult r;
    r.outcome = "nothing to stop";
    return r;
  }
  TimePoint deadline = deps_.seam.clock.Now() + c.stop_timeout;
  if (c.server.rfind(kHandlePrefixV2, 0) == 0) return Pooled(c, deadline);
  if (!c.server.empty()) return Warm(c, deadline);
  return Ephemeral(c, deadline);
}

Result<StopResult> StopFlow::Ephemeral(const StopCommand& c, TimePoint deadline) {
  const Seam& seam = deps_.seam;
  fleet::MicrovmLifecycle vms(seam, deps_.microvms);
  MVR_RETURN_IF_ERROR(vms.Terminate(c.microvm_id, deadline));
  if (deps_.pool_store != nullptr && !c.state_table.empty()) {
    // The VM is gone: a record left behind would only be forgotten by the next sweep.
    Status removed = deps_.pool_store->Delete(EphemeralKey(c.repository_id, c.microvm_id));
    if (!removed.ok()) {
      seam.logger.Warn(
          "could not remove the MicroVM's state-table record; the next mvr sweep "
          "removes it",
          {{"microvm_id", c.microvm_id}, {"error", removed.message()}});
    }
  }
  if (c.runner_id > 0) {
    MVR_ASSIGN_OR_RETURN(github::RunnerScope scope, internal::ScopeOf(c.endpoints));
    fleet::RunnerRegistration runners(seam, deps_.github, scope);
    Status removed = runners.Remove(c.runner_id, deadline);
    if (!removed.ok() && removed.code() != Code::kConflict) return removed;
  }
  StopResult r;
  r.microvm_id = c.microvm_id;
  r.outcome = "terminated";
  return r;
}

Result<StopResult> StopFlow::Warm(const StopCommand& c, TimePoint deadline) {
  const Seam& seam = deps_.seam;
  MVR_ASSIGN_OR_RETURN(ServerHandle h, DecodeServerHandle(c.server, internal::ControlKeys(deps_)));
  MVR_RETURN_IF_ERROR(internal::CheckHandleScope(h, c.repository_id, c.endpoints.region));
  MVR_ASSIGN_OR_RETURN(github::RunnerScope scope, internal::ScopeOf(c.endpoints));
  fleet::RunnerRegistration runners(seam, deps_.github, scope);
  fleet::MicrovmLifecycle vms(seam, deps_.microvms);
  StopResult r;
  r.microvm_id = h.microvm_id;

  MVR_RETURN_IF_ERROR(
      internal::RefuseBusyRunner(runners, h.runner_id, h.runner_name, h.microvm_id, deadline));
  // A runner that never took its job would otherwise stay registered.
  MVR_RETURN_IF_ERROR(runners.Remove(h.runner_id, deadline));

  Result<aws::Microvm> vm = vms.Get(h.microvm_id, deadline);
  if (!vm.ok() && vm.status().code() != Code::kNotFound) return vm.status();
  if (!vm.ok() || fleet::Ending(vm->state)) {
    r.outcome = "already gone";
    return r;
  }
  if (vm->state == aws::MicrovmState::kRunning) {
    // A stale handle: its runner is done, but a newer start may have resumed the VM for another
    // job. Only the supervisor knows which runner it serves now.
    MVR_ASSIGN_OR_RETURN(fleet::SupervisorStatus status,
                         internal::AwaitRunnerExit(deps_, vms, *vm, h.runner_id, deadline));
    if (!status.current_request_id.empty() &&
        status.current_request_id != fleet::RunnerRequestId(h.runner_id)) {
      r.outcome = "left running: it serves a newer job than this handle's";
      return r;
    }
  }

  Lifetime life{h.started_at, h.started_at + std::chrono::seconds(h.max_lifetime_seconds),
                h.reuse_deadline};
  if (!life.ReusableAt(seam.clock.Now())) {
    MVR_RETURN_IF_ERROR(vms.Terminate(h.microvm_id, deadline));
    r.outcome = "terminated (at or past its reuse deadline)";
    return r;
  }
  Result<aws::Microvm> suspended = vms.Suspend(h.microvm_id, deadline);
  if (suspended.ok()) {
    r.outcome = "suspended";
    return r;
  }
  if (suspended.status().code() == Code::kNotFound) {
    r.outcome = "already gone";
    return r;
  }
  // A VM that cannot be suspended is not left running: terminate it and say so.
  Status t = vms.Terminate(h.microvm_id, deadline);
  return Status(suspended.status().code(),
                suspended.status().message() +
                    (t.ok() ? "; terminated the MicroVM instead (its cache is lost)"
                            : "; terminating it failed: " + t.message()));
}

}  // namespace mvr::action
