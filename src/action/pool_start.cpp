// The pooled warm start (state-table + a server name): reconcile the pool partition, lease a
// READY member or reserve a new one within this request's capacity, launch (clientToken from the
// member and its reservation) or resume it, then register, deliver and wait as every warm start.
// A failure after the lease exists gives the member back as AWS reports it (pool_flow.h).
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "action/pool_flow.h"
#include "action/start_parts.h"
#include "action/start_stop.h"
#include "fleet/control_delivery.h"
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

// One pooled start's steps, over the parts and the pool partition it resolved: Claim a member
// (leased READY, or reserved and launched), then Ready it for this job's runner.
class PooledStart {
 public:
  PooledStart(const ActionDeps& deps, const StartCommand& c, TimePoint deadline,
              internal::StartParts& parts, internal::PoolTarget target)
      : deps_(deps),
        c_(c),
        deadline_(deadline),
        parts_(parts),
        target_(std::move(target)),
        leases_(*deps.pool_store, parts.seam.clock, parts.seam.random, internal::PolicyFor(c)),
        ops_(parts.seam, parts.vms, leases_, &parts.runners) {}

  // Acquires until a round gives a member this start can use, reconciling the partition each
  // round; Conflict after kPoolRounds members in a row were gone or unusable.
  Result<Claimed> Claim();
  // Registers the job's runner (once per start), records it on the member, resumes (or waits
  // for) the VM and delivers the runner; a failure gives the member back (and removes the
  // runner). Nothing: the member's supervisor refused every control nonce this step can derive
  // (it was launched under a rotated-out key): it was destroyed, never given back as READY, and
  // the runner is kept for the next member. The outputs carry the pool handle.
  Result<std::optional<StartResult>> Ready(const Claimed& claimed);
  // The start's failure once no member took the runner: the runner is removed.
  Status Fail(const Status& failure) { return parts_.cleanup.Fail(failure); }

 private:
  PoolRequest Request() const;
  // Launches the member a reservation (or a relaunch) names. Nothing: the member's token named a
  // VM that has ended or is too old for a job, and it was settled; acquire again.
  Result<std::optional<Claimed>> Launch(const Acquisition& acq);
  // Looks at the VM of a member that has one. Nothing: it was unusable and was retired or
  // destroyed; acquire again.
  Result<std::optional<Claimed>> Inspect(const Acquisition& acq);
  std::string Handle(const Claimed& claimed, const github::Runner& runner) const;

  const ActionDeps& deps_;
  const StartCommand& c_;
  const TimePoint deadline_;
  internal::StartParts& parts_;
  const internal::PoolTarget target_;
  std::optional<github::JitConfig> jit_;  // the job's runner, once registered
  PoolLeases leases_;
  internal::PoolMemberOps ops_;
};

PoolRequest PooledStart::Request() const {
  PoolRequest request;
  request.partition = target_.partition;
  request.server_name = target_.key.server_name;
  request.image_id = c_.image_id;
  request.image_version = target_.image_version;
  request.region = c_.endpoints.region;
  request.owner = parts_.id.digest_hex;
  request.capacity = c_.server_capacity;
  return request;
}

Result<Claimed> PooledStart::Claim() {
  const PoolRequest request = Request();
  const Seam& seam = parts_.seam;
  for (int round = 0; round < kPoolRounds; ++round) {
    MVR_ASSIGN_OR_RETURN(Acquisition acq, leases_.Acquire(request));
    const int reconciled = ops_.Reconcile(target_.partition, acq, CleanupDeadline(seam));
    if (acq.kind == Kind::kRefused) {
      // A member just became READY, or DEAD and no longer counts: acquire again.
      if (reconciled > 0) continue;
      return acq.refusal;
    }
    const bool launch = acq.kind == Kind::kReserved || acq.kind == Kind::kRelaunch ||
                        (acq.kind == Kind::kExisting && acq.member.state == MemberState::kCreating);
    MVR_ASSIGN_OR_RETURN(std::optional<Claimed> claimed, launch ? Launch(acq) : Inspect(acq));
    if (claimed) return *std::move(claimed);
  }
  return Conflict("pool '" + target_.key.server_name + "': " + std::to_string(kPoolRounds) +
                  " members in a row were gone or unusable; retry the start");
}

