// The pooled warm stop (an lmvm2_ handle): check the runner, then the fencing write LEASED ->
// SUSPENDING (or DESTROYING at or after the reuse deadline) on the handle's exact lease id and
// generation; only when it holds are the runner removed and the VM suspended (READY) or
// terminated (DEAD). A stale handle fails the write and makes no AWS lifecycle call.
#include "action/pool_flow.h"
#include "action/start_parts.h"
#include "action/start_stop.h"

namespace mvr::action {

Result<StopResult> StopFlow::Pooled(const StopCommand& c, TimePoint deadline) {
  const Seam& seam = deps_.seam;
  if (deps_.pool_store == nullptr) {
    return InvalidArgument(
        "the server handle is a server pool lease (lmvm2_): give 'state-table', the same one its "
        "start used");
  }
  MVR_ASSIGN_OR_RETURN(PoolHandle h, DecodePoolHandle(c.server));
  MVR_ASSIGN_OR_RETURN(Lease lease, LeaseFromHandle(h, c.repository_id, c.endpoints.region));
  MVR_ASSIGN_OR_RETURN(github::RunnerScope scope, internal::ScopeOf(c.endpoints));
  fleet::RunnerRegistration runners(seam, deps_.github, scope);
  fleet::MicrovmLifecycle vms(seam, deps_.microvms);
  PoolLeases leases(*deps_.pool_store, seam.clock, seam.random, internal::StopPolicy());
  internal::PoolMemberOps ops(seam, vms, leases);
  StopResult r;
  r.microvm_id = h.microvm_id;

  MVR_RETURN_IF_ERROR(
      internal::RefuseBusyRunner(runners, h.runner_id, h.runner_name, h.microvm_id, deadline));
  // The fence: nothing below happens unless this handle's lease still owns the member.
  MVR_ASSIGN_OR_RETURN(ReleasePlan plan, leases.BeginRelease(lease));
  // A runner that never took its job would otherwise stay registered.
  MVR_RETURN_IF_ERROR(runners.Remove(h.runner_id, deadline));
  if (plan.action == ReleasePlan::Action::kSuspend) {
    Result<aws::Microvm> vm = vms.Get(h.microvm_id, deadline);
    if (vm.ok() && vm->state == aws::MicrovmState::kRunning) {
      // Our runner's process may still be up; the supervisor refuses /suspend until it exits.
      // This lease owns the VM, so no newer job can be on it.
      Result<fleet::SupervisorStatus> status =
          internal::AwaitRunnerExit(deps_, vms, *vm, h.runner_id, deadline);
      if (!status.ok()) {
        seam.logger.Warn("could not read the supervisor's status before suspending",
                         {{"microvm_id", h.microvm_id}, {"error", status.status().message()}});
      }
    }
  }
  MVR_ASSIGN_OR_RETURN(r.outcome, ops.Carry(lease, plan, deadline));
  return r;
}

}  // namespace mvr::action
