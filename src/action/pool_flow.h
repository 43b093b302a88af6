// Internal to the pooled start and stop: where a request's pool is (the effective server key,
// resolved against the image), the lease policy its inputs give, and PoolMemberOps, which carries
// out the AWS half of a lease decision (suspend and mark READY, or terminate and retire) so that
// a stop, a failing start and on-access reconciliation settle a member the same way.
// Thread-safety: one per command; not shared.
#pragma once

#include <string>
#include <vector>

#include "action/inputs.h"
#include "action/lifetime.h"
#include "action/pool_keys.h"
#include "action/pool_leases.h"
#include "action/start_stop.h"
#include "fleet/microvm_lifecycle.h"
#include "fleet/runner_registration.h"

namespace mvr::action::internal {

struct PoolTarget {
  EffectiveServerKey key;
  std::string partition;
  std::string image_version;  // resolved: the latest ACTIVE one when the input was empty
};

// Normalizes the server name and completes the key from the image: the version (the latest
// ACTIVE one unless given), its CPU architectures and egress connectors. Errors name the input.
// The image reads are retried on throttling and 5xx (a start should not fail on one 429).
Result<PoolTarget> ResolvePool(aws::MicrovmService& microvms, const Seam& seam,
                               const StartCommand& c);

PoolPolicy PolicyFor(const StartCommand& c);
// A stop settles members whose lifetime is already recorded; only the transition timeout matters.
PoolPolicy StopPolicy();

// The Lifetime a member's record gives (its launch time, platform deadline and reuse deadline).
Lifetime LifetimeOf(const MemberRecord& member);

class PoolMemberOps {
 public:
  // `runners` (optional) removes the runner an abandoned lease recorded, in Reconcile.
  PoolMemberOps(const Seam& seam, fleet::MicrovmLifecycle& vms, PoolLeases& leases,
                fleet::RunnerRegistration* runners = nullptr)
      : seam_(seam), vms_(vms), leases_(leases), runners_(runners) {}

  // A stop's second half, after the runner was checked: LEASED -> SUSPENDING, suspend, READY; at
  // or past the reuse deadline (or when suspend fails) DESTROYING, terminate, DEAD. A stale lease
  // fails before any AWS call. `outcome` says what happened.
  Result<std::string> Release(const Lease& lease, TimePoint deadline);
  // Carries out a plan BeginRelease gave (the second half of Release).
  Result<std::string> Carry(const Lease& lease, const ReleasePlan& plan, TimePoint deadline);
  // Hands a leased member back after a failed start, by what AWS reports now: suspended (or
  // never touched) -> READY without a lifecycle call; running -> Release; gone -> DEAD; anything
  // else -> terminated and DEAD.
  Status GiveBack(const Lease& lease, const std::string& microvm_id, TimePoint deadline);
  // Any owned state -> DESTROYING, terminate the VM (if there is one), DEAD.
  Status Destroy(const Lease& lease, const std::string& microvm_id, TimePoint deadline);
  // The duties an Acquire left: members it took into DESTROYING are terminated and retired,
  // after the runner their last owner recorded is removed (a runner GitHub reports busy keeps
  // its VM: the member is left DESTROYING, for a later start once the job is over);
  // members it took over in SUSPENDING are marked READY when their VM is SUSPENDED (suspended
  // first if it is RUNNING), retired when it is gone, destroyed otherwise. Best effort: a failure
  // is logged (the next access retries it) and never fails the start. Returns how many members
  // it settled (READY again, or DEAD so they no longer count against a capacity).
  int Reconcile(const std::string& partition, const Acquisition& acquisition, TimePoint deadline);

 private:
  Seam seam_;
  fleet::MicrovmLifecycle& vms_;
  PoolLeases& leases_;
  fleet::RunnerRegistration* runners_;
};

}  // namespace mvr::action::internal
