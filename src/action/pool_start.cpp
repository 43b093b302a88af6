// The pooled warm start (state-table + a server name): reconcile the pool partition, lease a
// READY member or reserve a new one within this request's capacity, launch (clientToken from the
// member and its reservation) or resume it, then register, deliver and wait as every warm start.
// A failure after the lease exists gives the member back as AWS reports it (pool_flow.h).
#include <memory>
#include <optional>

#include "action/pool_flow.h"
#include "action/start_parts.h"
#include "action/start_stop.h"
#include "supervisor/run_payload.h"

namespace mvr::action {
namespace {

using internal::CleanupDeadline;
using internal::LifetimeOf;
using Kind = Acquisition::Kind;

// Acquisitions one start may go through when the members it is given turn out gone or expired.
constexpr int kPoolRounds = 8;

VmObservation Observe(const Result<aws::Microvm>& vm) {
  if (!vm.ok()) return VmObservation::kMissing;
  switch (vm->state) {
    case aws::MicrovmState::kTerminating:
    case aws::MicrovmState::kTerminated:
      return VmObservation::kTerminated;
    case aws::MicrovmState::kRunning:
      return VmObservation::kRunning;
    case aws::MicrovmState::kSuspended:
      return VmObservation::kSuspended;
    case aws::MicrovmState::kUnknown:
      return VmObservation::kFailed;
    default:
      return VmObservation::kTransitioning;
  }
}

// The member a round settled on, and its VM as last seen.
struct Claimed {
  Lease lease;
  MemberRecord member;
  aws::Microvm vm;
  bool launched = false;
  bool existing = false;  // this identity's lease from an earlier attempt
};

}  // namespace

Result<StartResult> StartFlow::Pooled(const StartCommand& c, TimePoint deadline) {
  if (deps_.pool_store == nullptr) {
    return InvalidArgument("input 'state-table' was given but no state store is open");
  }
  MVR_ASSIGN_OR_RETURN(std::unique_ptr<internal::StartParts> parts,
                       internal::MakeStartParts(deps_, c));
  auto& [seam, id, runners, vms, cleanup] = *parts;
  MVR_ASSIGN_OR_RETURN(internal::PoolTarget target,
                       internal::ResolvePool(deps_.microvms, deps_.seam, c));
  PoolLeases leases(*deps_.pool_store, seam.clock, seam.random, internal::PolicyFor(c));
  internal::PoolMemberOps ops(seam, vms, leases, &runners);
  PoolRequest request;
  request.partition = target.partition;
  request.server_name = target.key.server_name;
  request.image_id = c.image_id;
  request.image_version = target.image_version;
  request.region = c.endpoints.region;
  request.owner = id.digest_hex;
  request.capacity = c.server_capacity;

  std::optional<Claimed> claimed;
  for (int round = 0; round < kPoolRounds && !claimed; ++round) {
    MVR_ASSIGN_OR_RETURN(Acquisition acq, leases.Acquire(request));
    const int reconciled = ops.Reconcile(target.partition, acq, CleanupDeadline(seam));
    if (acq.kind == Kind::kRefused) {
      // A member just became READY, or DEAD and no longer counts: acquire again.
      if (reconciled > 0) continue;
      return acq.refusal;
    }
    const Lease lease = acq.lease;
    const bool launch = acq.kind == Kind::kReserved || acq.kind == Kind::kRelaunch ||
                        (acq.kind == Kind::kExisting && acq.member.state == MemberState::kCreating);
    if (launch) {
      // Recorded before RunMicrovm: without a service startedAt the member expires early.
      const TimePoint launch_time = seam.clock.Now();
      // The member's token is fixed for its life: so is its nonce, derived again at delivery.
      const std::string token = MemberLaunchToken(target.partition, acq.member);
      MVR_ASSIGN_OR_RETURN(Secret nonce, internal::ControlNonce(deps_, token));
      MVR_ASSIGN_OR_RETURN(std::string payload,
                           supervisor::EncodeRunPayload(supervisor::RunPayload::Warm(nonce)));
      aws::RunMicrovmRequest run =
          internal::RunRequest(c, token, std::move(payload), c.lifetime.max_lifetime_seconds);
      run.image_version = target.image_version;
      Result<aws::Microvm> vm = vms.Launch(run, deadline);
      if (!vm.ok()) {
        Status retired = leases.Retire(lease);
        return vm.status().Annotate(retired.ok() ? "its pool reservation was released"
                                                 : "releasing its pool reservation failed (" +
                                                       retired.message() + ")");
      }
      if (Observe(vm) == VmObservation::kTerminated) {
        // This reservation's token names a VM that has ended: retire it and reserve anew.
        MVR_RETURN_IF_ERROR(leases.Retire(lease));
        continue;
      }
      Result<MemberRecord> recorded =
          leases.RecordLaunch(lease, vm->microvm_id, vm->started_at.value_or(launch_time),
                              c.lifetime.reuse_margin_seconds);
      if (!recorded.ok()) {
        // Another start took the reservation over (ours had expired): the VM is its now.
        return recorded.status().Annotate("recording the launch of MicroVM " + vm->microvm_id);
      }
      if (!LifetimeOf(*recorded).ReusableAt(seam.clock.Now())) {
        // The token found a VM an abandoned start launched long ago: too old for a job.
        MVR_RETURN_IF_ERROR(ops.Destroy(lease, vm->microvm_id, CleanupDeadline(seam)));
        continue;
      }
      seam.logger.Info("pool member launched",
                       {{"member_id", lease.member_id}, {"microvm_id", vm->microvm_id}});
      claimed = Claimed{lease, *recorded, *vm, true, acq.kind == Kind::kExisting};
      break;
    }
    // A member with a VM: is it still there, and usable?
    Result<aws::Microvm> seen = vms.Get(acq.member.microvm_id, deadline);
    if (!seen.ok() && seen.status().code() != Code::kNotFound) {
      Status back = ops.GiveBack(lease, acq.member.microvm_id, CleanupDeadline(seam));
      return seen.status().Annotate(back.ok() ? "the pool member was given back"
                                              : "giving the pool member back failed (" +
                                                    back.message() + ")");
    }
    VmObservation observed = Observe(seen);
    VmDecision decision = DecideForVm(acq.member, observed, seam.clock.Now());
    // This identity's own earlier attempt may have got its VM running (or booting) already.
    const bool usable =
        observed == VmObservation::kSuspended ||
        (acq.kind == Kind::kExisting &&
         (observed == VmObservation::kRunning || seen->state == aws::MicrovmState::kPending));
    if (decision == VmDecision::kUse && usable) {
      claimed = Claimed{lease, acq.member, *seen, false, acq.kind == Kind::kExisting};
      break;
    }
    Status settled = decision == VmDecision::kRetire
                         ? leases.Retire(lease)
                         : ops.Destroy(lease, acq.member.microvm_id, CleanupDeadline(seam));
    seam.logger.Info("pool member replaced", {{"member_id", lease.member_id},
                                              {"microvm_id", acq.member.microvm_id},
                                              {"settled", settled.ok()}});
    MVR_RETURN_IF_ERROR(settled);
  }
  if (!claimed) {
    return Conflict("pool '" + target.key.server_name + "': " + std::to_string(kPoolRounds) +
                    " members in a row were gone or unusable; retry the start");
  }

  const Lease lease = claimed->lease;
  const std::string microvm_id = claimed->vm.microvm_id;
  auto give_back = [&ops, &p = *parts, lease, microvm_id] {
    return ops.GiveBack(lease, microvm_id, CleanupDeadline(p.seam));
  };
  // This identity's own lease (a retry): if its earlier start won, the registration below fails
  // because that start's runner is online, and the member must stay with it.
  if (!claimed->existing) cleanup.Add("gave pool member " + lease.member_id + " back", give_back);
  // Register before any lifecycle call on a cached VM: a GitHub failure leaves it untouched.
  Result<github::JitConfig> jit = parts->RegisterRunner(deps_, c, deadline);
  if (!jit.ok()) return cleanup.Fail(jit.status());
  // Named on the member before the runner can start: if this start dies from here on, the start
  // that reconciles its abandoned lease removes the runner (or, busy, leaves its VM alone).
  if (Result<MemberRecord> named = leases.RecordRunner(lease, jit->runner.id); !named.ok()) {
    return cleanup.Fail(named.status().Annotate("recording runner " + jit->runner.name));
  }
  if (claimed->existing) {
    cleanup.Add("gave pool member " + lease.member_id + " back", give_back);
  }
  Result<aws::Microvm> vm = claimed->vm.state == aws::MicrovmState::kSuspended
                                ? vms.Resume(microvm_id, deadline)
                                : vms.WaitRunning(microvm_id, deadline);
  if (!vm.ok()) return cleanup.Fail(vm.status());
  internal::Milestone(deps_, "vm_running");
  Result<Secret> nonce =
      internal::ControlNonce(deps_, MemberLaunchToken(target.partition, claimed->member));
  if (!nonce.ok()) return cleanup.Fail(nonce.status());
  Status ready =
      internal::DeliverAndAwait(deps_, vms, runners, *vm, *jit, *nonce, id.label, deadline);
  if (!ready.ok()) return cleanup.Fail(ready);
  cleanup.Forget();

  const Lifetime life = internal::LifetimeOf(claimed->member);
  PoolHandle h;
  h.repository_id = target.key.repository_id;
  h.server_key_hash = ServerKeyHash(target.key);
  h.server_name = target.key.server_name;
  h.region = c.endpoints.region;
  h.member_id = lease.member_id;
  h.lease_id = lease.lease_id;
  h.generation = lease.generation;
  h.microvm_id = microvm_id;
  h.reuse_deadline = life.reuse_deadline;
  h.runner_id = jit->runner.id;
  h.runner_name = jit->runner.name;
  StartResult out = internal::Outputs(id.label, jit->runner, *vm);
  out.server = EncodePoolHandle(h);
  out.warm_hit = !claimed->launched;
  out.lifetime = life;
  return out;
}

}  // namespace mvr::action