Result<std::optional<Claimed>> PooledStart::Launch(const Acquisition& acq) {
  const Seam& seam = parts_.seam;
  const Lease& lease = acq.lease;
  // Recorded before RunMicrovm: without a service startedAt the member expires early.
  const TimePoint launch_time = seam.clock.Now();
  // The member's token is fixed for its life: so is its nonce, derived again at delivery.
  const std::string token = MemberLaunchToken(target_.partition, acq.member);
  MVR_ASSIGN_OR_RETURN(Secret nonce, internal::ControlNonce(deps_, c_, token));
  MVR_ASSIGN_OR_RETURN(std::string payload,
                       supervisor::EncodeRunPayload(supervisor::RunPayload::Warm(nonce)));
  Result<aws::RunMicrovmRequest> run = internal::LaunchRequest(
      deps_, c_, token, std::move(payload), c_.lifetime.max_lifetime_seconds, deadline_);
  if (run.ok()) run->image_version = target_.image_version;
  Result<aws::Microvm> vm =
      run.ok() ? parts_.vms.Launch(*run, deadline_) : Result<aws::Microvm>(run.status());
  if (!vm.ok()) {
    Status retired = leases_.Retire(lease);
    return vm.status().Annotate(retired.ok() ? "its pool reservation was released"
                                             : "releasing its pool reservation failed (" +
                                                   retired.message() + ")");
  }
  if (Observe(vm) == VmObservation::kTerminated) {
    // This reservation's token names a VM that has ended: retire it and reserve anew.
    MVR_RETURN_IF_ERROR(leases_.Retire(lease));
    return std::optional<Claimed>();
  }
  Result<MemberRecord> recorded =
      leases_.RecordLaunch(lease, vm->microvm_id, vm->started_at.value_or(launch_time),
                           c_.lifetime.reuse_margin_seconds);
  if (!recorded.ok()) {
    // Another start took the reservation over (ours had expired): the VM is its now.
    return recorded.status().Annotate("recording the launch of MicroVM " + vm->microvm_id);
  }
  if (!LifetimeOf(*recorded).ReusableAt(seam.clock.Now())) {
    // The token found a VM an abandoned start launched long ago: too old for a job.
    MVR_RETURN_IF_ERROR(ops_.Destroy(lease, vm->microvm_id, CleanupDeadline(seam)));
    return std::optional<Claimed>();
  }
  seam.logger.Info("pool member launched",
                   {{"member_id", lease.member_id}, {"microvm_id", vm->microvm_id}});
  return std::optional<Claimed>(Claimed{lease, *recorded, *vm, true, acq.kind == Kind::kExisting});
}

Result<std::optional<Claimed>> PooledStart::Inspect(const Acquisition& acq) {
  const Seam& seam = parts_.seam;
  const Lease& lease = acq.lease;
  // A member with a VM: is it still there, and usable?
  Result<aws::Microvm> seen = parts_.vms.Get(acq.member.microvm_id, deadline_);
  if (!seen.ok() && seen.status().code() != Code::kNotFound) {
    Status back = ops_.GiveBack(lease, acq.member.microvm_id, CleanupDeadline(seam));
    return seen.status().Annotate(back.ok() ? "the pool member was given back"
                                            : "giving the pool member back failed (" +
                                                  back.message() + ")");
  }
  VmObservation observed = Observe(seen);
  VmDecision decision = DecideForVm(acq.member, observed, seam.clock.Now());
  // This identity's own earlier attempt may have got its VM running (or booting) already.
  const bool usable = observed == VmObservation::kSuspended ||
                      (acq.kind == Kind::kExisting && (observed == VmObservation::kRunning ||
                                                       seen->state == aws::MicrovmState::kPending));
  if (decision == VmDecision::kUse && usable) {
    return std::optional<Claimed>(
        Claimed{lease, acq.member, *seen, false, acq.kind == Kind::kExisting});
  }
  Status settled = decision == VmDecision::kRetire
                       ? leases_.Retire(lease)
                       : ops_.Destroy(lease, acq.member.microvm_id, CleanupDeadline(seam));
  seam.logger.Info("pool member replaced", {{"member_id", lease.member_id},
                                            {"microvm_id", acq.member.microvm_id},
                                            {"settled", settled.ok()}});
  MVR_RETURN_IF_ERROR(settled);
  return std::optional<Claimed>();
}

Result<std::optional<StartResult>> PooledStart::Ready(const Claimed& claimed) {
  internal::Cleanup& cleanup = parts_.cleanup;
  const Lease lease = claimed.lease;
  const std::string microvm_id = claimed.vm.microvm_id;
  auto give_back = [&ops = ops_, &p = parts_, lease, microvm_id] {
    return ops.GiveBack(lease, microvm_id, CleanupDeadline(p.seam));
  };
  // Register before any lifecycle call on a cached VM: a GitHub failure leaves it untouched.
  if (!jit_) {
    Result<github::JitConfig> jit = parts_.RegisterRunner(deps_, c_, deadline_);
    if (!jit.ok()) {
      // This identity's own lease (a retry): if its earlier start won, the registration fails
      // because that start's runner is online, and the member must stay with it.
      if (!claimed.existing)
        cleanup.Add("gave pool member " + lease.member_id + " back", give_back);
      return cleanup.Fail(jit.status());
    }
    jit_ = *std::move(jit);
  }
  const github::JitConfig& jit = *jit_;
  // Named on the member before the runner can start: if this start dies from here on, the start
  // that reconciles its abandoned lease removes the runner (or, busy, leaves its VM alone).
  if (Result<MemberRecord> named = leases_.RecordRunner(lease, jit.runner.id); !named.ok()) {
    if (!claimed.existing) cleanup.Add("gave pool member " + lease.member_id + " back", give_back);
    return cleanup.Fail(named.status().Annotate("recording runner " + jit.runner.name));
  }
  // The last step of the cleanup, so that a refused nonce can trade it for a destroy.
  cleanup.Add("gave pool member " + lease.member_id + " back", give_back);
  Result<aws::Microvm> vm = claimed.vm.state == aws::MicrovmState::kSuspended
                                ? parts_.vms.Resume(microvm_id, deadline_)
                                : parts_.vms.WaitRunning(microvm_id, deadline_);
  if (!vm.ok()) return cleanup.Fail(vm.status());
  internal::Milestone(deps_, "vm_running");
  Result<std::vector<Secret>> nonces =
      internal::ControlNonces(deps_, c_, MemberLaunchToken(target_.partition, claimed.member));
  if (!nonces.ok()) return cleanup.Fail(nonces.status());
  Status ready = internal::DeliverAndAwait(deps_, parts_.vms, parts_.runners, *vm, jit, *nonces,
                                           parts_.id.label, deadline_);
  if (ready.error_type() == fleet::kWrongNonce) {
    // Launched under a key this step no longer holds: no later start can deliver to it either.
    // Handing it back READY would jam the pool; it is destroyed and replaced instead.
    cleanup.DropLast();
    Status destroyed = ops_.Destroy(lease, microvm_id, CleanupDeadline(parts_.seam));
    parts_.seam.logger.Warn("pool member refused the control nonce; retired",
                            {{"member_id", lease.member_id},
                             {"microvm_id", microvm_id},
                             {"destroyed", destroyed.ok()}});
    if (!destroyed.ok()) return cleanup.Fail(ready.Annotate(destroyed.message()));
    return std::optional<StartResult>();
  }
  if (!ready.ok()) return cleanup.Fail(ready);
  cleanup.Forget();

  StartResult out = internal::Outputs(parts_.id.label, jit.runner, *vm);
  out.server = Handle(claimed, jit.runner);
  out.warm_hit = !claimed.launched;
  out.lifetime = LifetimeOf(claimed.member);
  return std::optional<StartResult>(std::move(out));
}

std::string PooledStart::Handle(const Claimed& claimed, const github::Runner& runner) const {
  PoolHandle h;
  h.repository_id = target_.key.repository_id;
  h.server_key_hash = ServerKeyHash(target_.key);
  h.server_name = target_.key.server_name;
  h.region = c_.endpoints.region;
  h.member_id = claimed.lease.member_id;
  h.lease_id = claimed.lease.lease_id;
  h.generation = claimed.lease.generation;
  h.microvm_id = claimed.vm.microvm_id;
  h.reuse_deadline = LifetimeOf(claimed.member).reuse_deadline;
  h.runner_id = runner.id;
  h.runner_name = runner.name;
  return EncodePoolHandle(h);
}

}  // namespace

Result<StartResult> StartFlow::Pooled(const StartCommand& c, TimePoint deadline) {
  if (deps_.pool_store == nullptr) {
    return InvalidArgument("input 'state-table' was given but no state store is open");
  }
  MVR_ASSIGN_OR_RETURN(std::unique_ptr<internal::StartParts> parts,
                       internal::MakeStartParts(deps_, c));
  MVR_ASSIGN_OR_RETURN(internal::PoolTarget target,
                       internal::ResolvePool(deps_.microvms, deps_.seam, c));
  PooledStart start(deps_, c, deadline, *parts, std::move(target));
  // A member that refuses the nonce (launched under a rotated-out key) is destroyed, and the
  // same runner goes to the next member.
  for (int refused = 0; refused < kPoolRounds; ++refused) {
    Result<Claimed> claimed = start.Claim();
    if (!claimed.ok()) return refused == 0 ? claimed.status() : start.Fail(claimed.status());
    MVR_ASSIGN_OR_RETURN(std::optional<StartResult> out, start.Ready(*claimed));
    if (out) return *std::move(out);
  }
  return start.Fail(Conflict("pool '" + c.server + "': " + std::to_string(kPoolRounds) +
                             " members in a row refused the control nonce (launched under another "
                             "MVR_CONTROL_KEY); each was destroyed: retry the start"));
}

}  // namespace mvr::action
